package openai_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/openai"
)

func TestNewRejectsBadConfig(t *testing.T) {
	const key = "sk-test"
	const ollama = "http://localhost:11434/v1"
	tests := []struct {
		name string
		cfg  openai.Config
		// mention lists what the message must say: each bad field, the
		// value given and the values allowed.
		mention []string
	}{
		{"no API key for api.openai.com", openai.Config{Model: "gpt-4o-mini"},
			[]string{`APIKey is "", want the API key of api.openai.com`}},
		{"no API key for explicit api.openai.com", openai.Config{BaseURL: "https://api.openai.com/v1/"},
			[]string{`APIKey is "", want the API key of api.openai.com`}},
		{"API key with a newline", openai.Config{APIKey: key + "\n"},
			[]string{"APIKey is a key with surrounding white space or control characters, want a key without them"}},
		{"relative BaseURL", openai.Config{BaseURL: "localhost:11434/v1"},
			[]string{`BaseURL is "localhost:11434/v1", want an absolute http or https URL`}},
		{"ftp BaseURL", openai.Config{BaseURL: "ftp://example.com/v1"},
			[]string{`BaseURL is "ftp://example.com/v1", want an absolute http or https URL`}},
		{"BaseURL with a query", openai.Config{BaseURL: "http://localhost:8000/v1?x=1"},
			[]string{`BaseURL is "http://localhost:8000/v1?x=1", want an absolute http or https URL without query or fragment`}},
		{"unparsable BaseURL", openai.Config{BaseURL: "http://[::1"},
			[]string{`BaseURL is "http://[::1", want`}},
		{"model with a space", openai.Config{APIKey: key, Model: "gpt-4o mini"},
			[]string{`Model is "gpt-4o mini", want a name without white space or control characters`}},
		{"embedding model with a tab", openai.Config{BaseURL: ollama, EmbeddingModel: "nomic\tembed"},
			[]string{`EmbeddingModel is "nomic\tembed", want a name without white space or control characters`}},
		{"negative dimensions", openai.Config{APIKey: key, Dimensions: -1},
			[]string{"Dimensions is -1, want at least 0"}},
		{"negative MaxBatch", openai.Config{APIKey: key, MaxBatch: -1},
			[]string{"MaxBatch is -1, want 1–2048 (0 means 2048)"}},
		{"MaxBatch above OpenAI's limit", openai.Config{APIKey: key, MaxBatch: 5000},
			[]string{"MaxBatch is 5000, want 1–2048"}},
		{"MaxBatch above the limit elsewhere too", openai.Config{BaseURL: ollama, MaxBatch: 2049},
			[]string{"MaxBatch is 2049, want 1–2048"}},
		{"unknown embedding model on OpenAI", openai.Config{APIKey: key, EmbeddingModel: "nomic-embed-text"},
			[]string{`EmbeddingModel is "nomic-embed-text", want text-embedding-3-small, text-embedding-3-large or text-embedding-ada-002`, "AllowUnknownModels"}},
		{"chat model as embedding model", openai.Config{APIKey: key, EmbeddingModel: "gpt-4o-mini"},
			[]string{`EmbeddingModel is "gpt-4o-mini", want text-embedding-3-small`}},
		{"dimensions for ada-002", openai.Config{APIKey: key, EmbeddingModel: "text-embedding-ada-002", Dimensions: 512},
			[]string{"Dimensions is 512, want 0 for text-embedding-ada-002"}},
		{"dimensions above native (3-small)", openai.Config{APIKey: key, EmbeddingModel: "text-embedding-3-small", Dimensions: 1537},
			[]string{"Dimensions is 1537, want 0–1536 for text-embedding-3-small"}},
		{"dimensions above native (default model)", openai.Config{APIKey: key, Dimensions: 4096},
			[]string{"Dimensions is 4096, want 0–1536 for text-embedding-3-small"}},
		{"dimensions above native (3-large)", openai.Config{APIKey: key, EmbeddingModel: "text-embedding-3-large", Dimensions: 3073},
			[]string{"Dimensions is 3073, want 0–3072 for text-embedding-3-large"}},
		{"embedding model as chat model", openai.Config{APIKey: key, Model: "text-embedding-3-small"},
			[]string{`Model is "text-embedding-3-small", want an OpenAI chat model`}},
		{"completions-only model", openai.Config{APIKey: key, Model: "gpt-3.5-turbo-instruct"},
			[]string{`Model is "gpt-3.5-turbo-instruct", want an OpenAI chat model`}},
		{"speech model", openai.Config{APIKey: key, Model: "whisper-1"},
			[]string{`Model is "whisper-1", want an OpenAI chat model`}},
		{"other vendor's model on OpenAI", openai.Config{APIKey: key, Model: "llama3.2"},
			[]string{`Model is "llama3.2", want an OpenAI chat model`, "AllowUnknownModels", "BaseURL"}},
		{"Authorization in Headers", openai.Config{APIKey: key, Headers: http.Header{"authorization": {"x"}}},
			[]string{`Headers["Authorization"] is set, want unset: the client sets Accept, Authorization, Content-Length, Content-Type, Host itself`}},
		{"several reserved Headers, in order", openai.Config{BaseURL: ollama, Headers: http.Header{"Host": {"h"}, "Accept": {"a"}, "X-Ok": {"y"}}},
			[]string{`Headers["Accept"] is set, want unset: the client sets Accept, Authorization, Content-Length, Content-Type, Host itself; Headers["Host"] is set`}},
		{"every bad field reported", openai.Config{BaseURL: "ftp://x", APIKey: " k", Model: "a b", EmbeddingModel: "c\nd", Dimensions: -2, MaxBatch: math.MaxInt, Headers: http.Header{"Content-Type": {"x"}}},
			[]string{"BaseURL is", "APIKey is a key with surrounding white space", `Model is "a b"`, `EmbeddingModel is "c\nd"`, "Dimensions is -2",
				fmt.Sprintf("MaxBatch is %d", math.MaxInt), `Headers["Content-Type"] is set`}},
		{"OpenAI's checks together", openai.Config{Model: "llama3.2", EmbeddingModel: "text-embedding-ada-002", Dimensions: 8},
			[]string{`APIKey is ""`, `Model is "llama3.2"`, "Dimensions is 8, want 0 for text-embedding-ada-002"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := openai.New(tt.cfg)
			var ce *memcore.ConfigError
			if !errors.Is(err, memcore.ErrInvalidConfig) || !errors.Is(err, openai.ErrInvalidConfig) || !errors.As(err, &ce) {
				t.Fatalf("New(%+v) = %v, %v; want a *memcore.ConfigError matching memcore.ErrInvalidConfig", tt.cfg, c, err)
			}
			if verr := tt.cfg.Validate(); verr == nil || verr.Error() != err.Error() {
				t.Errorf("Validate = %v, want New's error %v", verr, err)
			}
			if c != nil {
				t.Errorf("New returned a client with its error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "openai: invalid config: ") {
				t.Errorf("error %q does not start with %q", msg, "openai: invalid config: ")
			}
			for _, m := range tt.mention {
				if !strings.Contains(msg, m) {
					t.Errorf("error %q does not say %q", msg, m)
				}
			}
		})
	}
}

// TestNewNeverShowsTheAPIKey checks that the message about a bad key does
// not repeat it.
func TestNewNeverShowsTheAPIKey(t *testing.T) {
	const secret = "sk-secret-value-1234"
	_, err := openai.New(openai.Config{APIKey: secret + "\n", MaxBatch: -1})
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("New with a bad key: %v; want an error that does not show the key", err)
	}
}

// TestNewNeverPanics calls New with extreme values in every field.
func TestNewNeverPanics(t *testing.T) {
	strs := []string{"", " ", "\x00", "http://[::1", "https://api.openai.com/v1", "http://h/v1", strings.Repeat("x", 1<<16), "日本語", "%zz"}
	ints := []int{math.MinInt, -1, 0, 1, 2048, 2049, math.MaxInt}
	for _, base := range strs {
		for _, s := range strs {
			for _, n := range ints {
				cfg := openai.Config{
					APIKey: s, BaseURL: base, Organization: s, Project: s, Model: s, EmbeddingModel: s,
					Dimensions: n, MaxBatch: n, Headers: http.Header{s: {s}}, AllowUnknownModels: n%2 == 0,
				}
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("New(%+v) panicked: %v", cfg, r)
						}
					}()
					c, err := openai.New(cfg)
					if (c == nil) == (err == nil) {
						t.Errorf("New(%+v) = %v, %v; want exactly one of a client and an error", cfg, c, err)
					}
					if err != nil && !errors.Is(err, openai.ErrInvalidConfig) {
						t.Errorf("New(%+v): %v does not wrap ErrInvalidConfig", cfg, err)
					}
				}()
			}
		}
	}
}

func TestNewAcceptsGoodConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  openai.Config
	}{
		{"OpenAI with the default models", openai.Config{APIKey: "k"}},
		{"OpenAI chat", openai.Config{APIKey: "k", Model: "gpt-4o-mini"}},
		{"OpenAI reasoning model", openai.Config{APIKey: "k", Model: "o3-mini"}},
		{"OpenAI fine-tune", openai.Config{APIKey: "k", Model: "ft:gpt-4o-mini-2024-07-18:acme::9xYz"}},
		{"OpenAI embeddings with dimensions", openai.Config{APIKey: "k", EmbeddingModel: "text-embedding-3-large", Dimensions: 3072}},
		{"OpenAI default embedding model with dimensions", openai.Config{APIKey: "k", Dimensions: 256}},
		{"OpenAI both, MaxBatch 1", openai.Config{APIKey: "k", Model: "gpt-4.1-nano", EmbeddingModel: "text-embedding-ada-002", MaxBatch: 1}},
		{"OpenAI unknown models allowed", openai.Config{APIKey: "k", Model: "sora-chat", EmbeddingModel: "text-embedding-4", Dimensions: 9000, AllowUnknownModels: true}},
		{"Ollama without a key", openai.Config{BaseURL: "http://localhost:11434/v1", Model: "llama3.2", EmbeddingModel: "nomic-embed-text"}},
		{"vLLM with any dimensions", openai.Config{BaseURL: "http://vllm:8000/v1/", EmbeddingModel: "BAAI/bge-m3", Dimensions: 4096, MaxBatch: 2048}},
		{"gateway with headers", openai.Config{APIKey: "k", BaseURL: "https://gw.example.com/openai/v1", Model: "my-deployment", Headers: http.Header{"X-Tenant": {"a"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := openai.New(tt.cfg)
			if err != nil || c == nil {
				t.Fatalf("New(%+v) = %v, %v; want a client", tt.cfg, c, err)
			}
		})
	}
}

// DefaultConfig holds the defaults a zero field stands for, and wants only
// the API key of api.openai.com.
func TestDefaultConfig(t *testing.T) {
	def := openai.DefaultConfig()
	want := openai.Config{BaseURL: openai.DefaultBaseURL, Model: openai.DefaultModel, EmbeddingModel: openai.DefaultEmbeddingModel, MaxBatch: openai.MaxBatchLimit}
	if def.BaseURL != want.BaseURL || def.Model != want.Model || def.EmbeddingModel != want.EmbeddingModel || def.MaxBatch != want.MaxBatch {
		t.Errorf("DefaultConfig() = %+v, want %+v", def, want)
	}
	err := def.Validate()
	var ce *memcore.ConfigError
	if !errors.As(err, &ce) || len(ce.Fields) != 1 || ce.Fields[0].Field != "APIKey" {
		t.Errorf("DefaultConfig().Validate() = %v, want the API key alone missing", err)
	}
	def.APIKey = "k"
	if err := def.Validate(); err != nil {
		t.Errorf("DefaultConfig() with a key: Validate = %v", err)
	}
	zero, err := openai.New(openai.Config{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	full, err := openai.New(def)
	if err != nil {
		t.Fatal(err)
	}
	if zero.Model() != full.Model() {
		t.Errorf("Model() = %q from zero fields, %q from the defaults", zero.Model(), full.Model())
	}
}

func TestModelIncludesDimensions(t *testing.T) {
	tests := []struct {
		cfg  openai.Config
		want string
	}{
		{openai.Config{APIKey: "k", EmbeddingModel: "text-embedding-3-small"}, "text-embedding-3-small"},
		{openai.Config{APIKey: "k", EmbeddingModel: "text-embedding-3-small", Dimensions: 256}, "text-embedding-3-small@256"},
		{openai.Config{BaseURL: "http://localhost:11434/v1", EmbeddingModel: "nomic-embed-text", Dimensions: 64}, "nomic-embed-text@64"},
		{openai.Config{APIKey: "k", Model: "gpt-4o-mini"}, openai.DefaultEmbeddingModel},
		{openai.Config{APIKey: "k", Dimensions: 512}, openai.DefaultEmbeddingModel + "@512"},
		{openai.Config{BaseURL: "http://localhost:11434/v1"}, openai.DefaultEmbeddingModel},
	}
	for _, tt := range tests {
		c, err := openai.New(tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Model(); got != tt.want {
			t.Errorf("Model() = %q for %+v; want %q", got, tt.cfg, tt.want)
		}
	}
}

// sentModels decodes the "model" of every request s received, in order.
func sentModels(t *testing.T, s *apiServer) []string {
	t.Helper()
	var out []string
	for _, r := range s.Requests() {
		var body struct {
			Model string `json:"model"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("request body: %v", err)
		}
		out = append(out, body.Model)
	}
	return out
}

var hello = memcore.CompletionRequest{Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "hi"}}}

// TestDefaultModels checks what an empty Model and EmbeddingModel mean: the
// default models, also for another server, where a name the server does
// not serve fails the first call with ErrInvalidRequest.
func TestDefaultModels(t *testing.T) {
	t.Run("api.openai.com", func(t *testing.T) {
		s, c := officialClient(t, func(cfg *openai.Config) { cfg.Model, cfg.EmbeddingModel = "", "" })
		if _, err := c.Complete(t.Context(), hello); err != nil {
			t.Fatalf("Complete: %v", err)
		}
		named := hello
		named.Model = "gpt-4.1-nano"
		if _, err := c.Complete(t.Context(), named); err != nil {
			t.Fatalf("Complete naming a model: %v", err)
		}
		vecs, err := c.Embed(t.Context(), []string{"x"})
		if err != nil {
			t.Fatalf("Embed: %v", err)
		}
		if len(vecs[0]) != 1536 {
			t.Errorf("vector length %d, want text-embedding-3-small's 1536", len(vecs[0]))
		}
		want := []string{openai.DefaultModel, "gpt-4.1-nano", openai.DefaultEmbeddingModel}
		if got := sentModels(t, s); !slices.Equal(got, want) {
			t.Errorf("models sent = %q, want %q", got, want)
		}
		if c.Model() != openai.DefaultEmbeddingModel {
			t.Errorf("Model() = %q, want %q", c.Model(), openai.DefaultEmbeddingModel)
		}
	})
	t.Run("another server", func(t *testing.T) {
		// An Ollama that serves llama3.2 and nomic-embed-text only, and
		// answers any other name with its 404.
		s, c := ollamaClient(t, func(cfg *openai.Config) { cfg.Model, cfg.EmbeddingModel = "", "" })
		notFound := readFixture(t, "errors/ollama_model_404.json")
		s.configure(func(s *apiServer) {
			s.chatReply = func(req chatWire) (int, []byte) {
				if req.Model != "llama3.2" {
					return http.StatusNotFound, notFound
				}
				return http.StatusOK, chatCompletionBody(t, req.Model, "ok", 1, 1)
			}
			s.embedReply = func(req embedWire) (int, []byte) {
				if req.Model != "nomic-embed-text" {
					return http.StatusNotFound, notFound
				}
				return http.StatusOK, embeddingsBody(t, req.Model, [][]float32{{1, 0}}, []int{0}, 1)
			}
		})
		_, err := c.Complete(t.Context(), hello)
		if !errors.Is(err, memcore.ErrInvalidRequest) {
			t.Errorf("Complete with the default model on a server without it: %v; want ErrInvalidRequest", err)
		}
		_, err = c.Embed(t.Context(), []string{"x"})
		if !errors.Is(err, memcore.ErrInvalidRequest) {
			t.Errorf("Embed with the default model on a server without it: %v; want ErrInvalidRequest", err)
		}
		named := hello
		named.Model = "llama3.2"
		if _, err := c.Complete(t.Context(), named); err != nil {
			t.Errorf("Complete naming a model the server serves: %v", err)
		}
		want := []string{openai.DefaultModel, openai.DefaultEmbeddingModel, "llama3.2"}
		if got := sentModels(t, s); !slices.Equal(got, want) {
			t.Errorf("models sent = %q, want %q", got, want)
		}
	})
}
