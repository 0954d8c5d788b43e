package memcapture

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/forgemem/forgemem/memcore/redact"
)

// stallGrace is how long after its deadline a provider call may still
// return and count as having honoured its context: a provider that stops
// when its context ends returns within moments of it.
const stallGrace = 100 * time.Millisecond

// callWithin calls f with ctx on a goroutine of its own and returns its
// result — or, when ctx has ended and f has not returned within
// stallGrace, an error wrapping ErrStalled and ctx.Err(), so a provider
// that ignores its context cannot hold the pipeline goroutine past a
// pass's deadline. The abandoned call is counted in stalled, and whatever
// it returns later is dropped: f must only return values, never change
// anything the pipeline shares (the caller does that with what f returns).
// A panic in f is raised again on the caller's goroutine, where the pass
// recovers it, with f's stack in its value.
func callWithin[T any](ctx context.Context, stalled *atomic.Uint64, f func(context.Context) (T, error)) (T, error) {
	type outcome struct {
		v     T
		err   error
		panic any
	}
	ch := make(chan outcome, 1) // the abandoned goroutine's send never blocks
	go func() {
		var o outcome
		defer func() {
			if r := recover(); r != nil {
				o.panic = fmt.Sprintf("%v\n\n%s", r, debug.Stack())
			}
			ch <- o
		}()
		o.v, o.err = f(ctx)
	}()
	var o outcome
	select {
	case o = <-ch:
	case <-ctx.Done():
		grace := time.NewTimer(stallGrace)
		defer grace.Stop()
		select {
		case o = <-ch:
		case <-grace.C:
			stalled.Add(1)
			var zero T
			return zero, fmt.Errorf("%w: %w", ErrStalled, ctx.Err())
		}
	}
	if o.panic != nil {
		panic(o.panic)
	}
	return o.v, o.err
}

// redactErr returns err with its message redacted (see redact.Error): for
// errors that may quote a conversation or a model's output, before they
// are logged or kept in Stats.
func redactErr(err error) error { return redact.Error(err) }

// redactStr returns s with its secrets redacted: for text that came from a
// model or a conversation, before it is logged.
func redactStr(s string) string {
	out, _ := redact.Text(s)
	return out
}

// fail records err, of kind, as the pipeline's latest failure.
func (p *Pipeline) fail(kind FailureKind, err error) {
	p.stats.lastFailure.Store(&Failure{Kind: kind, Err: redactErr(err), At: p.cfg.clock().UTC()})
}
