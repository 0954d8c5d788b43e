package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Pending is a temporary file that holds its data, fsynced, and waits to
// be published with [Pending.Link] or [Pending.Rename], or removed with
// [Pending.Discard]. It is not safe for concurrent use.
type Pending struct {
	name string
	done bool // published or discarded: the temporary name is gone
}

// Prepare writes data to a new temporary file in dir, named by pattern as
// [os.CreateTemp] names files (the last "*" is replaced by a random
// string; start it with a dot to keep the file hidden), with permissions
// exactly perm (the umask does not apply), fsyncs and closes it. On error
// no temporary file is left.
func Prepare(dir, pattern string, data []byte, perm fs.FileMode) (*Pending, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, fmt.Errorf("atomicfile: %w", err)
	}
	name := f.Name()
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return nil, fmt.Errorf("atomicfile: write %s: %w", name, err)
	}
	return &Pending{name: name}, nil
}

// Name is the path of the temporary file.
func (p *Pending) Name() string { return p.name }

// errDone is returned when a Pending is used after it was published or
// discarded.
var errDone = errors.New("atomicfile: the temporary file was already published or discarded")

// Link publishes the file under path, which must not exist: it is
// created-exclusive, so of several writers of one path exactly one
// succeeds. If path exists the error matches fs.ErrExist, the file there
// is left as it was, and the temporary file stays for Discard (or a
// Rename). On success the temporary name is removed and path's folder
// fsynced.
func (p *Pending) Link(path string) error {
	if p.done {
		return errDone
	}
	if err := os.Link(p.name, path); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	p.done = true
	syncDir(filepath.Dir(path))
	_ = os.Remove(p.name) // the data lives on under path
	return nil
}

// Rename publishes the file under path, replacing any file there in one
// step: readers see the old file or the new one, never a mix. On success
// path's folder is fsynced; on error the temporary file stays for Discard.
func (p *Pending) Rename(path string) error {
	if p.done {
		return errDone
	}
	if err := os.Rename(p.name, path); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	p.done = true
	syncDir(filepath.Dir(path))
	return nil
}

// Discard removes the temporary file if it was not published, and does
// nothing otherwise; so `defer p.Discard()` right after Prepare cleans up
// on every path.
func (p *Pending) Discard() error {
	if p.done {
		return nil
	}
	p.done = true
	if err := os.Remove(p.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("atomicfile: %w", err)
	}
	return nil
}

// WriteNew creates path holding data, with permissions exactly perm, as
// [Prepare] and [Pending.Link] do: it fails with an error matching
// fs.ErrExist, leaving the file there as it was, if path exists.
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	p, err := Prepare(filepath.Dir(path), tempPattern(path), data, perm)
	if err != nil {
		return err
	}
	defer p.Discard()
	return p.Link(path)
}

// Replace creates or replaces path with data, with permissions exactly
// perm, as [Prepare] and [Pending.Rename] do.
func Replace(path string, data []byte, perm fs.FileMode) error {
	p, err := Prepare(filepath.Dir(path), tempPattern(path), data, perm)
	if err != nil {
		return err
	}
	defer p.Discard()
	return p.Rename(path)
}

// tempPattern names the temporary files of WriteNew and Replace: hidden,
// and named after the file they become.
func tempPattern(path string) string { return ".tmp-" + filepath.Base(path) + "-*" }

// syncDir makes a new folder entry durable. Best effort: some systems
// cannot sync a folder, and the data itself is already synced.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
