package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/gemini"
)

// exampleServer stands in for the Gemini API so that the examples run
// offline: it answers generateContent with a fixed reply and
// batchEmbedContents with a two-dimensional vector of each text's length
// and vowel count, in the API's wire format.
func exampleServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-goog-api-key") != "my-api-key" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, ":generateContent"):
			io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Use tabs for indentation."}]},"finishReason":"STOP"}],
				"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":5,"totalTokenCount":17},"modelVersion":"gemini-2.5-flash"}`)
		case strings.HasSuffix(r.URL.Path, ":batchEmbedContents"):
			var req struct {
				Requests []struct {
					Content struct {
						Parts []struct{ Text string } `json:"parts"`
					} `json:"content"`
				} `json:"requests"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			type embedding struct {
				Values []float32 `json:"values"`
			}
			var resp struct {
				Embeddings []embedding `json:"embeddings"`
			}
			for _, q := range req.Requests {
				text := q.Content.Parts[0].Text
				vowels := strings.Count(text, "a") + strings.Count(text, "e") + strings.Count(text, "o")
				resp.Embeddings = append(resp.Embeddings, embedding{Values: []float32{float32(len(text)), float32(vowels)}})
			}
			json.NewEncoder(w).Encode(resp)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
}

func Example() {
	srv := exampleServer() // the Gemini API, for this example
	defer srv.Close()

	client, err := gemini.New(gemini.Config{
		APIKey:  "my-api-key", // in a program: os.Getenv("GEMINI_API_KEY")
		BaseURL: srv.URL,      // leave empty for the Gemini API
		Model:   "gemini-2.5-flash",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := client.Complete(context.Background(), memcore.CompletionRequest{
		System:   "State the user's coding preference as one sentence.",
		Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "I always indent with tabs."}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s (%s, %d tokens)\n", resp.Text, resp.Model, resp.Usage.Total())
	// Output: Use tabs for indentation. (gemini-2.5-flash, 17 tokens)
}

func ExampleClient_Embed() {
	srv := exampleServer()
	defer srv.Close()

	client, err := gemini.New(gemini.Config{APIKey: "my-api-key", BaseURL: srv.URL, EmbeddingModel: "my-embedder", Dimensions: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	vecs, err := client.Embed(context.Background(), []string{"tabs", "spaces"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(client.Model())
	for _, v := range vecs {
		fmt.Printf("%.2f\n", v) // scaled to unit length
	}
	fmt.Println(client.QueryEmbedder().Model())
	// Output:
	// my-embedder@2
	// [0.97 0.24]
	// [0.95 0.32]
	// my-embedder@2;task=RETRIEVAL_QUERY
}

// New names every bad field of a Config and the values it accepts; errors
// of the calls match memcore's taxonomy.
func ExampleNew_errors() {
	srv := exampleServer()
	defer srv.Close()

	_, err := gemini.New(gemini.Config{APIKey: "my-api-key", Dimensions: 64, MaxBatch: 1000})
	fmt.Println(errors.Is(err, gemini.ErrInvalidConfig))
	fmt.Println(err)

	client, err := gemini.New(gemini.Config{APIKey: "wrong-key", BaseURL: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = client.Embed(context.Background(), []string{"hello"})
	fmt.Println(errors.Is(err, memcore.ErrUnauthenticated), memcore.IsTransient(err))
	// Output:
	// true
	// gemini: invalid config: Dimensions is 64, want 0 or 128–3072 for gemini-embedding-001 (0 means the model's default); MaxBatch is 1000, want 1–100 (0 means 100, the Gemini API's limit per request)
	// true false
}
