package memcore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"
	"time"
)

// nativeErr stands for a provider SDK's own error type.
type nativeErr struct{ status int }

func (e *nativeErr) Error() string { return fmt.Sprintf("HTTP %d", e.status) }

func TestIsTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"rate limited", ErrRateLimited, true},
		{"unavailable", ErrUnavailable, true},
		{"wrapped as providers do", fmt.Errorf("openai: embed: %w: %w", ErrRateLimited, &nativeErr{429}), true},
		{"wrapped twice", fmt.Errorf("capture: %w", fmt.Errorf("gemini: %w: %w", ErrUnavailable, &nativeErr{503})), true},
		{"joined", errors.Join(io.EOF, ErrUnavailable), true},
		{"unauthenticated", fmt.Errorf("x: %w: %w", ErrUnauthenticated, &nativeErr{401}), false},
		{"input too large", ErrInputTooLarge, false},
		{"invalid request", ErrInvalidRequest, false},
		{"invalid response", ErrInvalidResponse, false},
		{"context canceled", context.Canceled, false},
		{"deadline exceeded", fmt.Errorf("call: %w", context.DeadlineExceeded), false},
		{"provider timeout reported as unavailable", fmt.Errorf("%w: %w", ErrUnavailable, context.DeadlineExceeded), true},
		{"foreign error", io.ErrUnexpectedEOF, false},
		{"foreign error with a transient-sounding text", errors.New("rate limited"), false},
		{"storage error", ErrNotFound, false},
	}
	for _, tt := range tests {
		if got := IsTransient(tt.err); got != tt.want {
			t.Errorf("%s: IsTransient(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
	// Wrapping keeps the native error reachable.
	err := fmt.Errorf("openai: embed: %w: %w", ErrRateLimited, &nativeErr{429})
	var ne *nativeErr
	if !errors.As(err, &ne) || ne.status != 429 {
		t.Errorf("errors.As lost the native error")
	}
}

// tiny is a policy with delays small enough for tests.
var tiny = RetryPolicy{MaxAttempts: 4, BaseDelay: time.Microsecond, MaxDelay: 10 * time.Microsecond}

// ops returns an op that returns errs in turn (nil after the last), and a
// counter of its calls.
func ops(errs ...error) (func(context.Context) error, *int) {
	n := new(int)
	return func(context.Context) error {
		*n++
		if *n <= len(errs) {
			return errs[*n-1]
		}
		return nil
	}, n
}

func TestRetry(t *testing.T) {
	transient := fmt.Errorf("p: %w: %w", ErrUnavailable, &nativeErr{503})
	permanent := fmt.Errorf("p: %w: %w", ErrUnauthenticated, &nativeErr{401})
	tests := []struct {
		name      string
		policy    RetryPolicy
		errs      []error
		wantCalls int
		wantErr   error
	}{
		{"success at once", tiny, nil, 1, nil},
		{"permanent error tried once", tiny, []error{permanent}, 1, permanent},
		{"foreign error tried once", tiny, []error{io.ErrUnexpectedEOF}, 1, io.ErrUnexpectedEOF},
		{"context error tried once", tiny, []error{context.DeadlineExceeded}, 1, context.DeadlineExceeded},
		{"success after transient failures", tiny, []error{transient, ErrRateLimited}, 3, nil},
		{"transient, then permanent", tiny, []error{transient, permanent}, 2, permanent},
		{"transient until attempts run out", tiny, []error{transient, transient, transient, transient, transient}, 4, transient},
		{"one attempt means no retry", RetryPolicy{MaxAttempts: 1, BaseDelay: time.Microsecond}, []error{transient}, 1, transient},
	}
	for _, tt := range tests {
		op, calls := ops(tt.errs...)
		err := Retry(context.Background(), tt.policy, op)
		if *calls != tt.wantCalls {
			t.Errorf("%s: %d calls, want %d", tt.name, *calls, tt.wantCalls)
		}
		if err != tt.wantErr { // returned as it is, not rewrapped
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.wantErr)
		}
	}
}

// The zero policy stands for defaultRetryPolicy: three attempts.
func TestRetryZeroPolicy(t *testing.T) {
	if got := (RetryPolicy{}).withDefaults(); got != defaultRetryPolicy {
		t.Errorf("zero policy = %+v, want %+v", got, defaultRetryPolicy)
	}
	if got := (RetryPolicy{MaxAttempts: 5}).withDefaults(); got.MaxAttempts != 5 || got.BaseDelay != defaultRetryPolicy.BaseDelay {
		t.Errorf("partial policy = %+v", got)
	}
	if got := (RetryPolicy{BaseDelay: time.Second, MaxDelay: time.Millisecond}).withDefaults(); got.MaxDelay != time.Second {
		t.Errorf("MaxDelay below BaseDelay = %+v, want raised to BaseDelay", got)
	}
	// Behaviour: with the zero policy a permanent error is tried once; with
	// MaxAttempts left at zero (and tiny delays, to keep the test fast) a
	// transient one is tried three times.
	op, calls := ops(ErrInvalidRequest)
	if err := Retry(context.Background(), RetryPolicy{}, op); err != ErrInvalidRequest || *calls != 1 {
		t.Errorf("permanent: %v after %d calls", err, *calls)
	}
	op, calls = ops(ErrRateLimited, ErrRateLimited, ErrRateLimited, ErrRateLimited)
	fast := RetryPolicy{BaseDelay: time.Microsecond, MaxDelay: time.Microsecond}
	if err := Retry(context.Background(), fast, op); err != ErrRateLimited || *calls != 3 {
		t.Errorf("transient: %v after %d calls, want 3", err, *calls)
	}
}

func TestRetryBackoff(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 10, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	for n, full := range map[int]time.Duration{
		1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond,
		4: 800 * time.Millisecond, 5: time.Second, 9: time.Second,
	} {
		for i := 0; i < 50; i++ {
			if d := p.backoff(n); d < full/2 || d > full {
				t.Errorf("backoff(%d) = %v, want within [%v, %v]", n, d, full/2, full)
			}
		}
	}
	// The jitter spreads callers out.
	seen := map[time.Duration]bool{}
	for i := 0; i < 50; i++ {
		seen[p.backoff(3)] = true
	}
	if len(seen) < 10 {
		t.Errorf("backoff(3) took only %d values in 50 draws", len(seen))
	}
	if d := (RetryPolicy{BaseDelay: 1, MaxDelay: 1}).backoff(1); d < 0 || d > 1 {
		t.Errorf("1ns backoff = %v", d)
	}
	// Delays near the largest Duration are capped, never overflowed into
	// negative ones (which would make the jitter panic).
	huge := RetryPolicy{MaxAttempts: 100, BaseDelay: math.MaxInt64/2 + 1, MaxDelay: math.MaxInt64}.withDefaults()
	for _, n := range []int{1, 2, 3, 64, 99} {
		if d := huge.backoff(n); d < huge.BaseDelay/2 || d > huge.MaxDelay {
			t.Errorf("backoff(%d) of a huge policy = %v, want within [%v, %v]", n, d, huge.BaseDelay/2, huge.MaxDelay)
		}
	}
}

// A context cancelled during a backoff ends Retry promptly with an error
// that matches both the context's error and op's last error.
func TestRetryCancelledDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	transient := fmt.Errorf("p: %w: %w", ErrUnavailable, &nativeErr{503})
	calls := 0
	op := func(context.Context) error {
		calls++
		cancel() // the backoff that follows is an hour long
		return transient
	}
	done := make(chan error, 1)
	go func() {
		done <- Retry(ctx, RetryPolicy{MaxAttempts: 5, BaseDelay: time.Hour, MaxDelay: time.Hour}, op)
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrUnavailable) {
			t.Errorf("err = %v, want both context.Canceled and ErrUnavailable", err)
		}
		var ne *nativeErr
		if !errors.As(err, &ne) {
			t.Errorf("err = %v lost the native error", err)
		}
		if calls != 1 {
			t.Errorf("%d calls, want 1", calls)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Retry did not return after the context was cancelled")
	}
}

func TestRetryDeadlineDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	op, calls := ops(ErrRateLimited, ErrRateLimited)
	err := Retry(ctx, RetryPolicy{MaxAttempts: 3, BaseDelay: time.Hour}, op)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrRateLimited) || *calls != 1 {
		t.Errorf("err = %v after %d calls", err, *calls)
	}
}

func TestRetryContextDoneBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	op, calls := ops()
	if err := Retry(ctx, tiny, op); err != context.Canceled || *calls != 0 {
		t.Errorf("err = %v after %d calls; want context.Canceled and no call", err, *calls)
	}
}

func TestUsageTotal(t *testing.T) {
	if got := (Usage{InputTokens: 7, OutputTokens: 5}).Total(); got != 12 {
		t.Errorf("Total = %d", got)
	}
}
