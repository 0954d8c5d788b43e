// Package conform holds what the conformance suites share: the failure kinds
// of memcore's error taxonomy and the checks of errors against them, a helper
// that waits for a call with a time limit (llmtest, embedtest), the check of
// the suites' configuration (all three), and the subprocess runner with which every
// suite's own tests prove that broken implementations fail it (llmtest,
// embedtest, storetest).
package conform

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// Kind is one failure kind of memcore's error taxonomy.
type Kind struct {
	// Name is the sentinel's name without "Err", used as a subtest name.
	Name string
	// Err is the sentinel.
	Err error
	// Transient tells whether a failure of this kind is worth retrying.
	Transient bool
}

// Kinds are the failure kinds a provider reports, in the order the suites
// test them.
var Kinds = []Kind{
	{"RateLimited", memcore.ErrRateLimited, true},
	{"Unauthenticated", memcore.ErrUnauthenticated, false},
	{"Unavailable", memcore.ErrUnavailable, true},
	{"InputTooLarge", memcore.ErrInputTooLarge, false},
	{"InvalidRequest", memcore.ErrInvalidRequest, false},
	{"InvalidResponse", memcore.ErrInvalidResponse, false},
}

// CheckFailure reports, on t, every rule that err, not nil, breaks as the
// error of a call that was made to fail as k.
func CheckFailure(t testing.TB, err error, k Kind) {
	t.Helper()
	if !errors.Is(err, k.Err) {
		t.Errorf("a %s failure must match memcore.Err%s with errors.Is; got %q (%T)", k.Name, k.Name, err, err)
	}
	for _, other := range Kinds {
		if other.Err != k.Err && errors.Is(err, other.Err) {
			t.Errorf("a %s failure must not also match memcore.Err%s; got %q", k.Name, other.Name, err)
		}
	}
	if got := memcore.IsTransient(err); got != k.Transient {
		t.Errorf("a %s failure must be reported as transient=%t by memcore.IsTransient; got %t for %q",
			k.Name, k.Transient, got, err)
	}
	for _, ctxErr := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, ctxErr) {
			t.Errorf("a %s failure with a live context must not match %v; got %q", k.Name, ctxErr, err)
		}
	}
}

// CheckContextError reports, on t, every rule that err breaks as the error
// of a call whose context ended with want (context.Canceled or
// context.DeadlineExceeded). when describes the situation, for messages.
func CheckContextError(t testing.TB, when string, err, want error) {
	t.Helper()
	if err == nil {
		t.Errorf("a call %s must fail with an error matching %v; it succeeded", when, want)
		return
	}
	if !errors.Is(err, want) {
		t.Errorf("a call %s must fail with an error matching %v (errors.Is); got %q (%T)", when, want, err, err)
	}
	for _, k := range Kinds {
		if errors.Is(err, k.Err) {
			t.Errorf("a call %s must pass the context's error through unclassified; it also matches memcore.Err%s: %q",
				when, k.Name, err)
		}
	}
}

// UnsupportedReason returns the reason for a skip when err, returned by a
// harness asked for an instance, wraps errors.ErrUnsupported, and "" when it
// does not.
func UnsupportedReason(err error) string {
	if !errors.Is(err, errors.ErrUnsupported) {
		return ""
	}
	return err.Error()
}

// Within runs call in a new goroutine and waits at most limit for it. ok is
// false when the call had not returned by then; the goroutine is then left
// to finish on its own, because a call cannot be stopped from outside.
func Within[T any](limit time.Duration, call func() T) (result T, ok bool) {
	done := make(chan T, 1)
	go func() { done <- call() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case result = <-done:
		return result, true
	case <-timer.C:
		return result, false
	}
}
