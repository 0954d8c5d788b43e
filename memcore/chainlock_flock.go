//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package memcore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// tryLock takes the lock of the .locks folder ld without waiting: an
// exclusive flock on ld/chains.lock, which the system releases when the
// process dies. It returns errLockBusy if another holder has it. The lock
// file is opened without following a symbolic link and must be a regular
// file.
func tryLock(ld string) (unlock func(), err error) {
	path := filepath.Join(ld, flockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, filePerm)
	if err != nil {
		return nil, err
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s: %w: not a regular file", path, ErrMalformed)
		}
		return nil, err
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
			return nil, errLockBusy
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// Closing the file releases the lock.
	return func() { _ = f.Close() }, nil
}
