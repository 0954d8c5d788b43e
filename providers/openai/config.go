package openai

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
)

// DefaultBaseURL is the OpenAI API endpoint used when [Config.BaseURL] is
// empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// MaxBatchLimit is the largest number of inputs OpenAI accepts in one
// embeddings request, and the default and upper bound of [Config.MaxBatch].
const MaxBatchLimit = 2048

// ErrConfig is wrapped by every error [New] returns for an unusable
// [Config], so callers can tell a configuration mistake from other failures.
var ErrConfig = errors.New("openai: invalid config")

// Config configures a [Client]. Only APIKey (for api.openai.com) and one of
// Model or EmbeddingModel are required; everything else has a default.
type Config struct {
	// APIKey is sent as "Authorization: Bearer <APIKey>". It is required
	// when the client talks to api.openai.com (BaseURL empty or pointing
	// there) and optional for other servers: when empty no Authorization
	// header is sent, which is what a local Ollama, vLLM or llama.cpp
	// server expects.
	APIKey string

	// BaseURL is the API root including the version path, for example
	// "https://api.openai.com/v1" (the default) or
	// "http://localhost:11434/v1" for Ollama. Requests go to
	// BaseURL+"/chat/completions" and BaseURL+"/embeddings". A trailing
	// slash is ignored.
	BaseURL string

	// Organization and Project, when set, are sent as the
	// OpenAI-Organization and OpenAI-Project headers.
	Organization string
	Project      string

	// Headers are added to every request (for gateways that want their own
	// authentication or routing headers). They cannot replace the
	// Authorization or Content-Type headers.
	Headers http.Header

	// Model is the chat model used by Complete when the request names none,
	// for example "gpt-4o-mini". Empty means the Client is used for
	// embeddings only (and every completion request must name its model).
	Model string

	// EmbeddingModel is the model used by Embed, for example
	// "text-embedding-3-small". Empty means the Client is used for
	// completions only.
	EmbeddingModel string

	// Dimensions, when > 0, asks for vectors of that length (the
	// "dimensions" request parameter) and becomes part of Model(). 0 means
	// the model's native length. On api.openai.com it must not exceed the
	// model's native length and is rejected for text-embedding-ada-002.
	Dimensions int

	// MaxBatch is the largest number of inputs sent in one embeddings
	// request; Embed splits larger inputs. 0 means [MaxBatchLimit]; it must
	// be between 1 and MaxBatchLimit.
	MaxBatch int

	// HTTPClient sends the requests; nil means a new &http.Client{}.
	// Cancellation and deadlines come from the context passed to each
	// call; a Timeout set here applies as well (and is reported as
	// memcore.ErrUnavailable, not as a context error).
	HTTPClient *http.Client

	// AllowUnknownModels turns off the model-name checks that New applies
	// when talking to api.openai.com (see [New]). Use it for a model
	// released after this package. Names are never checked for other
	// servers.
	AllowUnknownModels bool
}

// embeddingModelInfo describes an OpenAI embedding model.
type embeddingModelInfo struct {
	native        int  // vector length without "dimensions"
	dimensionable bool // accepts the "dimensions" parameter
}

// knownEmbeddingModels are OpenAI's embedding models, checked when the
// client talks to api.openai.com.
var knownEmbeddingModels = map[string]embeddingModelInfo{
	"text-embedding-3-small": {native: 1536, dimensionable: true},
	"text-embedding-3-large": {native: 3072, dimensionable: true},
	"text-embedding-ada-002": {native: 1536, dimensionable: false},
}

// chatModelPrefixes are the families of OpenAI models served by the chat
// completions endpoint: gpt-*, chatgpt-*, the o-series reasoning models and
// fine-tunes ("ft:<base>:...").
var chatModelPrefixes = []string{"gpt-", "chatgpt-", "ft:", "o1", "o3", "o4"}

// nonChatModelMarkers are parts of OpenAI model names that the chat
// completions endpoint rejects: legacy completion, embedding, speech,
// image and moderation models.
var nonChatModelMarkers = []string{
	"instruct", "embedding", "tts", "transcribe", "realtime", "gpt-image",
	"dall-e", "whisper", "moderation", "davinci", "babbage", "curie",
}

// settings is a validated Config with the defaults applied.
type settings struct {
	Config
	official bool // BaseURL is api.openai.com
	// nativeDims is the embedding model's native vector length when it is
	// known (api.openai.com and a known model), else 0.
	nativeDims int
}

// validate checks cfg and applies the defaults. Every error wraps ErrConfig.
func validate(cfg Config) (settings, error) {
	s := settings{Config: cfg}
	if s.BaseURL == "" {
		s.BaseURL = DefaultBaseURL
	}
	s.BaseURL = strings.TrimRight(s.BaseURL, "/")
	u, err := url.Parse(s.BaseURL)
	if err != nil {
		return s, fmt.Errorf("%w: BaseURL %q: %w", ErrConfig, cfg.BaseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return s, fmt.Errorf("%w: BaseURL %q: want an absolute http or https URL such as %q", ErrConfig, cfg.BaseURL, DefaultBaseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return s, fmt.Errorf("%w: BaseURL %q: must not carry a query or fragment", ErrConfig, cfg.BaseURL)
	}
	s.official = strings.EqualFold(u.Hostname(), "api.openai.com")

	if s.APIKey != strings.TrimSpace(s.APIKey) || strings.ContainsFunc(s.APIKey, unicode.IsControl) {
		return s, fmt.Errorf("%w: APIKey has surrounding white space or control characters", ErrConfig)
	}
	if s.official && s.APIKey == "" {
		return s, fmt.Errorf("%w: APIKey is required for %s (it may be empty only for other servers set through BaseURL)", ErrConfig, u.Host)
	}

	if s.Model == "" && s.EmbeddingModel == "" {
		return s, fmt.Errorf("%w: set Model (completions), EmbeddingModel (embeddings) or both", ErrConfig)
	}
	if err := checkModelName(s.Model); err != nil {
		return s, fmt.Errorf("%w: Model: %w", ErrConfig, err)
	}
	if err := checkModelName(s.EmbeddingModel); err != nil {
		return s, fmt.Errorf("%w: EmbeddingModel: %w", ErrConfig, err)
	}

	if s.Dimensions < 0 {
		return s, fmt.Errorf("%w: Dimensions %d is negative (0 means the model's native length)", ErrConfig, s.Dimensions)
	}
	if s.Dimensions > 0 && s.EmbeddingModel == "" {
		return s, fmt.Errorf("%w: Dimensions is set but EmbeddingModel is empty", ErrConfig)
	}
	if s.MaxBatch == 0 {
		s.MaxBatch = MaxBatchLimit
	}
	if s.MaxBatch < 1 || s.MaxBatch > MaxBatchLimit {
		return s, fmt.Errorf("%w: MaxBatch %d out of range 1..%d (0 means %d)", ErrConfig, cfg.MaxBatch, MaxBatchLimit, MaxBatchLimit)
	}

	if s.official && !s.AllowUnknownModels {
		if s.Model != "" && !isOpenAIChatModel(s.Model) {
			return s, fmt.Errorf("%w: Model %q is not an OpenAI chat model (set AllowUnknownModels for a model newer than this package, or BaseURL for another server)", ErrConfig, s.Model)
		}
		if s.EmbeddingModel != "" {
			info, ok := knownEmbeddingModels[s.EmbeddingModel]
			if !ok {
				return s, fmt.Errorf("%w: EmbeddingModel %q is not an OpenAI embedding model (known: text-embedding-3-small, text-embedding-3-large, text-embedding-ada-002; set AllowUnknownModels for a newer one)", ErrConfig, s.EmbeddingModel)
			}
			switch {
			case s.Dimensions > 0 && !info.dimensionable:
				return s, fmt.Errorf("%w: EmbeddingModel %q does not support Dimensions", ErrConfig, s.EmbeddingModel)
			case s.Dimensions > info.native:
				return s, fmt.Errorf("%w: Dimensions %d exceeds the %d of %q", ErrConfig, s.Dimensions, info.native, s.EmbeddingModel)
			}
			s.nativeDims = info.native
		}
	}

	for name := range s.Headers {
		switch http.CanonicalHeaderKey(name) {
		case "Authorization", "Content-Type", "Accept", "Content-Length", "Host":
			return s, fmt.Errorf("%w: Headers may not set %s", ErrConfig, http.CanonicalHeaderKey(name))
		}
	}
	return s, nil
}

// checkModelName rejects names no server accepts: white space or control
// characters anywhere. The empty name is accepted (it means "not used").
func checkModelName(name string) error {
	if strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return fmt.Errorf("%q contains white space or control characters", name)
	}
	return nil
}

// isOpenAIChatModel reports whether name belongs to a family of models that
// api.openai.com serves on the chat completions endpoint.
func isOpenAIChatModel(name string) bool {
	known := false
	for _, p := range chatModelPrefixes {
		if strings.HasPrefix(name, p) {
			known = true
			break
		}
	}
	if !known {
		return false
	}
	for _, m := range nonChatModelMarkers {
		if strings.Contains(name, m) {
			return false
		}
	}
	return true
}
