package workspace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/spool"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// maxRecordBytes bounds what is read of a record of texts: its last 16,000
// texts or so. Past it, the oldest are no longer read (an approval is
// asked again; a text the user stated is labelled a contributor's).
const maxRecordBytes = 1 << 20

// textRecord is a record of texts the user vouched for, in the spool folder
// of the user's memory folder, which no repository can write: the SHA-256 of
// each text, one per line in hexadecimal, appended. It is read again when
// the file's size or modification time changes (another process added one).
type textRecord struct {
	path string // "" without a user's memory folder: it holds nothing
	what string // what a line records, for errors: "the approval"
	// prepare, when set, makes the folder the record is kept in before a
	// text is added (see Workspace.userRecord).
	prepare func() error
	mu      sync.Mutex
	size    int64
	mod     time.Time
	read    bool
	set     map[[32]byte]bool
}

// userRecord returns the record of texts name in the spool folder of the
// user's memory folder, which is made with the capture key — in a
// workspace opened with Options.DeferCreate, by the first text added;
// without a user's memory folder, or with a capture key that cannot be
// had, the record holds nothing and records nothing.
func (w *Workspace) userRecord(name, what string) *textRecord {
	r := &textRecord{what: what}
	_, err := w.existingKey()
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		r.path = filepath.Join(w.store.Dir(memcore.ScopeUser), spool.DirName, name)
	}
	if err != nil {
		r.prepare = func() error { _, err := w.captureKey(); return err }
	}
	return r
}

// has reports whether the record holds text. A record that cannot be read
// holds nothing.
func (a *textRecord) has(text string) bool {
	if a.path == "" {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reload()
	return a.set[textSum(text)]
}

// reload reads the record when it changed since it was last read.
func (a *textRecord) reload() {
	info, err := os.Lstat(a.path)
	if err != nil || !info.Mode().IsRegular() {
		a.set, a.read = nil, false
		return
	}
	if a.read && info.Size() == a.size && info.ModTime().Equal(a.mod) {
		return
	}
	a.set, a.read, a.size, a.mod = nil, true, info.Size(), info.ModTime()
	f, err := atomicfile.Open(a.path, os.O_RDONLY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	// The newest texts are at the end: a record past the bound is read from
	// the first whole line of its last maxRecordBytes.
	cut := info.Size() > maxRecordBytes
	if cut {
		if _, err := f.Seek(info.Size()-maxRecordBytes, io.SeekStart); err != nil {
			return
		}
	}
	a.set = make(map[[32]byte]bool)
	sc := bufio.NewScanner(io.LimitReader(f, maxRecordBytes))
	if cut {
		sc.Scan() // the rest of a line cut in two
	}
	for sc.Scan() {
		var sum [32]byte
		line := bytes.TrimSpace(sc.Bytes())
		if n, err := hex.Decode(sum[:], line); err == nil && n == len(sum) && len(line) == 2*len(sum) {
			a.set[sum] = true
		}
	}
}

// add records text: one line appended in one write, so that texts
// recorded at once are all kept.
func (a *textRecord) add(text string) error {
	if a.path == "" {
		return fmt.Errorf("there is no user's memory folder to record %s in; set HOME or pass --user-dir", a.what)
	}
	if a.prepare != nil {
		if err := a.prepare(); err != nil {
			return fmt.Errorf("recording %s: %w", a.what, err)
		}
	}
	sum := textSum(text)
	f, err := atomicfile.Open(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("recording %s: %w", a.what, err)
	}
	_, err = f.WriteString(hex.EncodeToString(sum[:]) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("recording %s in %s: %w", a.what, a.path, err)
	}
	return nil
}

// textSum is the SHA-256 of text with surrounding white space trimmed.
func textSum(text string) [32]byte { return sha256.Sum256([]byte(strings.TrimSpace(text))) }
