package openai_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/providers/openai"
)

func TestNewRejectsBadConfig(t *testing.T) {
	const key = "sk-test"
	tests := []struct {
		name string
		cfg  openai.Config
		// mention is a word the error must contain, naming what is wrong.
		mention string
	}{
		{"no API key for api.openai.com", openai.Config{Model: "gpt-4o-mini"}, "APIKey"},
		{"no API key for explicit api.openai.com", openai.Config{BaseURL: "https://api.openai.com/v1/", Model: "gpt-4o-mini"}, "APIKey"},
		{"API key with a newline", openai.Config{APIKey: key + "\n", Model: "gpt-4o-mini"}, "APIKey"},
		{"no model at all", openai.Config{APIKey: key}, "Model"},
		{"relative BaseURL", openai.Config{BaseURL: "localhost:11434/v1", Model: "llama3.2"}, "BaseURL"},
		{"ftp BaseURL", openai.Config{BaseURL: "ftp://example.com/v1", Model: "llama3.2"}, "BaseURL"},
		{"BaseURL with a query", openai.Config{BaseURL: "http://localhost:8000/v1?x=1", Model: "llama3.2"}, "BaseURL"},
		{"unparsable BaseURL", openai.Config{BaseURL: "http://[::1", Model: "llama3.2"}, "BaseURL"},
		{"model with a space", openai.Config{APIKey: key, Model: "gpt-4o mini"}, "Model"},
		{"embedding model with a tab", openai.Config{BaseURL: "http://localhost:11434/v1", EmbeddingModel: "nomic\tembed"}, "EmbeddingModel"},
		{"negative dimensions", openai.Config{APIKey: key, EmbeddingModel: "text-embedding-3-small", Dimensions: -1}, "Dimensions"},
		{"dimensions without an embedding model", openai.Config{APIKey: key, Model: "gpt-4o-mini", Dimensions: 256}, "Dimensions"},
		{"negative MaxBatch", openai.Config{APIKey: key, EmbeddingModel: "text-embedding-3-small", MaxBatch: -1}, "MaxBatch"},
		{"MaxBatch above OpenAI's limit", openai.Config{APIKey: key, EmbeddingModel: "text-embedding-3-small", MaxBatch: 2049}, "MaxBatch"},
		{"unknown embedding model on OpenAI", openai.Config{APIKey: key, EmbeddingModel: "nomic-embed-text"}, "EmbeddingModel"},
		{"chat model as embedding model", openai.Config{APIKey: key, EmbeddingModel: "gpt-4o-mini"}, "EmbeddingModel"},
		{"dimensions for ada-002", openai.Config{APIKey: key, EmbeddingModel: "text-embedding-ada-002", Dimensions: 512}, "Dimensions"},
		{"dimensions above native (3-small)", openai.Config{APIKey: key, EmbeddingModel: "text-embedding-3-small", Dimensions: 1537}, "Dimensions"},
		{"dimensions above native (3-large)", openai.Config{APIKey: key, EmbeddingModel: "text-embedding-3-large", Dimensions: 3073}, "Dimensions"},
		{"embedding model as chat model", openai.Config{APIKey: key, Model: "text-embedding-3-small"}, "Model"},
		{"completions-only model", openai.Config{APIKey: key, Model: "gpt-3.5-turbo-instruct"}, "Model"},
		{"speech model", openai.Config{APIKey: key, Model: "whisper-1"}, "Model"},
		{"other vendor's model on OpenAI", openai.Config{APIKey: key, Model: "llama3.2"}, "Model"},
		{"Authorization in Headers", openai.Config{APIKey: key, Model: "gpt-4o-mini", Headers: http.Header{"authorization": {"x"}}}, "Authorization"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := openai.New(tt.cfg)
			if !errors.Is(err, openai.ErrConfig) {
				t.Fatalf("New(%+v) = %v, %v; want an error wrapping ErrConfig", tt.cfg, c, err)
			}
			if c != nil {
				t.Errorf("New returned a client with its error")
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not name %s", err, tt.mention)
			}
		})
	}
}

func TestNewAcceptsGoodConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  openai.Config
	}{
		{"OpenAI chat", openai.Config{APIKey: "k", Model: "gpt-4o-mini"}},
		{"OpenAI reasoning model", openai.Config{APIKey: "k", Model: "o3-mini"}},
		{"OpenAI fine-tune", openai.Config{APIKey: "k", Model: "ft:gpt-4o-mini-2024-07-18:acme::9xYz"}},
		{"OpenAI embeddings with dimensions", openai.Config{APIKey: "k", EmbeddingModel: "text-embedding-3-large", Dimensions: 3072}},
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

func TestModelIncludesDimensions(t *testing.T) {
	tests := []struct {
		cfg  openai.Config
		want string
	}{
		{openai.Config{APIKey: "k", EmbeddingModel: "text-embedding-3-small"}, "text-embedding-3-small"},
		{openai.Config{APIKey: "k", EmbeddingModel: "text-embedding-3-small", Dimensions: 256}, "text-embedding-3-small@256"},
		{openai.Config{BaseURL: "http://localhost:11434/v1", EmbeddingModel: "nomic-embed-text", Dimensions: 64}, "nomic-embed-text@64"},
		{openai.Config{APIKey: "k", Model: "gpt-4o-mini"}, ""},
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
