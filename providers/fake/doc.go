// Package fake provides deterministic, offline test doubles for forgemem's
// model providers: a scripted [LLM] implementing [memcore.LLMProvider] and a
// hashing [Embedder] implementing [memcore.Embedder].
//
// Both are safe for concurrent use, honour their context, and pass the
// conformance suites in github.com/forgemem/forgemem/conformance/llmtest and
// .../embedtest, so code tested against them behaves the same against a
// real provider.
//
// # The scripted LLM
//
// An [LLM] answers from a queue of replies ([LLMConfig].Replies,
// [LLM.Enqueue]) and then from a reply function ([LLMConfig].ReplyFunc). It records every request
// ([LLM.Requests]) and counts calls ([LLM.Calls]). A call that nothing was
// scripted for fails with an error wrapping [memcore.ErrInvalidResponse].
//
// # The hashing embedder
//
// An [Embedder] turns a text into a vector without a model: it lower-cases
// the text, splits it into words, and hashes each word, each pair of
// adjacent words and each character trigram of a word (with word-boundary
// markers) into a fixed number of dimensions (1024 by default) with a random
// sign, then scales the vector to unit length. Very common English words
// ("the", "was", "with") are damped, with their trigrams and the pairs they
// are in, so that a text is about its less common words. Texts that share
// words or word parts therefore point in similar directions, so "the build
// cache is stale" is closer to "stale build caches" than to "my cat likes
// fish", and the same text always gives the same vector, on every machine.
//
// # Latency and failures
//
// The Latency field of [LLMConfig] and [EmbedderConfig] delays every call
// (the delay ends early, with the context's error, when the context ends),
// and their FailNext and FailWith fields or the FailNext methods make the
// next calls fail. Failing with one of memcore's taxonomy
// sentinels gives the error a real provider would return: the sentinel
// wrapped together with a native [*APIError] carrying a matching HTTP
// status, so that both errors.Is and errors.As work:
//
//	llm, err := fake.NewLLM(fake.LLMConfig{Replies: []string{"ok"}, FailNext: 2, FailWith: memcore.ErrRateLimited})
//
// gives an LLM that fails twice with an error matching
// [memcore.ErrRateLimited] (and [memcore.IsTransient]), then answers "ok".
//
// # Configuration
//
// [NewLLM] takes an [LLMConfig] and [NewEmbedder] an [EmbedderConfig]. A
// zero field means its default, so LLMConfig{} is [DefaultLLMConfig] and
// EmbedderConfig{} is [DefaultEmbedderConfig]. Nothing is clamped: a field
// out of range (a negative latency, a dimension above 65536, …) makes the
// constructor return a *memcore.ConfigError, matching
// memcore.ErrInvalidConfig, that names every such field, the value given and
// the values allowed. FailNext with a negative count or a nil error
// schedules nothing and returns such an error too. [ErrInvalidConfig] is
// memcore.ErrInvalidConfig under this package's name.
package fake
