package openai

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/forgemem/forgemem/memcore"
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

// ErrInvalidConfig is memcore.ErrInvalidConfig, the one sentinel every
// configuration error of forgemem matches; it is kept here so that
// errors.Is(err, openai.ErrInvalidConfig) goes on working. [New] and
// [Config.Validate] return a *memcore.ConfigError matching it for an
// unusable [Config], for example
//
//	openai: invalid config: MaxBatch is 5000, want 1–2048 (0 means 2048)
//
// The message names every bad field, the value given (never the API key)
// and the values allowed. Nothing is clamped.
var ErrInvalidConfig = memcore.ErrInvalidConfig

// Config configures a [Client]. Only APIKey is required, and only for
// api.openai.com; everything else has a default, and a zero field means
// its default, so Config{APIKey: key} is [DefaultConfig] with the key.
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

// DefaultConfig returns the defaults of a [Client]: [DefaultBaseURL],
// [DefaultModel], [DefaultEmbeddingModel], the model's native vector length
// and batches of [MaxBatchLimit]. APIKey is empty: set it for
// api.openai.com.
func DefaultConfig() Config {
	return Config{BaseURL: DefaultBaseURL, Model: DefaultModel, EmbeddingModel: DefaultEmbeddingModel, MaxBatch: MaxBatchLimit}
}

// Validate reports every mistake in c at once, in a *memcore.ConfigError
// (which matches [ErrInvalidConfig]), or returns nil; see [New] for the
// rules. It makes no network call.
func (c Config) Validate() error {
	_, err := validate(c)
	return err
}

// withDefaults returns c with every empty field that has a default set to
// it, and BaseURL without its trailing slash.
func (c Config) withDefaults() Config {
	def := DefaultConfig()
	c.BaseURL = strings.TrimRight(cmp.Or(c.BaseURL, def.BaseURL), "/")
	c.Model = cmp.Or(c.Model, def.Model)
	c.EmbeddingModel = cmp.Or(c.EmbeddingModel, def.EmbeddingModel)
	c.MaxBatch = cmp.Or(c.MaxBatch, def.MaxBatch)
	return c
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

// validate checks cfg and applies the defaults. It reports every bad field
// at once, in one *memcore.ConfigError. The checks that depend on the
// server (the API key and the model names for api.openai.com) are made only
// when BaseURL is usable.
func validate(cfg Config) (settings, error) {
	s := settings{Config: cfg.withDefaults()}
	var bad memcore.FieldErrors
	host, baseOK := checkBaseURL(&bad, cfg.BaseURL, s.BaseURL)
	s.official = baseOK && strings.EqualFold(host, "api.openai.com")
	checkAPIKey(&bad, s.APIKey, s.official)
	// The model names are checked for api.openai.com only, unless
	// AllowUnknownModels says a newer model is meant.
	checkOpenAI := s.official && !s.AllowUnknownModels
	checkModels(&bad, s.Model, s.EmbeddingModel, checkOpenAI)
	info, known := knownEmbeddingModels[s.EmbeddingModel]
	if !checkOpenAI || !known {
		info = embeddingModelInfo{}
	}
	checkDimensions(&bad, s.Dimensions, s.EmbeddingModel, info)
	s.nativeDims = info.native
	bad.Check(s.MaxBatch >= 1 && s.MaxBatch <= MaxBatchLimit, "MaxBatch", cfg.MaxBatch,
		fmt.Sprintf("1–%d (0 means %d)", MaxBatchLimit, MaxBatchLimit))
	checkHeaders(&bad, s.Headers)
	return s, bad.Err("openai", "")
}

// checkBaseURL records raw, the BaseURL given, as bad unless base, its
// form with the defaults applied, is an absolute http(s) URL without query
// or fragment. It returns base's host name and whether base is usable.
func checkBaseURL(bad *memcore.FieldErrors, raw, base string) (host string, ok bool) {
	u, err := url.Parse(base)
	ok = err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.RawQuery == "" && u.Fragment == ""
	bad.Check(ok, "BaseURL", raw, fmt.Sprintf("an absolute http or https URL without query or fragment, such as %q", DefaultBaseURL))
	if !ok {
		return "", false
	}
	return u.Hostname(), true
}

// checkAPIKey records the API key as bad when it has surrounding white
// space or control characters, or when it is empty for api.openai.com. The
// key itself is never shown.
func checkAPIKey(bad *memcore.FieldErrors, key string, official bool) {
	clean := key == strings.TrimSpace(key) && !strings.ContainsFunc(key, unicode.IsControl)
	bad.Check(clean, "APIKey", memcore.Description("a key with surrounding white space or control characters"), "a key without them")
	bad.Check(!official || key != "", "APIKey", key,
		"the API key of api.openai.com (it may be empty only for another server, set through BaseURL)")
}

// modelEscape says how to get past the model-name checks of api.openai.com.
const modelEscape = "set AllowUnknownModels for a model newer than this package, or BaseURL for another server"

// checkModels records the chat and embedding model names as bad when they
// cannot be right: white space or control characters anywhere, and, when
// checkOpenAI, names that are not OpenAI's.
func checkModels(bad *memcore.FieldErrors, model, embeddingModel string, checkOpenAI bool) {
	if checkModelName(bad, "Model", model) && checkOpenAI {
		bad.Check(isOpenAIChatModel(model), "Model", model,
			"an OpenAI chat model: gpt-*, chatgpt-*, o1*, o3*, o4* or ft:*, not an instruct, embedding, audio, image or moderation model ("+modelEscape+")")
	}
	if checkModelName(bad, "EmbeddingModel", embeddingModel) && checkOpenAI {
		_, known := knownEmbeddingModels[embeddingModel]
		bad.Check(known, "EmbeddingModel", embeddingModel,
			"text-embedding-3-small, text-embedding-3-large or text-embedding-ada-002 ("+modelEscape+")")
	}
}

// checkDimensions records dims as bad when it is negative or, for a known
// OpenAI model (info.native > 0), beyond what the model offers.
func checkDimensions(bad *memcore.FieldErrors, dims int, model string, info embeddingModelInfo) {
	switch {
	case dims < 0:
		bad.Check(false, "Dimensions", dims, "at least 0 (0 means the model's native length)")
	case info.native > 0 && dims > 0 && !info.dimensionable:
		bad.Check(false, "Dimensions", dims, fmt.Sprintf("0 for %s, which does not support it", model))
	case info.native > 0 && dims > info.native:
		bad.Check(false, "Dimensions", dims, fmt.Sprintf("0–%d for %s", info.native, model))
	}
}

// checkHeaders records every reserved header that headers sets; their
// values are never shown.
func checkHeaders(bad *memcore.FieldErrors, headers http.Header) {
	var reserved []string
	for name := range headers {
		if h := http.CanonicalHeaderKey(name); slices.Contains(reservedHeaders, h) && !slices.Contains(reserved, h) {
			reserved = append(reserved, h)
		}
	}
	slices.Sort(reserved)
	for _, h := range reserved {
		bad.Check(false, fmt.Sprintf("Headers[%q]", h), memcore.Description("set"),
			"unset: the client sets "+strings.Join(reservedHeaders, ", ")+" itself")
	}
}

// checkModelName records field as bad when name holds white space or
// control characters, which no server accepts, and reports whether it is
// usable.
func checkModelName(bad *memcore.FieldErrors, field, name string) bool {
	return bad.Check(!strings.ContainsFunc(name, isSpaceOrControl), field, name, "a name without white space or control characters")
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
