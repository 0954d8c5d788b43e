package embedtest

import (
	"context"
	"testing"
	"time"

	"github.com/forgemem/forgemem/conformance/internal/conform"
	"github.com/forgemem/forgemem/memcore"
)

// Harness makes the embedders one subtest runs against. Run asks the
// [HarnessMaker] for a new Harness in every subtest and closes it at the end
// of the subtest.
//
// A Harness may also implement [CallCounter], [SlowHarness] and
// [NativeErrorHarness]; the cases that need them are skipped, with the
// reason, when it does not.
type Harness interface {
	// NewEmbedder returns a working embedder.
	NewEmbedder(ctx context.Context) (memcore.Embedder, error)

	// NewFailingEmbedder returns an embedder whose next call fails as kind,
	// one of memcore.ErrRateLimited, ErrUnauthenticated, ErrUnavailable,
	// ErrInputTooLarge, ErrInvalidRequest and ErrInvalidResponse. The
	// failure should come from where it comes from in production — for an
	// embedder speaking HTTP, a server answering in the vendor's wire format
	// (status code, error body, or for ErrInvalidResponse a body with the
	// wrong number of vectors) — so that the suite tests the embedder's
	// mapping to the taxonomy rather than the harness's. An error wrapping
	// errors.ErrUnsupported skips the cases of that kind, with the error's
	// text as the reason.
	NewFailingEmbedder(ctx context.Context, kind error) (memcore.Embedder, error)

	// Capabilities declares the embedder's limits and limitations. The zero
	// value claims full support: unit-length vectors, identical vectors
	// for identical texts, and no batch limit.
	Capabilities() Capabilities

	// Close releases what the harness holds (servers, connections).
	Close()
}

// HarnessMaker makes a fresh [Harness] for one subtest. t is the subtest's,
// for t.TempDir, t.Cleanup and the like; ctx ends when the subtest does.
type HarnessMaker func(ctx context.Context, t *testing.T) (Harness, error)

// Capabilities declares what the suite may expect of an embedder. The zero
// value claims full support; each limitation is a string saying why the
// embedder has it, which the cases it affects report.
type Capabilities struct {
	// MaxBatch is the most texts one API call embeds, 0–100000. The suite
	// embeds 2×MaxBatch+1 texts in one Embed, which must be split, and,
	// with a [CallCounter], checks that it was. 0 means no limit; the suite
	// then embeds 100 texts at once. A value out of range fails the case
	// Embed/BatchLargerThanMax.
	MaxBatch int
	// Dimension is the length the vectors must have, at least 0; 0 means
	// not declared, and only a consistent length is required. A negative
	// value fails the case Embed/ConsistentDimension.
	Dimension int
	// Nondeterministic says why identical texts may give slightly
	// different vectors; they must then still be near-identical (cosine
	// similarity at least 0.99) instead of identical.
	Nondeterministic string
	// NotNormalized says why vectors are not of unit length.
	NotNormalized string
}

// CallCounter is implemented by a harness that can count the API calls its
// embedders make (for a provider speaking HTTP, the requests its httptest
// server received), so that the suite can check that zero texts make no call
// and that large inputs are split.
type CallCounter interface {
	// Calls returns the number of calls made so far by the embedders of
	// this harness.
	Calls() int
}

// SlowHarness is implemented by a harness that can make an embedder whose
// calls take far longer than any test waits — typically backed by a server
// that holds every request until the client goes away — so that the suite
// can cancel a call while it is in flight. An error wrapping
// errors.ErrUnsupported skips those cases, with the error's text as the
// reason.
type SlowHarness interface {
	// NewSlowEmbedder returns an embedder whose calls return only when
	// their context ends.
	NewSlowEmbedder(ctx context.Context) (memcore.Embedder, error)
}

// NativeErrorHarness is implemented by a harness that can tell whether an
// error still carries the embedder's native error (its SDK's API error
// type), usually with errors.As. When the harness implements it, every
// failure kind must keep the native error reachable.
type NativeErrorHarness interface {
	// AsNative reports whether errors.As finds the embedder's native error
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
	// live APIs.
	CallTimeout time.Duration
	// CancelGrace is how soon after its context ends a call must return:
	// more than 0 and at most 24h. The default, 5s, is lenient so that a
	// busy machine (tests in parallel, -race) does not fail a correct
	// embedder; one that ignores its context typically hangs until an HTTP
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
func (c Config) Validate() error { return conform.Config(c).Validate("embedtest") }
