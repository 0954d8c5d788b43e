package mcpserver

import (
	"context"
	"errors"
	"sync/atomic"
)

// Bounds of the tool calls of one server: at most maxRunning run at once,
// at most maxWaiting wait for a turn, and the others are refused at once
// as busy. A model's parallel calls (a handful) always run; hundreds at
// once — a runaway client — cannot make the server hold hundreds of
// results.
const (
	maxRunning = 8
	maxWaiting = 32
)

// errBusy refuses a call that found every running and waiting place taken.
var errBusy = errors.New("forgemem is busy")

// callLimit bounds the calls that run at once and those that wait.
type callLimit struct {
	// slots holds a token per running call.
	slots      chan struct{}
	waiting    atomic.Int64
	maxWaiting int64
	// onWait, when set by a test, is called when a call starts waiting.
	onWait func()
}

func newCallLimit(running, waiting int) *callLimit {
	return &callLimit{slots: make(chan struct{}, running), maxWaiting: int64(waiting)}
}

// acquire takes a running place, waiting for one if every place is taken
// and fewer than maxWaiting calls wait already; errBusy when they do, or
// ctx's error when it ends first. release gives the place back.
func (l *callLimit) acquire(ctx context.Context) (release func(), err error) {
	release = func() { <-l.slots }
	select {
	case l.slots <- struct{}{}:
		return release, nil
	default:
	}
	if l.waiting.Add(1) > l.maxWaiting {
		l.waiting.Add(-1)
		return nil, errBusy
	}
	defer l.waiting.Add(-1)
	if l.onWait != nil {
		l.onWait()
	}
	select {
	case l.slots <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
