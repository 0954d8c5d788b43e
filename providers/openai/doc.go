// Package openai implements forgemem's [memcore.LLMProvider] and
// [memcore.Embedder] on the OpenAI API, through
// github.com/sashabaranov/go-openai, and on any server that speaks the same
// wire format (Ollama, vLLM, the llama.cpp server, LiteLLM and other
// gateways) by setting [Config.BaseURL].
//
// # Default models
//
// An empty [Config.Model] means [DefaultModel] and an empty
// [Config.EmbeddingModel] means [DefaultEmbeddingModel]. A
// CompletionRequest whose Model is empty uses the configured Model; one
// that names a model uses that model for the call. The defaults are
// OpenAI's names, also when [Config.BaseURL] points at another server: set
// Model and EmbeddingModel to names that server serves. A server that does
// not serve a name fails the first call that uses it with an error
// wrapping [memcore.ErrInvalidRequest] (typically HTTP 404, model not
// found); [New] cannot tell, as it makes no network call.
//
// # Configuration
//
// [New] takes a [Config]. A zero field means its default, so
// Config{APIKey: key} is [DefaultConfig] with the key. [Config.Validate]
// reports every mistake at once in a *memcore.ConfigError, matching
// memcore.ErrInvalidConfig (and [ErrInvalidConfig], the same value), that
// names each bad field without showing the API key; nothing is clamped.
//
// # Completions
//
// [Client.Complete] sends one chat completion: the system prompt as a
// leading "system" message, then the conversation. A request with a
// ResponseSchema asks for response_format {"type": "json_schema"} with the
// schema; "strict": true is sent when the schema meets OpenAI's strict-mode
// rules (every object lists all its properties in "required" and sets
// "additionalProperties": false, no allOf/oneOf/not/if…), and false
// otherwise, so that any valid schema can be used. Token usage is returned.
//
// A Temperature of exactly 0 is sent as "temperature": 0. go-openai's
// request field is a float32 with omitempty, which drops 0 (its maintainers
// suggest math.SmallestNonzeroFloat32 instead, which some servers divide
// by); this package writes the 0 into the JSON body itself.
//
// # Embeddings
//
// [Client.Embed] asks for float vectors, with "dimensions" when
// [Config.Dimensions] is set, in requests of at most [Config.MaxBatch]
// inputs (default and maximum 2048, OpenAI's limit), sent one after
// another. Each reply is put back in input order by the "index" of its
// items, not by their order in the reply; a reply with a missing,
// duplicated or out-of-range index, the wrong number of vectors, or vectors
// of the wrong length is [memcore.ErrInvalidResponse]. Vectors are returned
// as sent: OpenAI's are unit length, other servers' may not be, and this
// package does not renormalise them. [Client.Model] is the embedding model
// name, with "@<dimensions>" appended when Dimensions is set.
//
// # Errors
//
// Every error of Complete and Embed wraps one of memcore's sentinels
// together with the native error, so errors.Is finds the kind and errors.As
// still reaches *openai.APIError (a JSON error body), *openai.RequestError
// (any other error body, such as a proxy's plain-text "503 Service
// Unavailable") or *url.Error:
//
//	401, 403                                → memcore.ErrUnauthenticated
//	429                                     → memcore.ErrRateLimited
//	429 with code insufficient_quota        → memcore.ErrUnauthenticated (permanent: out of credit)
//	413; 400/422 naming the context length  → memcore.ErrInputTooLarge
//	other 4xx (400, 404 unknown model, 422) → memcore.ErrInvalidRequest
//	408, 5xx, connection and read failures  → memcore.ErrUnavailable
//	malformed 2xx body, bad vectors, empty reply → memcore.ErrInvalidResponse
//
// When the caller's context ends, its error (context.Canceled or
// context.DeadlineExceeded) is returned instead. A Timeout of
// [Config.HTTPClient] is memcore.ErrUnavailable and is not reported as
// context.DeadlineExceeded, so memcore.IsTransient treats it as worth
// retrying. The Client never retries by itself: wrap calls in
// [memcore.Retry].
package openai
