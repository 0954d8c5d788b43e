package gemini

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// setJunkEnvironment sets every environment variable the genai SDK reads
// to a value that would break the calls of a client that used it: another
// key, the Vertex AI backend, a project and location, and base URLs
// nothing listens on. With bothKeys, GOOGLE_API_KEY is set as well as
// GEMINI_API_KEY (the SDK then logs a warning on every NewClient, which
// this package cannot silence).
func setJunkEnvironment(t *testing.T, bothKeys bool) {
	t.Helper()
	if bothKeys {
		t.Setenv("GOOGLE_API_KEY", "junk-google-key-from-env")
	}
	for k, v := range map[string]string{
		"GEMINI_API_KEY":              "junk-gemini-key-from-env",
		"GOOGLE_GENAI_USE_VERTEXAI":   "true",
		"GOOGLE_GENAI_USE_ENTERPRISE": "true",
		"GOOGLE_CLOUD_PROJECT":        "junk-project",
		"GOOGLE_CLOUD_LOCATION":       "junk-location",
		"GOOGLE_CLOUD_REGION":         "junk-region",
		"GOOGLE_GEMINI_BASE_URL":      "http://127.0.0.1:1/",
		"GOOGLE_VERTEX_BASE_URL":      "http://127.0.0.1:1/",
	} {
		t.Setenv(k, v)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	const proxy = "http://proxy.local"
	tests := []struct {
		name string
		cfg  Config
		// mention lists what the message must say: each bad field, the
		// value given and the values allowed.
		mention []string
	}{
		{"missing API key", Config{}, []string{"APIKey is empty, want a Gemini API key"}},
		{"blank API key", Config{APIKey: "  "}, []string{"APIKey is empty, want a Gemini API key"}},
		{"API key with a newline", Config{APIKey: "k\n"}, []string{"APIKey is a key with surrounding white space or control characters, want a key without them"}},
		{"relative base URL", Config{APIKey: "k", BaseURL: "localhost:8080"},
			[]string{`BaseURL is "localhost:8080", want an absolute http or https URL without query or fragment`}},
		{"base URL of another scheme", Config{APIKey: "k", BaseURL: "ftp://example.com/"},
			[]string{`BaseURL is "ftp://example.com/", want an absolute http or https URL`}},
		{"base URL with a query", Config{APIKey: "k", BaseURL: "https://example.com/?key=x"},
			[]string{`BaseURL is "https://example.com/?key=x", want an absolute http or https URL without query or fragment`}},
		{"unparsable base URL", Config{APIKey: "k", BaseURL: "http://[::1"}, []string{`BaseURL is "http://[::1", want`}},
		{"API version with a slash", Config{APIKey: "k", APIVersion: "v1/../v2"},
			[]string{`APIVersion is "v1/../v2", want a single path segment such as "v1beta"`}},
		{"unknown completion model", Config{APIKey: "k", Model: "gpt-4o"},
			[]string{`Model is "gpt-4o", want a Gemini API completion model: a name starting with "gemini-", "gemma-" or "learnlm-"`, "custom BaseURL"}},
		{"completion model of a bare prefix", Config{APIKey: "k", Model: "gemini-"}, []string{`Model is "gemini-", want a Gemini API completion model`}},
		{"completion model with a query", Config{APIKey: "k", BaseURL: proxy, Model: "gemini-x?alt=sse"},
			[]string{`Model is "gemini-x?alt=sse", want a name without white space`}},
		{"completion model with a dot-dot", Config{APIKey: "k", BaseURL: proxy, Model: "../admin"}, []string{`Model is "../admin", want a name without`}},
		{"completion model with a space", Config{APIKey: "k", BaseURL: proxy, Model: "my model"}, []string{`Model is "my model", want a name without white space`}},
		{"unknown embedding model", Config{APIKey: "k", EmbeddingModel: "nomic-embed-text"},
			[]string{`EmbeddingModel is "nomic-embed-text", want a Gemini API embedding model: a name starting with "gemini-embedding-", "text-embedding-" or "embedding-"`}},
		{"embedding model with a path", Config{APIKey: "k", EmbeddingModel: "models/text-embedding-004/x"},
			[]string{`EmbeddingModel is "models/text-embedding-004/x", want a Gemini API embedding model`}},
		{"completion model as embedding model", Config{APIKey: "k", EmbeddingModel: "gemini-2.5-flash"},
			[]string{`EmbeddingModel is "gemini-2.5-flash", want a Gemini API embedding model`}},
		{"negative dimensions", Config{APIKey: "k", Dimensions: -1}, []string{"Dimensions is -1, want 0 or 128–3072 for gemini-embedding-001"}},
		{"negative dimensions of an unknown model", Config{APIKey: "k", BaseURL: proxy, EmbeddingModel: "bge-m3", Dimensions: -1},
			[]string{"Dimensions is -1, want 0–65536"}},
		{"dimensions of an unknown model, too many", Config{APIKey: "k", BaseURL: proxy, EmbeddingModel: "bge-m3", Dimensions: 1 << 20},
			[]string{"Dimensions is 1048576, want 0–65536"}},
		{"dimensions below the model's range", Config{APIKey: "k", Dimensions: 64}, []string{"Dimensions is 64, want 0 or 128–3072 for gemini-embedding-001"}},
		{"dimensions above the model's range", Config{APIKey: "k", Dimensions: 4096}, []string{"Dimensions is 4096, want 0 or 128–3072"}},
		{"dimensions above text-embedding-004's range", Config{APIKey: "k", EmbeddingModel: "text-embedding-004", Dimensions: 1024},
			[]string{"Dimensions is 1024, want 0 or 1–768 for text-embedding-004"}},
		{"dimensions of a fixed-size model", Config{APIKey: "k", EmbeddingModel: "models/embedding-001", Dimensions: 256},
			[]string{"Dimensions is 256, want 0 or 768 for models/embedding-001"}},
		{"negative max batch", Config{APIKey: "k", MaxBatch: -1}, []string{"MaxBatch is -1, want 1–100 (0 means 100"}},
		{"max batch above the API's limit", Config{APIKey: "k", MaxBatch: 1000}, []string{"MaxBatch is 1000, want 1–100"}},
		{"unknown task type", Config{APIKey: "k", TaskType: "retrieval_document"},
			[]string{`TaskType is "retrieval_document", want one of RETRIEVAL_DOCUMENT, RETRIEVAL_QUERY`}},
		{"every bad field reported", Config{BaseURL: "ftp://x", APIVersion: "a/b", Model: "a b", EmbeddingModel: "c\td", Dimensions: -3, MaxBatch: math.MaxInt, TaskType: "x"},
			[]string{"APIKey is empty", `BaseURL is "ftp://x"`, `APIVersion is "a/b"`, `Model is "a b"`, `EmbeddingModel is "c\td"`,
				"Dimensions is -3, want at least 0", fmt.Sprintf("MaxBatch is %d", math.MaxInt), `TaskType is "x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			var ce *memcore.ConfigError
			if !errors.Is(err, memcore.ErrInvalidConfig) || !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) {
				t.Fatalf("New(%+v) = %v, %v; want a *memcore.ConfigError matching memcore.ErrInvalidConfig", tt.cfg, c, err)
			}
			if verr := tt.cfg.Validate(); verr == nil || verr.Error() != err.Error() {
				t.Errorf("Validate = %v, want New's error %v", verr, err)
			}
			if c != nil {
				t.Errorf("New returned a client with its error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "gemini: invalid config: ") {
				t.Errorf("error %q does not start with %q", msg, "gemini: invalid config: ")
			}
			for _, m := range tt.mention {
				if !strings.Contains(msg, m) {
					t.Errorf("error %q does not say %q", msg, m)
				}
			}
		})
	}
}

// DefaultConfig holds the defaults a zero field stands for, and wants only
// the API key.
func TestDefaultConfig(t *testing.T) {
	def := DefaultConfig()
	err := def.Validate()
	var ce *memcore.ConfigError
	if !errors.As(err, &ce) || len(ce.Fields) != 1 || ce.Fields[0].Field != "APIKey" {
		t.Errorf("DefaultConfig().Validate() = %v, want the API key alone missing", err)
	}
	def.APIKey = "k"
	full, err := New(def)
	if err != nil {
		t.Fatal(err)
	}
	zero, err := New(Config{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Client{full, zero} {
		if c.model != DefaultModel || c.embedModel != DefaultEmbeddingModel || c.maxBatch != MaxBatchLimit || c.taskType != TaskRetrievalDocument || !c.defaultHost {
			t.Errorf("client %+v, want the defaults", c)
		}
	}
	if full.Model() != zero.Model() {
		t.Errorf("Model() = %q from the defaults, %q from zero fields", full.Model(), zero.Model())
	}
}

// TestNewNeverPanics calls New with extreme values in every field.
func TestNewNeverPanics(t *testing.T) {
	strs := []string{"", " ", "\x00", "http://[::1", DefaultBaseURL, "http://h/", strings.Repeat("x", 1<<16), "日本語", "%zz", "models/", "tunedModels/"}
	ints := []int{math.MinInt, -1, 0, 1, 100, 101, 3072, math.MaxInt}
	for _, base := range strs {
		for _, s := range strs {
			for _, n := range ints {
				cfg := Config{APIKey: s, BaseURL: base, APIVersion: s, Model: s, EmbeddingModel: s, Dimensions: n, MaxBatch: n, TaskType: TaskType(s)}
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("New(%+v) panicked: %v", cfg, r)
						}
					}()
					c, err := New(cfg)
					if (c == nil) == (err == nil) {
						t.Errorf("New(%+v) = %v, %v; want exactly one of a client and an error", cfg, c, err)
					}
					if err != nil && !errors.Is(err, ErrInvalidConfig) {
						t.Errorf("New(%+v): %v does not wrap ErrInvalidConfig", cfg, err)
					}
				}()
			}
		}
	}
}

func TestNewAccepts(t *testing.T) {
	tests := []struct {
		name      string
		cfg       Config
		wantModel string // Model()
	}{
		{"defaults", Config{APIKey: "k"}, "gemini-embedding-001@3072"},
		{"reduced dimensions", Config{APIKey: "k", Dimensions: 768}, "gemini-embedding-001@768"},
		{"models/ prefix", Config{APIKey: "k", Model: "models/gemini-2.5-flash", EmbeddingModel: "models/gemini-embedding-001", Dimensions: 128}, "gemini-embedding-001@128"},
		{"tuned completion model", Config{APIKey: "k", Model: "tunedModels/my-model-123"}, "gemini-embedding-001@3072"},
		{"gemma", Config{APIKey: "k", Model: "gemma-3-27b-it"}, "gemini-embedding-001@3072"},
		{"text-embedding-004", Config{APIKey: "k", EmbeddingModel: "text-embedding-004", Dimensions: 256}, "text-embedding-004@256"},
		{"fixed-size model at its size", Config{APIKey: "k", EmbeddingModel: "embedding-001", Dimensions: 768}, "embedding-001@768"},
		{"unknown embedding model of a known family", Config{APIKey: "k", EmbeddingModel: "gemini-embedding-2-preview", Dimensions: 1536}, "gemini-embedding-2-preview@1536"},
		{"unknown model without dimensions", Config{APIKey: "k", EmbeddingModel: "gemini-embedding-2-preview"}, "gemini-embedding-2-preview"},
		{"any names behind a proxy", Config{APIKey: "k", BaseURL: "http://litellm.local:4000/gemini", Model: "my-router/fast", EmbeddingModel: "bge-m3", Dimensions: 1024}, "bge-m3@1024"},
		{"Google endpoint given explicitly", Config{APIKey: "k", BaseURL: "https://generativelanguage.googleapis.com", Model: "gemini-2.0-flash"}, "gemini-embedding-001@3072"},
		{"other task type", Config{APIKey: "k", TaskType: TaskSemanticSimilarity, Dimensions: 768}, "gemini-embedding-001@768;task=SEMANTIC_SIMILARITY"},
		{"max batch 1", Config{APIKey: "k", MaxBatch: 1}, "gemini-embedding-001@3072"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if err != nil {
				t.Fatalf("New(%+v): %v", tt.cfg, err)
			}
			if got := c.Model(); got != tt.wantModel {
				t.Errorf("Model() = %q, want %q", got, tt.wantModel)
			}
		})
	}
}

func TestNewDoesNotLeakTheKey(t *testing.T) {
	// The SDK's own errors print its whole config; ours must not.
	const key = "AIzaSySecretSecretSecret"
	_, err := New(Config{APIKey: key, Model: "not-a-gemini-model"})
	if err == nil {
		t.Fatal("New accepted an unknown model")
	}
	if strings.Contains(err.Error(), key) {
		t.Errorf("the error shows the API key: %q", err)
	}
}

func TestQueryEmbedder(t *testing.T) {
	srv := newFakeServer(t)
	docs := srv.client(t, Config{Dimensions: 256})
	queries := docs.QueryEmbedder()
	if got, want := queries.Model(), "gemini-embedding-001@256;task=RETRIEVAL_QUERY"; got != want {
		t.Errorf("QueryEmbedder().Model() = %q, want %q", got, want)
	}
	if got, want := docs.Model(), "gemini-embedding-001@256"; got != want {
		t.Errorf("Model() changed to %q by QueryEmbedder, want %q", got, want)
	}
	ctx := context.Background()
	if _, err := docs.Embed(ctx, []string{"a memory"}); err != nil {
		t.Fatal(err)
	}
	if _, err := queries.Embed(ctx, []string{"a question"}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, want := range []string{"RETRIEVAL_DOCUMENT", "RETRIEVAL_QUERY"} {
		body := decodeEmbedRequest(t, reqs[i].Body)
		if got := body.Requests[0].TaskType; got != want {
			t.Errorf("request %d: taskType %q, want %q", i, got, want)
		}
	}
}

// TestEnvironmentIsIgnored proves that the SDK's environment variables
// have no effect: the configured key is the one sent, to the configured
// server, on the Gemini API's path rather than Vertex AI's.
func TestEnvironmentIsIgnored(t *testing.T) {
	setJunkEnvironment(t, true)
	srv := newFakeServer(t)
	c := srv.client(t, Config{Dimensions: 128})
	ctx := context.Background()
	if _, err := c.Complete(ctx, memcore.CompletionRequest{Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "hello"}}}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if _, err := c.Embed(ctx, []string{"hello"}); err != nil {
		t.Fatalf("Embed: %v", err)
	}
	reqs := srv.Requests()
	wantPaths := []string{"/v1beta/models/gemini-flash-latest:generateContent", "/v1beta/models/gemini-embedding-001:batchEmbedContents"}
	if len(reqs) != len(wantPaths) {
		t.Fatalf("%d requests, want %d", len(reqs), len(wantPaths))
	}
	for i, r := range reqs {
		if r.APIKey != testKey {
			t.Errorf("request %d sent key %q, want the configured %q", i, r.APIKey, testKey)
		}
		if r.Path != wantPaths[i] {
			t.Errorf("request %d went to %s, want %s", i, r.Path, wantPaths[i])
		}
		if r.Query != "" {
			t.Errorf("request %d has a query %q; the key belongs in the header only", i, r.Query)
		}
	}

	// And an empty key is refused even though the environment has two.
	if _, err := New(Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New with no key and GEMINI_API_KEY set: %v, want ErrInvalidConfig", err)
	}
}

func TestHTTPClientIsUsed(t *testing.T) {
	srv := newFakeServer(t)
	var calls int
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls++
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := srv.client(t, Config{HTTPClient: hc})
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("the configured HTTPClient carried %d requests, want 1", calls)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestDefaultModels checks what an empty Model and EmbeddingModel mean: the
// default models, also for another server, where a name the server does
// not serve fails the first call with ErrInvalidRequest.
func TestDefaultModels(t *testing.T) {
	srv := newFakeServer(t) // not the Google endpoint: a gateway
	c := srv.client(t, Config{})
	hello := memcore.CompletionRequest{Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "hello"}}}
	ctx := context.Background()

	// A gateway that serves neither default answers them with a 404.
	srv.failNext(2, fixtureError(t, "404_not_found.json"))
	if _, err := c.Complete(ctx, hello); !errors.Is(err, memcore.ErrInvalidRequest) {
		t.Errorf("Complete with the default model on a server without it: %v; want ErrInvalidRequest", err)
	}
	if _, err := c.Embed(ctx, []string{"x"}); !errors.Is(err, memcore.ErrInvalidRequest) {
		t.Errorf("Embed with the default model on a server without it: %v; want ErrInvalidRequest", err)
	}
	named := hello
	named.Model = "gemini-2.5-flash"
	if _, err := c.Complete(ctx, named); err != nil {
		t.Errorf("Complete naming a model: %v", err)
	}
	var paths []string
	for _, r := range srv.Requests() {
		paths = append(paths, r.Path)
	}
	want := []string{
		"/v1beta/models/" + DefaultModel + ":generateContent",
		"/v1beta/models/" + DefaultEmbeddingModel + ":batchEmbedContents",
		"/v1beta/models/gemini-2.5-flash:generateContent",
	}
	if !slices.Equal(paths, want) {
		t.Errorf("request paths = %q, want %q", paths, want)
	}
	if got := c.Model(); got != DefaultEmbeddingModel+"@3072" {
		t.Errorf("Model() = %q, want %q", got, DefaultEmbeddingModel+"@3072")
	}
}
