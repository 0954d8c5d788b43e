// Package llmtest is the conformance suite for implementations of
// [memcore.LLMProvider]. A provider module proves itself by calling [Run]
// from one of its tests with a [HarnessMaker]:
//
//	func TestConformance(t *testing.T) {
//		llmtest.Run(t, func(ctx context.Context, t *testing.T) (llmtest.Harness, error) {
//			return newHarness(t), nil
//		}, llmtest.Config{})
//	}
//
// The suite checks what memcore's contract asks of every provider: the
// system prompt, the whole conversation and the response schema reach the
// model; the context is honoured, before and during a call; each failure
// kind maps to its sentinel of memcore's error taxonomy (ErrRateLimited,
// ErrUnauthenticated, …) and keeps the provider's native error reachable;
// and concurrent calls are safe.
//
// # Playing the model
//
// The suite's prompts have answers that do not depend on the model: what
// codeword does the system prompt state, what JSON object does the user
// describe. A live model answers them by itself. An offline harness — a
// scripted provider, or an httptest server speaking the vendor's wire
// format — answers with [Respond], the suite's reference model. Respond sees
// only what the provider sent, so a provider that drops the system prompt or
// the response schema fails offline exactly as it would against a live
// model.
//
// # Limitations and skips
//
// A [Harness] declares what its provider does not support in
// [Capabilities], each limitation with its reason; the zero value claims
// full support. Cases that need an optional harness interface
// ([SlowHarness], [NativeErrorHarness]) or a failure the harness cannot
// produce (an error wrapping errors.ErrUnsupported) are skipped, and every
// skip says why. Anything else that misbehaves fails, with a message that
// states the broken rule.
//
// # Configuration
//
// A [Config] adjusts the suite to the implementation (a live API is slower
// than a fake): CallTimeout, CancelGrace and Concurrency. A zero field
// means its default, so Config{} is [DefaultConfig]. A field out of range
// makes [Run] fail the test at once, naming every such field and the values
// it accepts, in a *memcore.ConfigError's message, and no case runs.
package llmtest
