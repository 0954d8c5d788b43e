package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// The benchmarks measure the client's own cost — building the request,
// the SDK's encoding and decoding, checking and normalising the vectors —
// against a transport that answers from memory.

func benchmarkEmbed(b *testing.B, n, dims int) {
	in := texts(n)
	batch := min(n, MaxBatchLimit)
	embs := make([]map[string]any, batch)
	for i := range embs {
		embs[i] = map[string]any{"values": hashVector(in[i], dims, "RETRIEVAL_DOCUMENT")}
	}
	body, err := json.Marshal(map[string]any{"embeddings": embs})
	if err != nil {
		b.Fatal(err)
	}
	c, err := New(Config{APIKey: "k", Dimensions: dims, HTTPClient: answering(200, "application/json", body)})
	if err != nil {
		b.Fatal(err)
	}
	if n%batch != 0 {
		b.Fatalf("n %d must be a multiple of the batch %d", n, batch)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		vecs, err := c.Embed(context.Background(), in)
		if err != nil || len(vecs) != n {
			b.Fatalf("%d vectors, %v", len(vecs), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/text")
}

func BenchmarkEmbed(b *testing.B) {
	for _, tc := range []struct{ n, dims int }{{1, 768}, {100, 768}, {100, 3072}, {2500, 768}} {
		b.Run(fmt.Sprintf("texts=%d/dims=%d", tc.n, tc.dims), func(b *testing.B) { benchmarkEmbed(b, tc.n, tc.dims) })
	}
}

func BenchmarkComplete(b *testing.B) {
	c, err := New(Config{APIKey: "k", HTTPClient: answering(200, "application/json", fixture(b, "generate_content.json"))})
	if err != nil {
		b.Fatal(err)
	}
	req := memcore.CompletionRequest{
		System:   "You classify memories.",
		Messages: []memcore.Message{user("I prefer tabs."), assistant("Noted."), user("Classify the above.")},
		ResponseSchema: &memcore.Schema{Name: "s", Definition: json.RawMessage(
			`{"type":"object","properties":{"kind":{"type":"string"}},"required":["kind"]}`)},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Complete(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
