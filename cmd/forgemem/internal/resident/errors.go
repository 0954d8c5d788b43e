package resident

import "errors"

// The errors of the package, the same on every system (elsewhere than on
// Linux, where no recall server runs, the functions fail with their own
// error or ErrNotRunning).
var (
	// ErrNotRunning: no server answers at the folder (no socket, or nobody
	// listening on it): the caller recalls in its own process.
	ErrNotRunning = errors.New("resident: no recall server is running")
	// ErrRunning: another process holds the lock of this server folder.
	ErrRunning = errors.New("resident: a recall server of this key is running")
	// ErrUnsafeDir: a folder that must be private to the user is not: a
	// symbolic link, not a folder, owned by another user, or open to
	// others.
	ErrUnsafeDir = errors.New("not a folder private to this user")
)
