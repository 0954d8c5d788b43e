package spool

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
)

// lockName is the worker's lock file in the spool folder.
const lockName = "worker.lock"

// TryLock takes the spool's worker lock without waiting and writes this
// process's id into the lock file, for Holder and a person looking. It
// returns an error wrapping ErrLocked when another worker holds it. Where
// the system has flock the lock is an advisory flock, released by the
// system when its holder dies, however it dies (kill -9, a reboot). The
// lock file is never opened through a symbolic link.
func (s *Spool) TryLock() (unlock func(), err error) {
	f, release, err := tryLockFile(filepath.Join(s.dir, lockName))
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return release, nil
}

// Holder reports whether a worker holds the spool's lock now, and its
// process id when it wrote one.
func (s *Spool) Holder() (pid int, held bool, err error) {
	unlock, err := s.TryLock()
	switch {
	case err == nil:
		unlock()
		return 0, false, nil
	case !errors.Is(err, ErrLocked):
		return 0, false, err
	}
	data, _ := readCapped(filepath.Join(s.dir, lockName), 64)
	pid, _ = strconv.Atoi(string(bytes.TrimSpace(data)))
	return pid, true, nil
}
