package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/forgemem/forgemem/conformance/embedtest"
	"github.com/forgemem/forgemem/conformance/llmtest"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/openai"
)

// canned is a failure the test server gives: a status and a fixture under
// testdata/errors.
type canned struct {
	status int
	file   string
}

// variant is one way of deploying the client against the test server.
type variant struct {
	name string
	// official uses the default BaseURL (api.openai.com, reached through
	// a client redirected to the test server) and an API key; otherwise
	// BaseURL points at the server and no key is sent, as for Ollama.
	official bool
	// failures gives, per taxonomy kind, the answer that makes a call fail
	// that way.
	failures map[error]canned
	// embedFailures override failures for embeddings.
	embedFailures map[error]canned
}

// variants: the OpenAI API with its documented JSON errors; an
// OpenAI-compatible server behind a proxy that answers in plain text and
// HTML; and compatible servers' own JSON error shapes (vLLM, llama.cpp,
// FastAPI).
var variants = []variant{
	{
		name:     "OpenAI",
		official: true,
		failures: map[error]canned{
			memcore.ErrRateLimited:     {http.StatusTooManyRequests, "rate_limit_429.json"},
			memcore.ErrUnauthenticated: {http.StatusUnauthorized, "invalid_api_key_401.json"},
			memcore.ErrUnavailable:     {http.StatusServiceUnavailable, "overloaded_503.json"},
			memcore.ErrInputTooLarge:   {http.StatusBadRequest, "context_length_400.json"},
			memcore.ErrInvalidRequest:  {http.StatusNotFound, "model_not_found_404.json"},
			memcore.ErrInvalidResponse: {http.StatusOK, "malformed_200.json"},
		},
	},
	{
		name: "PlainTextProxy",
		failures: map[error]canned{
			memcore.ErrRateLimited:     {http.StatusTooManyRequests, "plain_429.txt"},
			memcore.ErrUnauthenticated: {http.StatusForbidden, "plain_403.txt"},
			memcore.ErrUnavailable:     {http.StatusServiceUnavailable, "plain_503.txt"},
			memcore.ErrInputTooLarge:   {http.StatusRequestEntityTooLarge, "nginx_413.html"},
			memcore.ErrInvalidRequest:  {http.StatusBadRequest, "plain_400.txt"},
			memcore.ErrInvalidResponse: {http.StatusOK, "captive_portal_200.html"},
		},
	},
	{
		name: "CompatibleServers",
		failures: map[error]canned{
			memcore.ErrRateLimited:     {http.StatusTooManyRequests, "plain_429.txt"},
			memcore.ErrUnauthenticated: {http.StatusUnauthorized, "plain_401.txt"},
			memcore.ErrUnavailable:     {http.StatusBadGateway, "nginx_502.html"},
			memcore.ErrInputTooLarge:   {http.StatusBadRequest, "llamacpp_context_400.json"},
			memcore.ErrInvalidRequest:  {http.StatusUnprocessableEntity, "fastapi_422.json"},
			memcore.ErrInvalidResponse: {http.StatusOK, "truncated_200.json"},
		},
		embedFailures: map[error]canned{
			memcore.ErrInputTooLarge:   {http.StatusBadRequest, "ollama_context_400.json"},
			memcore.ErrInvalidResponse: {http.StatusOK, "base64_vector_200.json"},
		},
	},
}

// harness makes clients of one variant against fresh test servers. It
// serves both llmtest and embedtest.
type harness struct {
	t *testing.T
	v variant
	// embed selects the failures for embeddings.
	embed bool

	mu      sync.Mutex
	servers []*apiServer
}

func newHarness(t *testing.T, v variant) *harness { return &harness{t: t, v: v} }

// server starts a test server for this variant.
func (h *harness) server() *apiServer {
	key := ""
	if h.v.official {
		key = testKey
	}
	s := newAPIServer(h.t, key)
	h.mu.Lock()
	h.servers = append(h.servers, s)
	h.mu.Unlock()
	return s
}

// Calls counts the requests all servers of the harness received.
func (h *harness) Calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.servers {
		n += len(s.Requests())
	}
	return n
}

// client makes a Client talking to s.
func (h *harness) client(s *apiServer, mutate func(*openai.Config)) (*openai.Client, error) {
	cfg := openai.Config{Model: "gpt-4o-mini", EmbeddingModel: "text-embedding-3-small", Dimensions: officialDims, MaxBatch: embedBatch}
	if h.v.official {
		cfg.APIKey = testKey
		cfg.HTTPClient = s.Client()
	} else {
		cfg.BaseURL = s.BaseURL()
		cfg.Model, cfg.EmbeddingModel, cfg.Dimensions = "llama3.2", "nomic-embed-text", 0
	}
	if mutate != nil {
		mutate(&cfg)
	}
	return openai.New(cfg)
}

func (h *harness) NewProvider(context.Context) (memcore.LLMProvider, error) {
	return h.client(h.server(), nil)
}

func (h *harness) NewFailingProvider(_ context.Context, kind error) (memcore.LLMProvider, error) {
	return h.failing(kind)
}

func (h *harness) failing(kind error) (*openai.Client, error) {
	c, ok := h.v.failures[kind]
	if e, found := h.v.embedFailures[kind]; h.embed && found {
		c, ok = e, true
	}
	if !ok {
		return nil, fmt.Errorf("no failure of kind %v in variant %s: %w", kind, h.v.name, errors.ErrUnsupported)
	}
	s := h.server()
	s.setFail(c.status, c.file)
	return h.client(s, nil)
}

func (h *harness) NewSlowProvider(context.Context) (memcore.LLMProvider, error) {
	return h.slow()
}

func (h *harness) slow() (*openai.Client, error) {
	s := h.server()
	s.configure(func(s *apiServer) { s.hold = true })
	return h.client(s, nil)
}

func (h *harness) Capabilities() llmtest.Capabilities { return llmtest.Capabilities{} }

// Close does nothing: every server is closed by its test's cleanup.
func (h *harness) Close() {}

// AsNative reports whether err carries go-openai's native error: the API's
// error object, a non-JSON error answer, or the JSON decoding error of a
// malformed 2xx body (which go-openai returns as it is).
func (h *harness) AsNative(err error) bool {
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	return errors.As(err, &apiErr) || errors.As(err, &reqErr) ||
		errors.As(err, &syntaxErr) || errors.As(err, &typeErr) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// Settings of the embedders the harness makes.
const (
	officialDims = 256 // Dimensions against api.openai.com
	embedBatch   = 16  // MaxBatch, small so that the suite's large batch is split
)

// embedHarness adapts harness to embedtest.
type embedHarness struct{ *harness }

func (h embedHarness) NewEmbedder(context.Context) (memcore.Embedder, error) {
	return h.client(h.server(), nil)
}

func (h embedHarness) NewFailingEmbedder(_ context.Context, kind error) (memcore.Embedder, error) {
	return h.failing(kind)
}

func (h embedHarness) NewSlowEmbedder(context.Context) (memcore.Embedder, error) {
	return h.slow()
}

func (h embedHarness) Capabilities() embedtest.Capabilities {
	dims := compatDims
	if h.v.official {
		dims = officialDims
	}
	return embedtest.Capabilities{MaxBatch: embedBatch, Dimension: dims}
}

var (
	_ embedtest.Harness            = embedHarness{}
	_ embedtest.SlowHarness        = embedHarness{}
	_ embedtest.NativeErrorHarness = embedHarness{}
	_ embedtest.CallCounter        = embedHarness{}
)

var (
	_ llmtest.Harness            = (*harness)(nil)
	_ llmtest.SlowHarness        = (*harness)(nil)
	_ llmtest.NativeErrorHarness = (*harness)(nil)
)

// The configs keep the offline suites quick.
var llmConfig = llmtest.Config{CallTimeout: 10 * time.Second, CancelGrace: 2 * time.Second}

func TestLLMConformance(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			llmtest.Run(t, func(_ context.Context, t *testing.T) (llmtest.Harness, error) {
				return newHarness(t, v), nil
			}, llmConfig)
		})
	}
}

var embedConfig = embedtest.Config{CallTimeout: 10 * time.Second, CancelGrace: 2 * time.Second}

func TestEmbedConformance(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			embedtest.Run(t, func(_ context.Context, t *testing.T) (embedtest.Harness, error) {
				h := newHarness(t, v)
				h.embed = true
				return embedHarness{h}, nil
			}, embedConfig)
		})
	}
}
