// Package embedtest is the conformance suite for implementations of
// [memcore.Embedder]. An embedder module proves itself by calling [Run] from
// one of its tests with a [HarnessMaker]:
//
//	func TestConformance(t *testing.T) {
//		embedtest.Run(t, func(ctx context.Context, t *testing.T) (embedtest.Harness, error) {
//			return newHarness(t), nil
//		}, embedtest.Config{})
//	}
//
// The suite checks what memcore's contract asks of every embedder: one
// vector per input, in input order, also for inputs larger than the batch
// limit; no call for zero inputs; vectors of one consistent dimension, of
// unit length, identical for identical texts, and closer for related texts
// than for unrelated ones; a stable, non-empty Model; the context honoured
// before and during a call; each failure kind mapped to its sentinel of
// memcore's error taxonomy with the native error still reachable; and safe
// concurrent use.
//
// The texts the suite embeds are ordinary English sentences, so it runs as
// well against a live API as against an httptest server or a fake.
//
// # Limitations and skips
//
// A [Harness] declares its embedder's limits in [Capabilities] (maximum
// batch, dimension) and its limitations with their reasons (nondeterministic
// or unnormalised vectors); the zero value claims full support. Cases that
// need an optional harness interface ([CallCounter], [SlowHarness],
// [NativeErrorHarness]) or a failure the harness cannot produce (an error
// wrapping errors.ErrUnsupported) are skipped, and every skip says why.
// Anything else that misbehaves fails, with a message that states the broken
// rule.
//
// # Configuration
//
// A [Config] adjusts the suite to the implementation (a live API is slower
// than a fake): CallTimeout, CancelGrace and Concurrency. A zero field
// means its default, so Config{} is [DefaultConfig]. A field out of range
// makes [Run] fail the test at once, naming every such field and the values
// it accepts, in a *memcore.ConfigError's message, and no case runs.
package embedtest
