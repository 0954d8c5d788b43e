package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// Errors of [Open]; match them with errors.Is.
var (
	// ErrSymlink: the path is a symbolic link, which Open never follows.
	ErrSymlink = errors.New("a symbolic link, which is never followed")
	// ErrNotRegular: the path is a FIFO, a device, a socket or a folder,
	// which Open never reads or writes.
	ErrNotRegular = errors.New("not a regular file")
)

// Open opens the file path with flag (and perm when O_CREATE creates it) if
// it is a regular file — for folders a repository can commit, where a
// symbolic link could point anywhere and a FIFO or a device would block the
// reader or misbehave. It never follows a symbolic link (O_NOFOLLOW where
// the system has it, and an Lstat first everywhere) and never waits on a
// FIFO or a device (O_NONBLOCK, then the mode of the opened file itself is
// checked before it is handed back; the flag is cleared again, so reads and
// writes of the regular file behave as usual). A link is an error wrapping
// [ErrSymlink], anything else that is not a regular file one wrapping
// [ErrNotRegular], and a missing file one wrapping fs.ErrNotExist.
func Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	info, err := os.Lstat(path)
	switch {
	case err == nil && info.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s: %w", path, ErrSymlink)
	case err == nil && !info.Mode().IsRegular():
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	case err != nil && !(errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0):
		return nil, err
	}
	f, err := os.OpenFile(path, flag|oNoFollow|oNonBlock, perm)
	if err != nil {
		// Replaced since the Lstat: a link (ELOOP under O_NOFOLLOW) or a
		// FIFO without a reader (ENXIO when opened to write).
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: %w", path, ErrSymlink)
		}
		if errors.Is(err, syscall.ENXIO) {
			return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
		}
		return nil, err
	}
	info, err = f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	if err == nil {
		err = clearNonBlock(f)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
