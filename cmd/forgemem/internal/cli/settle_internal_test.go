package cli

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestSettle checks on a fake clock (testing/synctest) when settle returns:
// once changes have stopped for the whole wait, and at once, with false,
// when the context ends first.
func TestSettle(t *testing.T) {
	const wait = 250 * time.Millisecond
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name string
		// changes are when a change comes, after the start; cancel when
		// the context ends (0: never).
		changes []time.Duration
		cancel  time.Duration
		want    bool
		wantAt  time.Duration
	}{
		{name: "no change: one wait", want: true, wantAt: wait},
		{name: "each change starts the wait again", changes: []time.Duration{ms(100), ms(300)}, want: true, wantAt: ms(550)},
		{name: "a change after a quiet wait is not waited for", changes: []time.Duration{ms(400)}, want: true, wantAt: wait},
		{name: "the context ends while changes go on", changes: []time.Duration{ms(100), ms(200), ms(300)}, cancel: ms(320), want: false, wantAt: ms(320)},
		{name: "the context ends during a quiet wait", cancel: ms(50), want: false, wantAt: ms(50)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				start := time.Now()
				// Like Workspace.Changed: one waiting value stands for any
				// number of changes.
				changed := make(chan struct{}, 1)
				sent := make(chan struct{})
				go func() {
					defer close(sent)
					for _, at := range tt.changes {
						time.Sleep(at - time.Since(start))
						select {
						case changed <- struct{}{}:
						default:
						}
					}
				}()
				if tt.cancel > 0 {
					time.AfterFunc(tt.cancel, cancel)
				}
				got := settle(ctx, changed, wait)
				if took := time.Since(start); got != tt.want || took != tt.wantAt {
					t.Errorf("settle = %v after %v, want %v after %v", got, took, tt.want, tt.wantAt)
				}
				<-sent
			})
		})
	}
}
