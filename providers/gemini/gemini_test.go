package gemini

import (
	"context"
	"errors"
	"net/http"
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
	tests := []struct {
		name  string
		cfg   Config
		field string // the error must name it
	}{
		{"missing API key", Config{}, "APIKey"},
		{"blank API key", Config{APIKey: "  "}, "APIKey"},
		{"relative base URL", Config{APIKey: "k", BaseURL: "localhost:8080"}, "BaseURL"},
		{"base URL of another scheme", Config{APIKey: "k", BaseURL: "ftp://example.com/"}, "BaseURL"},
		{"base URL with a query", Config{APIKey: "k", BaseURL: "https://example.com/?key=x"}, "BaseURL"},
		{"API version with a slash", Config{APIKey: "k", APIVersion: "v1/../v2"}, "APIVersion"},
		{"unknown completion model", Config{APIKey: "k", Model: "gpt-4o"}, "Model"},
		{"completion model of a bare prefix", Config{APIKey: "k", Model: "gemini-"}, "Model"},
		{"completion model with a query", Config{APIKey: "k", BaseURL: "http://proxy.local", Model: "gemini-x?alt=sse"}, "Model"},
		{"completion model with a dot-dot", Config{APIKey: "k", BaseURL: "http://proxy.local", Model: "../admin"}, "Model"},
		{"completion model with a space", Config{APIKey: "k", BaseURL: "http://proxy.local", Model: "my model"}, "Model"},
		{"unknown embedding model", Config{APIKey: "k", EmbeddingModel: "nomic-embed-text"}, "EmbeddingModel"},
		{"embedding model with a path", Config{APIKey: "k", EmbeddingModel: "models/text-embedding-004/x"}, "EmbeddingModel"},
		{"completion model as embedding model", Config{APIKey: "k", EmbeddingModel: "gemini-2.5-flash"}, "EmbeddingModel"},
		{"negative dimensions", Config{APIKey: "k", Dimensions: -1}, "Dimensions"},
		{"dimensions below the model's range", Config{APIKey: "k", Dimensions: 64}, "Dimensions"},
		{"dimensions above the model's range", Config{APIKey: "k", Dimensions: 4096}, "Dimensions"},
		{"dimensions above text-embedding-004's range", Config{APIKey: "k", EmbeddingModel: "text-embedding-004", Dimensions: 1024}, "Dimensions"},
		{"dimensions of a fixed-size model", Config{APIKey: "k", EmbeddingModel: "models/embedding-001", Dimensions: 256}, "Dimensions"},
		{"negative max batch", Config{APIKey: "k", MaxBatch: -1}, "MaxBatch"},
		{"max batch above the API's limit", Config{APIKey: "k", MaxBatch: 1000}, "MaxBatch"},
		{"unknown task type", Config{APIKey: "k", TaskType: "retrieval_document"}, "TaskType"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if err == nil {
				t.Fatalf("New(%+v) = %v, nil; want an error", tt.cfg, c)
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("error %q does not wrap ErrConfig", err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name the field %s", err, tt.field)
			}
		})
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
	if _, err := New(Config{}); !errors.Is(err, ErrConfig) {
		t.Errorf("New with no key and GEMINI_API_KEY set: %v, want ErrConfig", err)
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
