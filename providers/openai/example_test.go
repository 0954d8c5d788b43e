package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/openai"
)

// exampleServer stands in for an OpenAI-compatible server such as Ollama:
// it answers chat completions with a fixed JSON reply and embeddings with
// unit vectors, listed in reverse order as a server may do.
func exampleServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/chat/completions":
			fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1741570283,"model":"llama3.2",
				"choices":[{"index":0,"message":{"role":"assistant","content":"{\"preference\":\"tabs\"}"},"finish_reason":"stop"}],
				"usage":{"prompt_tokens":31,"completion_tokens":6,"total_tokens":37}}`)
		case "/v1/embeddings":
			var req struct {
				Input []string `json:"input"`
			}
			_ = json.NewDecoder(r.Body).Decode(&req)
			type item struct {
				Object    string    `json:"object"`
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}
			var data []item
			for i := len(req.Input) - 1; i >= 0; i-- {
				v := make([]float32, 4)
				v[i%4] = 1
				data = append(data, item{"embedding", i, v})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "nomic-embed-text"})
		case "/v1/unauthorized/chat/completions":
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
		default:
			http.NotFound(w, r)
		}
	}))
}

// A client for a local OpenAI-compatible server (here a test server; for
// Ollama, BaseURL is "http://localhost:11434/v1") asking for structured
// output.
func ExampleClient_Complete() {
	srv := exampleServer()
	defer srv.Close()

	client, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "llama3.2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	temperature := 0.0
	resp, err := client.Complete(context.Background(), memcore.CompletionRequest{
		System:      "Extract the user's coding preference.",
		Messages:    []memcore.Message{{Role: memcore.RoleUser, Content: "I always indent with tabs."}},
		Temperature: &temperature,
		ResponseSchema: &memcore.Schema{
			Name: "preference",
			Definition: json.RawMessage(`{"type":"object","properties":{"preference":{"type":"string"}},
				"required":["preference"],"additionalProperties":false}`),
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Text)
	fmt.Println(resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output:
	// {"preference":"tabs"}
	// 31 6
}

// Embed returns the vectors in input order, whatever order the server lists
// them in; Model names the vectors for caching, with the dimension.
func ExampleClient_Embed() {
	srv := exampleServer()
	defer srv.Close()

	client, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", EmbeddingModel: "nomic-embed-text", Dimensions: 4, MaxBatch: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	vecs, err := client.Embed(context.Background(), []string{"tabs", "spaces", "gofmt"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(client.Model())
	for _, v := range vecs {
		fmt.Println(v)
	}
	// Output:
	// nomic-embed-text@4
	// [1 0 0 0]
	// [0 1 0 0]
	// [1 0 0 0]
}

// Errors match memcore's taxonomy with errors.Is.
func ExampleClient_Complete_errors() {
	srv := exampleServer()
	defer srv.Close()

	client, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1/unauthorized", APIKey: "sk-wrong", Model: "gpt-4o-mini"})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = client.Complete(context.Background(), memcore.CompletionRequest{
		Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "hello"}},
	})
	fmt.Println(errors.Is(err, memcore.ErrUnauthenticated), memcore.IsTransient(err))
	// Output:
	// true false
}

// New refuses an unusable configuration at once, naming every bad field
// and the values it accepts.
func ExampleNew() {
	_, err := openai.New(openai.Config{APIKey: "sk-...", Dimensions: 4096, MaxBatch: 5000})
	fmt.Println(errors.Is(err, openai.ErrInvalidConfig))
	fmt.Println(err)
	// Output:
	// true
	// openai: invalid config: Dimensions is 4096, want 0–1536 for text-embedding-3-small; MaxBatch is 5000, want 1–2048 (0 means 2048)
}
