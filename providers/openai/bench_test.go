package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/openai"
)

// cannedEmbeddings serves, for every embeddings request, a precomputed
// body of n vectors of dims floats listed in reverse index order, so that
// the benchmarks measure the client (encoding, decoding, reassembly) and
// not the server.
func cannedEmbeddings(b *testing.B, n, dims int) *httptest.Server {
	b.Helper()
	vecs := make([][]float32, n)
	order := make([]int, n)
	for i := range vecs {
		vecs[i] = hashEmbed(fmt.Sprintf("text %d", i), dims)
		order[i] = n - 1 - i
	}
	body := embeddingsBody(b, "text-embedding-3-small", vecs, order, n)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkEmbed embeds one full batch (2048 texts → 2048 vectors) per
// operation, from the decoded reply of a local server.
func BenchmarkEmbed(b *testing.B) {
	for _, dims := range []int{256, 1536} {
		b.Run(fmt.Sprintf("2048x%d", dims), func(b *testing.B) {
			const n = 2048
			srv := cannedEmbeddings(b, n, dims)
			c, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", EmbeddingModel: "text-embedding-3-small", Dimensions: dims})
			if err != nil {
				b.Fatal(err)
			}
			in := texts(n)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := c.Embed(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkComplete makes one chat completion per operation against a
// local server with a canned reply: the client's own overhead.
func BenchmarkComplete(b *testing.B) {
	body := chatCompletionBody(b, "gpt-4o-mini", `{"codeword":"AMBER-1234","count":7}`, 40, 12)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "gpt-4o-mini"})
	if err != nil {
		b.Fatal(err)
	}
	zero := 0.0
	req := memcore.CompletionRequest{
		System:      "Extract the memory.",
		Messages:    []memcore.Message{{Role: memcore.RoleUser, Content: "Use tabs."}},
		Temperature: &zero,
		ResponseSchema: &memcore.Schema{Name: "answer", Definition: json.RawMessage(
			`{"type":"object","properties":{"codeword":{"type":"string"},"count":{"type":"integer"}},"required":["codeword","count"],"additionalProperties":false}`)},
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Complete(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
