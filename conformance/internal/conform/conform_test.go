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

func TestConfigValidate(t *testing.T) {
	over := fmt.Sprintf("more than 0 and at most 24h0m0s (0 means %v)", time.Minute)
	grace := "more than 0 and at most 24h0m0s (0 means 5s)"
	tests := []struct {
		name string
		cfg  Config
		want string // the whole message; "" for a valid config
	}{
		{"zero value", Config{}, ""},
		{"defaults", DefaultConfig(), ""},
		{"bounds", Config{CallTimeout: time.Nanosecond, CancelGrace: MaxDuration, Concurrency: MinConcurrency}, ""},
		{"most concurrent", Config{Concurrency: MaxConcurrency}, ""},
		{"call timeout negative", Config{CallTimeout: -time.Second}, "llmtest: invalid config: CallTimeout is -1s, want " + over},
		{"call timeout too long", Config{CallTimeout: MaxDuration + 1}, "llmtest: invalid config: CallTimeout is 24h0m0.000000001s, want " + over},
		{"cancel grace most negative", Config{CancelGrace: math.MinInt64},
			fmt.Sprintf("llmtest: invalid config: CancelGrace is %v, want %s", time.Duration(math.MinInt64), grace)},
		{"concurrency 1", Config{Concurrency: 1}, "llmtest: invalid config: Concurrency is 1, want 2–1000 (0 means 8)"},
		{"concurrency too many", Config{Concurrency: 1001}, "llmtest: invalid config: Concurrency is 1001, want 2–1000 (0 means 8)"},
		{"every field", Config{CallTimeout: math.MaxInt64, CancelGrace: -1, Concurrency: math.MinInt},
			fmt.Sprintf("llmtest: invalid config: CallTimeout is %v, want %s; CancelGrace is -1ns, want %s; Concurrency is %d, want 2–1000 (0 means 8)",
				time.Duration(math.MaxInt64), over, grace, math.MinInt)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate("llmtest")
			if tt.want == "" {
				if err != nil {
					t.Errorf("Validate = %v, want nil", err)
				}
				return
			}
			var ce *memcore.ConfigError
			if !errors.Is(err, memcore.ErrInvalidConfig) || !errors.As(err, &ce) {
				t.Fatalf("Validate = %v, want a *memcore.ConfigError matching memcore.ErrInvalidConfig", err)
			}
			if err.Error() != tt.want {
				t.Errorf("Validate =\n%s\nwant\n%s", err, tt.want)
			}
		})
	}
}

// A zero field means its default; others are kept.
func TestConfigWithDefaults(t *testing.T) {
	if got, want := (Config{}).WithDefaults(), DefaultConfig(); got != want {
		t.Errorf("Config{}.WithDefaults() = %+v, want %+v", got, want)
	}
	c := Config{CallTimeout: time.Second, CancelGrace: time.Millisecond, Concurrency: 3}
	if got := c.WithDefaults(); got != c {
		t.Errorf("WithDefaults changed %+v to %+v", c, got)
	}
}

func TestFailNow(t *testing.T) {
	r := &recorder{TB: t}
	FailNow(r, nil)
	if len(r.fatals) != 0 {
		t.Errorf("FailNow(nil) failed the test: %q", r.fatals)
	}
	FailNow(r, Config{Concurrency: 1, CallTimeout: -1}.Validate("llmtest"))
	want := "llmtest: invalid config: CallTimeout is -1ns, want more than 0 and at most 24h0m0s (0 means 1m0s); " +
		"Concurrency is 1, want 2–1000 (0 means 8); the suite did not run"
	if !slices.Equal(r.fatals, []string{want}) {
		t.Errorf("FailNow reported %q, want %q", r.fatals, want)
	}
}
