//go:build linux

package resident

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Supported reports whether this system runs recall servers.
func Supported() bool { return true }

// Ask sends req to the server of folder dir and returns its response,
// within ctx's deadline. It fails with an error wrapping ErrNotRunning when
// no server listens there, and with ErrFrame when the answer is not one.
func Ask(ctx context.Context, dir string, req *Request) (*Response, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socketPath(dir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w: %w", ErrNotRunning, err)
		}
		return nil, fmt.Errorf("resident: %w", err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	req.Version = Version
	if err := WriteFrame(c, req); err != nil {
		return nil, ctxOr(ctx, fmt.Errorf("resident: sending the request: %w", err))
	}
	var resp Response
	if err := ReadFrame(c, &resp); err != nil {
		return nil, ctxOr(ctx, err)
	}
	if resp.Version != Version {
		return nil, fmt.Errorf("%w: version %d", ErrFrame, resp.Version)
	}
	return &resp, nil
}

// ctxOr returns ctx's error when it has ended (the reason the exchange
// failed), else err.
func ctxOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("resident: %w", ctx.Err())
	}
	return err
}

// maxLog is the size at which a server's log is moved aside when a
// server starts.
const maxLog = 1 << 20

// StartDetached starts the program at path with args in workDir, with
// the environment environ, as a process of its own (a new session, so that
// it outlives the hook and the agent's process group), standard input
// from the null device and its output appended to the server folder's
// log. It does not wait for the process.
func StartDetached(dir, path string, args []string, workDir string, environ []string) error {
	logPath := LogPath(dir)
	if info, err := os.Lstat(logPath); err == nil && info.Mode().IsRegular() && info.Size() > maxLog {
		_ = os.Rename(logPath, filepath.Join(dir, oldLog))
	}
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("resident: the server's log: %w", err)
	}
	defer log.Close() // the child has its own descriptor
	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Env = workDir, environ
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("resident: starting the recall server %s: %w", filepath.Base(path), err)
	}
	return cmd.Process.Release()
}
