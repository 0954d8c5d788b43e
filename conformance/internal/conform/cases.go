package conform

import (
	"cmp"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// Config holds the settings the provider suites share. Each suite's own
// Config has the same fields and converts to it.
type Config struct {
	// CallTimeout bounds an ordinary call.
	CallTimeout time.Duration
	// CancelGrace is how soon after its context ends a call must return.
	CancelGrace time.Duration
	// Concurrency is how many calls the concurrency case makes at once.
	Concurrency int
}

// InFlightDelay is how long a call is in flight before its context ends
// in the in-flight cases.
const InFlightDelay = 50 * time.Millisecond

// DefaultConfig is the suites' default: a minute per call (live models are
// slow), 5s of grace so that a busy machine (tests in parallel, -race) does
// not fail a correct implementation, and 8 concurrent calls.
func DefaultConfig() Config {
	return Config{CallTimeout: time.Minute, CancelGrace: 5 * time.Second, Concurrency: 8}
}

// Subject is what the shared cases need of a provider suite: instances of
// the implementation under test, each from a new harness, and one call to
// make with them. P is memcore.LLMProvider or memcore.Embedder.
type Subject[P any] struct {
	// Suite names the suite ("llmtest") and Noun what it tests
	// ("provider"), for messages.
	Suite, Noun string
	Config      Config
	// New returns a working instance.
	New func(t *testing.T) P
	// Slow returns an instance whose calls return only when their context
	// ends; it skips t, saying why, when the harness cannot make one.
	Slow func(t *testing.T) P
	// Failing returns an instance whose next call fails as kind, with the
	// harness that made it (for its optional interfaces), or the harness's
	// error.
	Failing func(t *testing.T, kind error) (p P, harness any, err error)
	// Call makes one ordinary call with p and returns its error.
	Call func(ctx context.Context, p P) error
}

// nativeErrorHarness is the method every suite's NativeErrorHarness has.
type nativeErrorHarness interface{ AsNative(err error) bool }

// RunContextCases runs the Context subtests: a call whose context is
// canceled or past its deadline, before the call or while it is in flight,
// returns within the grace period with the context's error.
func RunContextCases[P any](t *testing.T, s Subject[P]) {
	t.Run("CanceledBeforeCall", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		checkEndedCall(t, s, ctx, s.New(t), "whose context is already canceled", 0, context.Canceled)
	})
	t.Run("DeadlineExpiredBeforeCall", func(t *testing.T) {
		ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
		defer cancel()
		checkEndedCall(t, s, ctx, s.New(t), "whose deadline has passed", 0, context.DeadlineExceeded)
	})
	t.Run("CanceledInFlight", func(t *testing.T) {
		p := s.Slow(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		timer := time.AfterFunc(InFlightDelay, cancel)
		defer timer.Stop()
		checkEndedCall(t, s, ctx, p, "canceled while in flight", InFlightDelay, context.Canceled)
	})
	t.Run("DeadlineExpiresInFlight", func(t *testing.T) {
		p := s.Slow(t)
		ctx, cancel := context.WithTimeout(t.Context(), InFlightDelay)
		defer cancel()
		checkEndedCall(t, s, ctx, p, "whose deadline passes while in flight", InFlightDelay, context.DeadlineExceeded)
	})
}

// checkEndedCall calls p with ctx, which ends after endsIn, and checks that
// the call returns within the grace period after that with an error
// matching want.
func checkEndedCall[P any](t *testing.T, s Subject[P], ctx context.Context, p P, when string, endsIn time.Duration, want error) {
	t.Helper()
	err, ok := Within(endsIn+s.Config.CancelGrace, func() error { return s.Call(ctx, p) })
	if !ok {
		t.Errorf("a call %s must return within %v of its context ending; it had not", when, s.Config.CancelGrace)
		return
	}
	CheckContextError(t, when, err, want)
}

// RunFailureCases runs the Errors subtests, one per kind: a call made to
// fail as the kind returns an error that matches the kind's sentinel and no
// other, agrees with memcore.IsTransient (MatchesKind), and keeps the native
// error reachable (NativeErrorReachable, when the harness can tell).
func RunFailureCases[P any](t *testing.T, s Subject[P]) {
	for _, k := range Kinds {
		t.Run(k.Name, func(t *testing.T) { runFailureCase(t, s, k) })
	}
}

func runFailureCase[P any](t *testing.T, s Subject[P], k Kind) {
	p, h, err := s.Failing(t, k.Err)
	if reason := UnsupportedReason(err); reason != "" {
		t.Skipf("the harness cannot make a %s fail as %s: %s", s.Noun, k.Name, reason)
	}
	if err != nil {
		t.Fatalf("%s: the harness could not make a %s failing as %s: %v", s.Suite, s.Noun, k.Name, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), s.Config.CallTimeout)
	defer cancel()
	callErr, ok := Within(s.Config.CallTimeout+s.Config.CancelGrace, func() error { return s.Call(ctx, p) })
	if !ok {
		t.Errorf("a call made to fail as %s must return; still running %v after its %v deadline",
			k.Name, s.Config.CancelGrace, s.Config.CallTimeout)
		return
	}
	if callErr == nil {
		t.Errorf("a call made to fail as %s must return an error; it returned none", k.Name)
		return
	}
	t.Run("MatchesKind", func(t *testing.T) { CheckFailure(t, callErr, k) })
	t.Run("NativeErrorReachable", func(t *testing.T) {
		nh, ok := h.(nativeErrorHarness)
		if !ok {
			t.Skipf("the harness does not implement %s.NativeErrorHarness, so the native error cannot be looked for", s.Suite)
		}
		if !nh.AsNative(callErr) {
			t.Errorf("a %s failure must keep the %s's native error reachable with errors.As; "+
				"AsNative is false for %q (%T)", k.Name, s.Noun, callErr, callErr)
		}
	})
}

// The ranges of the settings the provider suites share. The durations are
// bounded so that deadlines computed from them cannot overflow; the
// concurrency so that a slip cannot start millions of goroutines.
const (
	// MaxDuration is the largest CallTimeout and CancelGrace.
	MaxDuration = 24 * time.Hour
	// MinConcurrency is the smallest Concurrency other than 0: one call
	// alone is not concurrent.
	MinConcurrency = 2
	// MaxConcurrency is the largest Concurrency.
	MaxConcurrency = 1000
)

// Validate reports every field of c out of range at once, in a
// *memcore.ConfigError of the suite named suite ("llmtest"), or returns
// nil. A zero field means its default.
func (c Config) Validate(suite string) error {
	def := DefaultConfig()
	var bad memcore.FieldErrors
	bad.Check(c.CallTimeout >= 0 && c.CallTimeout <= MaxDuration, "CallTimeout", c.CallTimeout,
		fmt.Sprintf("more than 0 and at most %v (0 means %v)", MaxDuration, def.CallTimeout))
	bad.Check(c.CancelGrace >= 0 && c.CancelGrace <= MaxDuration, "CancelGrace", c.CancelGrace,
		fmt.Sprintf("more than 0 and at most %v (0 means %v)", MaxDuration, def.CancelGrace))
	bad.Check(c.Concurrency == 0 || (c.Concurrency >= MinConcurrency && c.Concurrency <= MaxConcurrency), "Concurrency", c.Concurrency,
		fmt.Sprintf("%d–%d (0 means %d)", MinConcurrency, MaxConcurrency, def.Concurrency))
	return bad.Err(suite, "")
}

// WithDefaults returns c with every zero field replaced by its default.
func (c Config) WithDefaults() Config {
	def := DefaultConfig()
	c.CallTimeout = cmp.Or(c.CallTimeout, def.CallTimeout)
	c.CancelGrace = cmp.Or(c.CancelGrace, def.CancelGrace)
	c.Concurrency = cmp.Or(c.Concurrency, def.Concurrency)
	return c
}

// FailNow fails t at once (t.Fatalf) when err, the error of a suite's
// Config.Validate, is not nil: the message names every bad field, the
// value given and the values allowed. A suite calls it before running any
// case, so that it never runs with other values than the ones asked for.
func FailNow(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%v; the suite did not run", err)
	}
}
