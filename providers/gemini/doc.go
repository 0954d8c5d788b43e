// Package gemini implements forgemem's model provider contracts,
// [memcore.LLMProvider] and [memcore.Embedder], on Google's Gemini API
// through google.golang.org/genai, the maintained successor of the
// deprecated github.com/google/generative-ai-go.
//
// A [Client] made by [New] from a [Config] (only the API key is required)
// completes conversations with generateContent — system instruction, and
// JSON output constrained by a response schema when one is asked for — and
// embeds texts with batchEmbedContents, in batches of at most 100, with a
// configurable output dimensionality and task type. Returned vectors are
// scaled to unit length.
//
// # Default models
//
// An empty [Config.Model] means [DefaultModel] and an empty
// [Config.EmbeddingModel] means [DefaultEmbeddingModel]. A
// CompletionRequest whose Model is empty uses the configured Model; one
// that names a model uses that model for the call. The defaults are
// Gemini's names, also when [Config.BaseURL] points at another server: set
// Model and EmbeddingModel to names that server serves. A server that does
// not serve a name fails the first call that uses it with an error
// wrapping [memcore.ErrInvalidRequest] (typically HTTP 404, model not
// found); [New] cannot tell, as it makes no network call.
//
// # Configuration and errors
//
// [New] takes a [Config]; a zero field means its default, so
// Config{APIKey: key} is [DefaultConfig] with the key. New, like
// [Config.Validate], reports every bad field at once, in one
// *memcore.ConfigError matching memcore.ErrInvalidConfig (and
// [ErrInvalidConfig], the same value) that names each field and the values
// it accepts; nothing is clamped. Nothing is read from the environment: the SDK's GEMINI_API_KEY,
// GOOGLE_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GEMINI_BASE_URL and
// GOOGLE_CLOUD_* variables have no effect on a Client.
//
// Failures are reported through memcore's error taxonomy: the returned
// error matches one of memcore.ErrRateLimited, ErrUnauthenticated,
// ErrUnavailable, ErrInputTooLarge, ErrInvalidRequest or ErrInvalidResponse
// with errors.Is, and errors.As still reaches the SDK's genai.APIError (as
// a value or as a pointer). Errors of the caller's context are passed
// through. The client does not retry; wrap calls in [memcore.Retry].
package gemini
