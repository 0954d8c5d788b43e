package spool

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// LogName is the worker's log in the spool folder, and maxLog the size at
// which it is moved to LogName+".1" when a worker starts.
const (
	LogName = "worker.log"
	maxLog  = 1 << 20
)

// StartDetached starts the program at path with args in dir, as a process
// of its own (a new session where the system has them, so that it outlives
// the process that started it and its process group), with standard input
// from the null device and standard output and error appended to the
// spool's worker log. It does not wait for the process, which is released.
func (s *Spool) StartDetached(path string, args []string, dir string, env []string) (pid int, err error) {
	log, err := s.openLog()
	if err != nil {
		return 0, err
	}
	defer log.Close() // the child has its own descriptor
	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = nil // the null device
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = detachedAttr()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting the capture worker: %w", err)
	}
	pid = cmd.Process.Pid
	_ = cmd.Process.Release()
	return pid, nil
}

// openLog opens the worker log for appending, moving a large one aside
// first, without following a symbolic link.
func (s *Spool) openLog() (*os.File, error) {
	path := filepath.Join(s.dir, LogName)
	if info, err := os.Lstat(path); err == nil && info.Mode().IsRegular() && info.Size() > maxLog {
		_ = os.Rename(path, path+".1")
	}
	return openRegular(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
}
