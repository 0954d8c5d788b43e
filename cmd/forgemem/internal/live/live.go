package live

import (
	"errors"
)

// ErrUnsupported: the system has no file events with the ordering Sync
// needs (only Linux's inotify has it); the caller reads the folders.
var ErrUnsupported = errors.New("live: this system's file events cannot keep the memory folders exact")

// ErrLost: a watched folder went away (deleted, renamed or unmounted) or
// the watcher stopped; the view can no longer be kept exact, and the
// caller reads the folders instead.
var ErrLost = errors.New("live: a watched folder went away")
