package conform

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// recorder is a testing.TB that records what would be reported.
type recorder struct {
	testing.TB
	errors []string
	fatals []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// Fatalf records the message; unlike testing's, it returns.
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}

type nativeErr struct{}

func (nativeErr) Error() string { return "native" }

func TestCheckFailure(t *testing.T) {
	rate := Kinds[0]
	tests := []struct {
		name       string
		err        error
		wantErrors int
	}{
		{"wrapped sentinel and native error", fmt.Errorf("p: %w: %w", memcore.ErrRateLimited, nativeErr{}), 0},
		{"bare string", errors.New("rate limited"), 2}, // not the sentinel, not transient
		{"two kinds", fmt.Errorf("%w: %w", memcore.ErrRateLimited, memcore.ErrUnauthenticated), 1},
		{"wrong kind", memcore.ErrUnavailable, 2},                                                   // not the sentinel, matches another
		{"also a context error", fmt.Errorf("%w: %w", memcore.ErrRateLimited, context.Canceled), 1}, // matches a context error
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			CheckFailure(r, tt.err, rate)
			if len(r.errors) != tt.wantErrors {
				t.Errorf("CheckFailure(%v) reported %d errors, want %d: %q", tt.err, len(r.errors), tt.wantErrors, r.errors)
			}
		})
	}
}

func TestCheckContextError(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantErrors int
	}{
		{"the context's error", context.Canceled, 0},
		{"wrapped", fmt.Errorf("p: complete: %w", context.Canceled), 0},
		{"no error", nil, 1},
		{"another error", errors.New("canceled"), 1},
		{"classified", fmt.Errorf("%w: %w", memcore.ErrUnavailable, context.Canceled), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			CheckContextError(r, "canceled", tt.err, context.Canceled)
			if len(r.errors) != tt.wantErrors {
				t.Errorf("CheckContextError(%v) reported %d errors, want %d: %q", tt.err, len(r.errors), tt.wantErrors, r.errors)
			}
		})
	}
}

func TestUnsupportedReason(t *testing.T) {
	if got := UnsupportedReason(fmt.Errorf("%w: no 429s", errors.ErrUnsupported)); got != "unsupported operation: no 429s" {
		t.Errorf("UnsupportedReason = %q", got)
	}
	if got := UnsupportedReason(errors.New("boom")); got != "" {
		t.Errorf("UnsupportedReason of another error = %q, want empty", got)
	}
	if got := UnsupportedReason(nil); got != "" {
		t.Errorf("UnsupportedReason(nil) = %q, want empty", got)
	}
}

func TestWithin(t *testing.T) {
	if got, ok := Within(time.Minute, func() int { return 7 }); !ok || got != 7 {
		t.Errorf("Within(fast call) = %d, %t; want 7, true", got, ok)
	}
	release := make(chan struct{})
	defer close(release)
	if _, ok := Within(time.Millisecond, func() int { <-release; return 0 }); ok {
		t.Error("Within(blocked call) reported that the call returned")
	}
}

func TestSubtestResults(t *testing.T) {
	out := []byte(`=== RUN   TestX
--- FAIL: TestX (0.10s)
    --- PASS: TestX/A (0.00s)
    --- FAIL: TestX/Errors (0.00s)
        --- FAIL: TestX/Errors/RateLimited (0.00s)
            --- FAIL: TestX/Errors/RateLimited/MatchesKind (0.00s)
            --- SKIP: TestX/Errors/RateLimited/NativeErrorReachable (0.00s)
        --- FAIL: TestX/Errors/Unavailable (0.00s)
    --- SKIP: TestX/Slow (0.00s)
--- FAIL: TestY/Other (0.00s)
FAIL
`)
	failed, skipped := subtestResults(out, "TestX")
	if want := []string{"Errors/RateLimited/NativeErrorReachable", "Slow"}; !slices.Equal(skipped, want) {
		t.Errorf("skipped = %q, want %q", skipped, want)
	}
	// Errors/Unavailable failed by itself; Errors and Errors/RateLimited
	// only through their subtests.
	if got, want := failedLeaves(failed), []string{"Errors/RateLimited/MatchesKind", "Errors/Unavailable"}; !slices.Equal(got, want) {
		t.Errorf("failed leaves = %q, want %q", got, want)
	}
}

func TestOptionsOutOfRange(t *testing.T) {
	def := DefaultConfig()
	tests := []struct {
		name string
		opt  func(*Config)
		want string // the whole problem: option, value, allowed values
	}{
		{"call timeout zero", CallTimeout(0), "WithCallTimeout is 0s, want more than 0 and at most 24h0m0s"},
		{"call timeout negative", CallTimeout(-time.Second), "WithCallTimeout is -1s, want more than 0 and at most 24h0m0s"},
		{"call timeout too long", CallTimeout(MaxDuration + 1), "WithCallTimeout is 24h0m0.000000001s, want more than 0 and at most 24h0m0s"},
		{"call timeout huge", CallTimeout(math.MaxInt64), fmt.Sprintf("WithCallTimeout is %v, want more than 0 and at most 24h0m0s", time.Duration(math.MaxInt64))},
		{"cancel grace zero", CancelGrace(0), "WithCancelGrace is 0s, want more than 0 and at most 24h0m0s"},
		{"cancel grace most negative", CancelGrace(math.MinInt64), fmt.Sprintf("WithCancelGrace is %v, want more than 0 and at most 24h0m0s", time.Duration(math.MinInt64))},
		{"concurrency 1", Concurrency(1), "WithConcurrency is 1, want 2–1000"},
		{"concurrency negative", Concurrency(math.MinInt), fmt.Sprintf("WithConcurrency is %d, want 2–1000", math.MinInt)},
		{"concurrency too many", Concurrency(1001), "WithConcurrency is 1001, want 2–1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewConfig([]func(*Config){tt.opt})
			if !slices.Equal(c.Bad, Problems{tt.want}) {
				t.Errorf("Bad = %q, want %q", c.Bad, []string{tt.want})
			}
			if c.CallTimeout != def.CallTimeout || c.CancelGrace != def.CancelGrace || c.InFlightDelay != def.InFlightDelay || c.Concurrency != def.Concurrency {
				t.Errorf("an option out of range changed the config to %+v; want the defaults %+v", c, def)
			}
		})
	}
}

func TestOptionsInRange(t *testing.T) {
	c := NewConfig([]func(*Config){CallTimeout(time.Nanosecond), nil, CancelGrace(MaxDuration), Concurrency(MinConcurrency), Concurrency(MaxConcurrency)})
	want := DefaultConfig()
	want.CallTimeout, want.CancelGrace, want.Concurrency = time.Nanosecond, MaxDuration, MaxConcurrency
	if len(c.Bad) != 0 || c.CallTimeout != want.CallTimeout || c.CancelGrace != want.CancelGrace || c.Concurrency != want.Concurrency {
		t.Errorf("NewConfig = %+v, want %+v", c, want)
	}
}

// TestOptionsNeverPanic makes and applies every option with extreme values.
func TestOptionsNeverPanic(t *testing.T) {
	var opts []func(*Config)
	for _, d := range []time.Duration{math.MinInt64, -1, 0, 1, MaxDuration, MaxDuration + 1, math.MaxInt64} {
		opts = append(opts, CallTimeout(d), CancelGrace(d))
	}
	for _, n := range []int{math.MinInt, -1, 0, 1, 2, 1000, 1001, math.MaxInt} {
		opts = append(opts, Concurrency(n))
	}
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("an option panicked: %v", r)
		}
	}()
	c := NewConfig(opts)
	if len(c.Bad) != 16 { // 5 durations out of range for each of two options, 6 concurrencies
		t.Errorf("%d problems reported, want the 16 values out of range: %q", len(c.Bad), c.Bad)
	}
}

func TestProblemsFailNow(t *testing.T) {
	r := &recorder{TB: t}
	Problems(nil).FailNow(r, "llmtest")
	if len(r.fatals) != 0 {
		t.Errorf("FailNow with no problems failed the test: %q", r.fatals)
	}
	Problems{"WithConcurrency is 1, want 2–1000", "WithCallTimeout is 0s, want more than 0 and at most 24h0m0s"}.FailNow(r, "llmtest")
	want := "llmtest: options out of range, the suite did not run: WithConcurrency is 1, want 2–1000; WithCallTimeout is 0s, want more than 0 and at most 24h0m0s"
	if !slices.Equal(r.fatals, []string{want}) {
		t.Errorf("FailNow reported %q, want %q", r.fatals, want)
	}
}
