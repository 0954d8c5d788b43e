package openai

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Defaults used when the corresponding [Config] field is left empty.
const (
	// DefaultBaseURL is the OpenAI API endpoint.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultModel is the chat model of [Client.Complete]: OpenAI's small,
	// inexpensive chat model, with structured outputs. It is OpenAI's name:
	// another server (set through [Config.BaseURL]) needs [Config.Model]
	// set to a model it serves.
	DefaultModel = "gpt-4o-mini"
	// DefaultEmbeddingModel is the embedding model of [Client.Embed]:
	// OpenAI's small embedding model, 1536 dimensions natively. It is
	// OpenAI's name: another server needs [Config.EmbeddingModel] set to a
	// model it serves.
	DefaultEmbeddingModel = "text-embedding-3-small"
	// MaxBatchLimit is the largest number of inputs OpenAI accepts in one
	// embeddings request, and the default and upper bound of
	// [Config.MaxBatch].
	MaxBatchLimit = 2048
)

// ErrInvalidConfig is wrapped by the error [New] returns for an unusable
// [Config], so callers can tell a configuration mistake from other
// failures, for example
//
//	openai: invalid config: MaxBatch is 5000, want 1–2048 (0 means 2048)
//
// The message names every bad field, the value given (never the API key)
// and the values allowed. Nothing is clamped.
var ErrInvalidConfig = errors.New("invalid config")

// Config configures a [Client]. Only APIKey is required, and only for
// api.openai.com; everything else has a default.
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

	// Model is the chat model Complete uses when the request's Model is
	// empty; empty means [DefaultModel]. With BaseURL set to another
	// server, set it to a model that server serves: the default is
	// OpenAI's name (see the package documentation).
	Model string

	// EmbeddingModel is the model Embed uses; empty means
	// [DefaultEmbeddingModel]. With BaseURL set to another server, set it
	// to a model that server serves: the default is OpenAI's name.
	EmbeddingModel string

	// Dimensions, when > 0, asks for vectors of that length (the
	// "dimensions" request parameter) and becomes part of Model(). 0 means
	// the model's native length. On api.openai.com it must not exceed the
	// model's native length and is rejected for text-embedding-ada-002.
	Dimensions int

	// MaxBatch is the largest number of inputs sent in one embeddings
	// request; Embed splits larger inputs. 0 means [MaxBatchLimit];
	// otherwise 1–MaxBatchLimit.
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

// reservedHeaders are the headers Config.Headers may not set: the client
// sets them itself.
var reservedHeaders = []string{"Accept", "Authorization", "Content-Length", "Content-Type", "Host"}

// problems collects what is wrong with a Config, one message per bad field.
type problems []string

// add records a bad field: "<field> is <value>, want <allowed>".
func (p *problems) add(field string, value any, want string) {
	*p = append(*p, fmt.Sprintf("%s is %v, want %s", field, value, want))
}

// err returns one error wrapping ErrInvalidConfig that lists p, or nil.
func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return fmt.Errorf("openai: %w: %s", ErrInvalidConfig, strings.Join(p, "; "))
}

// validate checks cfg and applies the defaults. It reports every bad field
// at once, in one error wrapping ErrInvalidConfig. The checks that depend
// on the server (the API key and the model names for api.openai.com) are
// made only when BaseURL is usable.
func validate(cfg Config) (settings, error) {
	s := settings{Config: cfg}
	var bad problems
	if s.BaseURL == "" {
		s.BaseURL = DefaultBaseURL
	}
	if s.Model == "" {
		s.Model = DefaultModel
	}
	if s.EmbeddingModel == "" {
		s.EmbeddingModel = DefaultEmbeddingModel
	}
	if s.MaxBatch == 0 {
		s.MaxBatch = MaxBatchLimit
	}

	s.BaseURL = strings.TrimRight(s.BaseURL, "/")
	u, err := url.Parse(s.BaseURL)
	baseOK := err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.RawQuery == "" && u.Fragment == ""
	if !baseOK {
		bad.add("BaseURL", strconv.Quote(cfg.BaseURL), fmt.Sprintf("an absolute http or https URL without query or fragment, such as %q", DefaultBaseURL))
	}
	s.official = baseOK && strings.EqualFold(u.Hostname(), "api.openai.com")

	if s.APIKey != strings.TrimSpace(s.APIKey) || strings.ContainsFunc(s.APIKey, unicode.IsControl) {
		bad = append(bad, "APIKey has surrounding white space or control characters, want none")
	}
	if s.official && s.APIKey == "" {
		bad.add("APIKey", "empty", fmt.Sprintf("the API key of %s (it may be empty only for another server, set through BaseURL)", u.Host))
	}

	// The model names are checked for api.openai.com only, unless
	// AllowUnknownModels says a newer model is meant.
	checkOpenAI := s.official && !s.AllowUnknownModels
	const escape = "set AllowUnknownModels for a model newer than this package, or BaseURL for another server"
	if checkModelName(&bad, "Model", s.Model) && checkOpenAI && !isOpenAIChatModel(s.Model) {
		bad.add("Model", strconv.Quote(s.Model), "an OpenAI chat model: gpt-*, chatgpt-*, o1*, o3*, o4* or ft:*, not an instruct, embedding, audio, image or moderation model ("+escape+")")
	}
	info, known := knownEmbeddingModels[s.EmbeddingModel]
	if checkModelName(&bad, "EmbeddingModel", s.EmbeddingModel) && checkOpenAI && !known {
		bad.add("EmbeddingModel", strconv.Quote(s.EmbeddingModel), "text-embedding-3-small, text-embedding-3-large or text-embedding-ada-002 ("+escape+")")
	}

	switch {
	case s.Dimensions < 0:
		bad.add("Dimensions", s.Dimensions, "at least 0 (0 means the model's native length)")
	case checkOpenAI && known && s.Dimensions > 0 && !info.dimensionable:
		bad.add("Dimensions", s.Dimensions, fmt.Sprintf("0 for %s, which does not support it", s.EmbeddingModel))
	case checkOpenAI && known && s.Dimensions > info.native:
		bad.add("Dimensions", s.Dimensions, fmt.Sprintf("0–%d for %s", info.native, s.EmbeddingModel))
	}
	if checkOpenAI && known {
		s.nativeDims = info.native
	}
	if s.MaxBatch < 1 || s.MaxBatch > MaxBatchLimit {
		bad.add("MaxBatch", cfg.MaxBatch, fmt.Sprintf("1–%d (0 means %d)", MaxBatchLimit, MaxBatchLimit))
	}

	var reserved []string
	for name := range s.Headers {
		if h := http.CanonicalHeaderKey(name); slices.Contains(reservedHeaders, h) && !slices.Contains(reserved, h) {
			reserved = append(reserved, h)
		}
	}
	if len(reserved) > 0 {
		slices.Sort(reserved)
		bad = append(bad, fmt.Sprintf("Headers sets %s, want none of %s (the client sets them)",
			strings.Join(reserved, ", "), strings.Join(reservedHeaders, ", ")))
	}
	return s, bad.err()
}

// checkModelName records field as bad when name holds white space or
// control characters, which no server accepts, and reports whether it is
// usable.
func checkModelName(bad *problems, field, name string) bool {
	if strings.ContainsFunc(name, isSpaceOrControl) {
		bad.add(field, strconv.Quote(name), "a name without white space or control characters")
		return false
	}
	return true
}

func isSpaceOrControl(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

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
