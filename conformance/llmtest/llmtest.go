package llmtest

import (
	"context"
	"testing"
	"time"

	"github.com/forgemem/forgemem/conformance/internal/conform"
	"github.com/forgemem/forgemem/memcore"
)

// Harness makes the providers one subtest runs against. Run asks the
// [HarnessMaker] for a new Harness in every subtest and closes it at the end
// of the subtest.
//
// A Harness may also implement [SlowHarness] and [NativeErrorHarness]; the
// cases that need them are skipped, with the reason, when it does not.
type Harness interface {
	// NewProvider returns a working provider. Its model must answer the
	// suite's prompts as [Respond] does: a live model does, an offline
	// harness calls Respond to play the model.
	NewProvider(ctx context.Context) (memcore.LLMProvider, error)

	// NewFailingProvider returns a provider whose next call fails as kind,
	// one of memcore.ErrRateLimited, ErrUnauthenticated, ErrUnavailable,
	// ErrInputTooLarge, ErrInvalidRequest and ErrInvalidResponse. The
	// failure should come from where it comes from in production — for a
	// provider speaking HTTP, a server answering in the vendor's wire format
	// (status code, error body) — so that the suite tests the provider's
	// mapping to the taxonomy rather than the harness's. An error wrapping
	// errors.ErrUnsupported skips the cases of that kind, with the error's
	// text as the reason.
	NewFailingProvider(ctx context.Context, kind error) (memcore.LLMProvider, error)

	// Capabilities declares what the provider does not support. The zero
	// value claims full support.
	Capabilities() Capabilities

	// Close releases what the harness holds (servers, connections).
	Close()
}

// HarnessMaker makes a fresh [Harness] for one subtest. t is the subtest's,
// for t.TempDir, t.Cleanup and the like; ctx ends when the subtest does.
type HarnessMaker func(ctx context.Context, t *testing.T) (Harness, error)

// Capabilities declares the limitations of a provider. Each field, when not
// empty, says why the provider has the limitation; the cases that need the
// capability are skipped with that reason. The zero value claims full
// support.
type Capabilities struct {
	// NoJSONSchema says why CompletionRequest.ResponseSchema is not honoured
	// (the reply may not be a bare JSON document matching the schema).
	NoJSONSchema string
	// NoUsage says why CompletionResponse.Usage is not reported.
	NoUsage string
}

// SlowHarness is implemented by a harness that can make a provider whose
// calls take far longer than any test waits — typically backed by a server
// that holds every request until the client goes away — so that the suite
// can cancel a call while it is in flight. An error wrapping
// errors.ErrUnsupported skips those cases, with the error's text as the
// reason.
type SlowHarness interface {
	// NewSlowProvider returns a provider whose calls return only when
	// their context ends.
	NewSlowProvider(ctx context.Context) (memcore.LLMProvider, error)
}

// NativeErrorHarness is implemented by a harness that can tell whether an
// error still carries the provider's native error (its SDK's API error
// type), usually with errors.As. When the harness implements it, every
// failure kind must keep the native error reachable.
type NativeErrorHarness interface {
	// AsNative reports whether errors.As finds the provider's native error
	// in err.
	AsNative(err error) bool
}

// Config adjusts how [Run] runs the suite to the implementation (a live
// API is slower than a fake). A zero field means its default, so Config{}
// is [DefaultConfig]. A field out of range makes Run fail the test at once,
// naming every such field and the values it accepts, and no case runs.
type Config struct {
	// CallTimeout is how long an ordinary call may take before it fails
	// the case: more than 0 and at most 24h; the default, a minute, suits
	// live models.
	CallTimeout time.Duration
	// CancelGrace is how soon after its context ends a call must return:
	// more than 0 and at most 24h. The default, 5s, is lenient so that a
	// busy machine (tests in parallel, -race) does not fail a correct
	// provider; one that ignores its context typically hangs until an HTTP
	// timeout, far longer.
	CancelGrace time.Duration
	// Concurrency is how many calls the concurrency case makes at once:
	// 2–1000; the default is 8.
	Concurrency int
}

// DefaultConfig returns the suite's defaults: a minute per call, 5s of
// grace after a context ends, 8 concurrent calls.
func DefaultConfig() Config { return Config(conform.DefaultConfig()) }

// Validate reports every field of c out of range at once, in a
// *memcore.ConfigError (which matches memcore.ErrInvalidConfig), or
// returns nil.
func (c Config) Validate() error { return conform.Config(c).Validate("llmtest") }
