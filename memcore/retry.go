package memcore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// RetryPolicy bounds [Retry]. A zero field takes its default, so the zero
// RetryPolicy is the default policy: 3 attempts, backoff from 200ms capped
// at 5s.
type RetryPolicy struct {
	// MaxAttempts is the total number of attempts, the first included.
	// 0 means 3; 1 means no retries.
	MaxAttempts int
	// BaseDelay is the backoff before the second attempt; each later
	// backoff doubles it. 0 means 200ms.
	BaseDelay time.Duration
	// MaxDelay caps a single backoff. 0 means 5s.
	MaxDelay time.Duration
}

// defaultRetryPolicy is the policy the zero RetryPolicy stands for.
var defaultRetryPolicy = RetryPolicy{MaxAttempts: 3, BaseDelay: 200 * time.Millisecond, MaxDelay: 5 * time.Second}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = defaultRetryPolicy.MaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = defaultRetryPolicy.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = defaultRetryPolicy.MaxDelay
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	return p
}

// backoff is the delay before attempt n+1 (n ≥ 1): exponential growth from
// BaseDelay capped at MaxDelay, with "equal jitter" (a uniformly random
// point in the upper half) so that callers failing together spread out.
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		if d > p.MaxDelay/2 { // doubling would pass the cap, or overflow
			d = p.MaxDelay
			break
		}
		d *= 2
	}
	if d > p.MaxDelay {
		d = p.MaxDelay
	}
	half := d / 2
	return half + rand.N(half+1)
}

// Retry calls op until it succeeds, fails with a permanent error (see
// [IsTransient]), has been tried p.MaxAttempts times, or ctx ends.
//
// It returns nil on success and op's error as it is when the error is
// permanent or the attempts are used up. When ctx ends first — before an
// attempt or during a backoff — the returned error wraps both ctx.Err() and
// the last error of op, so errors.Is works for either.
func Retry(ctx context.Context, p RetryPolicy, op func(context.Context) error) error {
	p = p.withDefaults()
	var last error
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			if last == nil {
				return err
			}
			return fmt.Errorf("retry: %w after %d attempts: %w", err, attempt-1, last)
		}
		last = op(ctx)
		if last == nil || !IsTransient(last) || attempt >= p.MaxAttempts {
			return last
		}
		t := time.NewTimer(p.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("retry: %w after %d attempts: %w", ctx.Err(), attempt, last)
		case <-t.C:
		}
	}
}
