//go:build !linux

package resident

import (
	"context"
	"errors"
	"time"
)

// errUnsupported: recall servers need Linux's file events.
var errUnsupported = errors.New("resident: recall servers run on Linux only")

// Supported reports whether this system runs recall servers: no.
func Supported() bool { return false }

// PrivateDir fails: there is no recall server here.
func PrivateDir(environ []string) (string, error) { return "", errUnsupported }

// KeySecret fails: there is no recall server here.
func KeySecret(base string) ([]byte, error) { return nil, errUnsupported }

// ServerDir fails: there is no recall server here.
func ServerDir(base, key string) (string, error) { return "", errUnsupported }

// LogPath is "".
func LogPath(dir string) string { return "" }

// Ask fails with ErrNotRunning.
func Ask(ctx context.Context, dir string, req *Request) (*Response, error) { return nil, ErrNotRunning }

// StartDetached fails.
func StartDetached(dir, path string, args []string, workDir string, environ []string) error {
	return errUnsupported
}

// Lock is never taken here.
type Lock struct{}

// TakeLock fails.
func TakeLock(dir string) (*Lock, error) { return nil, errUnsupported }

// Release does nothing.
func (l *Lock) Release() {}

// Handler answers a request.
type Handler func(ctx context.Context, req *Request) *Response

// Serve fails.
func Serve(ctx context.Context, dir, key string, idle time.Duration, h Handler) error {
	return errUnsupported
}

// WaitExited returns at once: there is never a server here.
func WaitExited(ctx context.Context, dir string) error { return nil }

// LockHolder is 0: there is never a server here.
func LockHolder(dir string) int { return 0 }

// Running reports false: there is never a server here.
func Running(dir string) bool { return false }

// Prune removes nothing: there are no server folders here.
func Prune(base, keep string, olderThan time.Duration) (int, error) { return 0, nil }

// BarrierDir fails: there are no file events to keep a view exact here.
func BarrierDir(environ []string) (string, error) { return "", errUnsupported }

// CheckListen fails: there is no server here.
func CheckListen(dir string) error { return errUnsupported }

// WritePlace fails: there is no server here.
func WritePlace(dir string, p Place) error { return errUnsupported }

// Other is a server folder of another key.
type Other struct {
	Dir      string
	Place    Place
	Recorded bool
}

// ReadPlace fails: there is no server here.
func ReadPlace(dir string) (Place, error) { return Place{}, errUnsupported }

// State is what a server folder shows of its server.
type State int

// The states of a server folder.
const (
	Stopped State = iota
	Starting
	Listening
)

// Look reports Stopped: there is never a server here.
func Look(dir string) (State, error) { return Stopped, nil }

// Others finds nothing: there are no server folders here.
func Others(base string, p Place) ([]Other, error) { return nil, nil }
