package workspace

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/forgemem/forgemem/memcore"
)

// folderState is a fingerprint of the memory files of both scope folders:
// each memory file's name, size and modification time. It
// changes whenever a memory file is added, removed or rewritten — by this
// process, another session's capture, a `forgemem remember` in a terminal
// or a person's editor — and costs one folder read and no file read, so
// that a long-lived caller (the MCP server) can check it before every
// recall and search and rebuild its index only when something changed.
type folderState [sha256.Size]byte

// folderState returns the folders' fingerprint now; ok is false when a
// folder could not be read (the caller then rebuilds, as it would
// without the check).
func (w *Workspace) folderState() (st folderState, ok bool) {
	h := sha256.New()
	var n [8]byte
	put := func(s string, a, b int64) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
		binary.LittleEndian.PutUint64(n[:], uint64(a))
		h.Write(n[:])
		binary.LittleEndian.PutUint64(n[:], uint64(b))
		h.Write(n[:])
	}
	for _, sc := range memcore.Scopes() {
		dir := w.store.Dir(sc)
		if dir == "" {
			continue
		}
		put(dir, 0, 0)
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			put("missing", 0, 0)
			continue
		}
		if err != nil {
			return st, false
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			fi, err := e.Info()
			if err != nil { // removed since the folder was read
				put("gone:"+e.Name(), 0, 0)
				continue
			}
			put(e.Name(), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	h.Sum(st[:0])
	return st, true
}
