package spool

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watcher tells a worker that entries were added to the spool, so that it
// waits for work on the folder itself rather than polling it.
type Watcher struct {
	w *fsnotify.Watcher
}

// Watch starts watching the spool folder. Make the watcher before
// listing, so that an entry added meanwhile is not missed. Where the
// system cannot watch the folder, Watch returns an error and a Watcher
// whose Wait only waits for its deadline: the caller then looks again once,
// which is still correct, only slower to notice new entries.
func (s *Spool) Watch() (*Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return &Watcher{}, err
	}
	if err := w.Add(s.dir); err != nil {
		_ = w.Close()
		return &Watcher{}, err
	}
	return &Watcher{w: w}, nil
}

// Wait waits until an entry appears in the spool folder (true), or until
// the deadline passes or ctx ends (false). An entry that appeared since
// the last Wait counts.
func (w *Watcher) Wait(ctx context.Context, deadline time.Time) bool {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w.w != nil {
		events, errs = w.w.Events, w.w.Errors
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return false
		case ev, open := <-events:
			if !open {
				events = nil
				continue
			}
			if ev.Op&(fsnotify.Create|fsnotify.Rename) != 0 {
				if _, ok := parseName(filepath.Base(ev.Name)); ok {
					return true
				}
			}
		case _, open := <-errs:
			if !open {
				errs = nil
			}
			// An overflow of the system's queue of events may have lost
			// one: say so, and the caller looks.
			return true
		}
	}
}

// Close stops watching.
func (w *Watcher) Close() error {
	if w.w == nil {
		return nil
	}
	return w.w.Close()
}
