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
// reader or misbehave. It never follows a symbolic link and never waits on
// a FIFO or a device: the file is opened with O_NOFOLLOW and O_NONBLOCK
// (which makes no difference to reading or writing a regular file), and
// the mode of the opened file itself is checked before it is handed back.
// Where the system has no O_NOFOLLOW, an Lstat before the open refuses a
// link. A link is an error wrapping [ErrSymlink], anything else that is
// not a regular file one wrapping [ErrNotRegular], and a missing file one
// wrapping fs.ErrNotExist.
//
// On a regular file Open costs what os.OpenFile and a Stat cost: the
// checks that classify a refusal run only when the open fails.
func Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if oNoFollow == 0 {
		if info, err := os.Lstat(path); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: %w", path, ErrSymlink)
		}
	}
	f, err := os.OpenFile(path, flag|oNoFollow|oNonBlock, perm)
	if err != nil {
		return nil, refused(path, err)
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// refused says why opening path failed with err: the path is a link (the
// systems report O_NOFOLLOW's refusal with different errors, so the path
// is looked at), a FIFO without a reader opened to write (ENXIO), a folder
// opened to write (EISDIR), or err itself.
func refused(path string, err error) error {
	if info, lerr := os.Lstat(path); lerr == nil {
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s: %w", path, ErrSymlink)
		case !info.Mode().IsRegular():
			return fmt.Errorf("%s: %w", path, ErrNotRegular)
		}
	}
	if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EISDIR) {
		return fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	return err
}
