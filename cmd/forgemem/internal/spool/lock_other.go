//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// staleLockAge is how old an exclusive lock file must be before it is
// taken to be left by a worker that died.
const staleLockAge = 10 * time.Minute

// tryLockFile takes the lock on a system without flock: path is created
// exclusively, and release closes and removes it. A lock file
// staleLockAge old was left by a worker that died and is taken over.
func tryLockFile(path string) (f *os.File, release func(), err error) {
	for attempt := 0; attempt < 2; attempt++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, filePerm)
		if err == nil {
			return f, func() { _ = f.Close(); _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, nil, fmt.Errorf("spool: %w", err)
		}
		if info, err := os.Lstat(path); err == nil && time.Since(info.ModTime()) > staleLockAge {
			_ = os.Remove(path)
			continue
		}
		break
	}
	return nil, nil, fmt.Errorf("spool: %w", ErrLocked)
}
