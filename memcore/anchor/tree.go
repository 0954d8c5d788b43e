package anchor

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// The reasons a file of the tree is not read.
var (
	// errLink: a folder on the way to the file is a symbolic link, which
	// is never followed (atomicfile.Open refuses a link in the file's own
	// place).
	errLink = errors.New("reached through a symbolic link, which is never followed")
	// errTooLarge: the file is larger than Config.MaxFileBytes.
	errTooLarge = errors.New("larger than the size read")
)

// BlobID returns the git blob id of content: the hexadecimal SHA-1 of
// "blob <size>\x00" followed by content, which is what git stores the file
// under in a repository using SHA-1 object names (the default).
func BlobID(content []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// fsPath is the file system path of rel, a repository-relative slash path.
func (c *Checker) fsPath(rel string) string {
	return filepath.Join(c.cfg.Root, filepath.FromSlash(rel))
}

// call is one public call of a Checker: it remembers what it learnt of
// each path, so that the anchors of a memory that share a path, a folder
// or a file cost one stat of it.
type call struct {
	*Checker
	ctx   context.Context
	stats map[string]statEntry
}

type statEntry struct {
	info fs.FileInfo
	err  error
}

// begin starts a call.
func (c *Checker) begin(ctx context.Context) *call {
	return &call{Checker: c, ctx: ctx, stats: map[string]statEntry{}}
}

// lstat describes rel itself (a link is not followed), once per call.
func (k *call) lstat(rel string) (fs.FileInfo, error) {
	if e, ok := k.stats[rel]; ok {
		return e.info, e.err
	}
	info, err := os.Lstat(k.fsPath(rel))
	k.stats[rel] = statEntry{info, err}
	return info, err
}

// inside reports whether every folder between the root and rel is a real
// folder, not a symbolic link: a committed link could lead anywhere.
func (c *Checker) inside(rel string) bool {
	dir := c.cfg.Root
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, p)
		info, err := os.Lstat(dir)
		if err != nil || !info.IsDir() {
			return false
		}
	}
	return true
}

// readFile returns the content of the regular file rel, opened without
// following a link or waiting on a FIFO (atomicfile.Open), with what the
// open file says of itself; errTooLarge beyond Config.MaxFileBytes.
func (c *Checker) readFile(rel string) ([]byte, fs.FileInfo, error) {
	if !c.inside(rel) {
		return nil, nil, fmt.Errorf("%s: %w", rel, errLink)
	}
	c.reads.Add(1)
	f, err := atomicfile.Open(c.fsPath(rel), os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if info.Size() > c.cfg.MaxFileBytes {
		return nil, info, fmt.Errorf("%s: %w", rel, errTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(f, c.cfg.MaxFileBytes+1))
	if err != nil {
		return nil, info, err
	}
	if int64(len(data)) > c.cfg.MaxFileBytes {
		return nil, info, fmt.Errorf("%s: %w", rel, errTooLarge)
	}
	return data, info, nil
}

// skipDir reports whether a walk of the tree leaves out the folder name:
// hidden folders (.git, .forge, …) and the usual folders of other people's
// code.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor"
}

// walk lists the regular files of the tree, slash-separated and in
// lexical order, at most Config.MaxFiles of them, without following links
// or entering the folders skipDir names. It stops early when ctx ends.
func (c *Checker) walk(ctx context.Context) ([]string, error) {
	var files []string
	root := c.cfg.Root
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable folder is left out
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return ctx.Err()
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		if len(files) >= c.cfg.MaxFiles {
			return fs.SkipAll
		}
		return nil
	})
	return files, err
}
