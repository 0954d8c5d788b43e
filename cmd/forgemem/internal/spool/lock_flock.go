//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package spool

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// tryLockFile opens path without following a symbolic link and takes an
// exclusive flock on it without waiting; release closes the file, which
// releases the lock.
func tryLockFile(path string) (f *os.File, release func(), err error) {
	f, err = openRegular(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil, fmt.Errorf("spool: %w", ErrLocked)
		}
		return nil, nil, fmt.Errorf("spool: lock %s: %w", path, err)
	}
	return f, func() { _ = f.Close() }, nil
}
