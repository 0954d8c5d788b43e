package embedserver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/forgemem/forgemem/providers/openai"
	"github.com/forgemem/forgemem/tools/internal/embedserver"
)

// benchSentences returns n distinct sentences of about a dozen words, the
// length of a typical memory.
func benchSentences(n int) []string {
	subjects := []string{"The release script", "Our CI job", "The user", "The storage layer", "A flaky test", "The linter"}
	verbs := []string{"prefers", "rejects", "rebuilds", "caches", "documents", "retries"}
	objects := []string{"every Go module before tagging", "the vector index on startup",
		"tabs instead of spaces in generated code", "failed requests with exponential backoff",
		"the embedding cache after a model change", "integration tests against a local server", "the changelog"}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s %s %s (note %d).", subjects[i%len(subjects)], verbs[i/len(subjects)%len(verbs)],
			objects[i%len(objects)], i)
	}
	return out
}

// BenchmarkEmbed measures the server end to end, through providers/openai
// over HTTP on 127.0.0.1, in batches of 1, 64 and 256 (the server's limit)
// distinct sentences; it reports sentences per second. Run it alone on an
// idle machine:
//
//	go test -run '^$' -bench Embed -benchtime 10s ./tools/internal/embedserver
func BenchmarkEmbed(b *testing.B) {
	startCtx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	start := time.Now()
	baseURL, stop, err := embedserver.Start(startCtx, embedserver.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	b.Logf("ready %v after starting node", time.Since(start).Round(time.Millisecond))
	ctx := context.Background()
	client, err := openai.New(openai.Config{BaseURL: baseURL, EmbeddingModel: embedserver.Model, MaxBatch: embedserver.MaxInputs})
	if err != nil {
		b.Fatal(err)
	}
	for _, batch := range []int{1, 64, embedserver.MaxInputs} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			texts := benchSentences(batch * 50)
			if _, err := client.Embed(ctx, texts[:batch]); err != nil { // warm up
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				k := i % 50 * batch
				if _, err := client.Embed(ctx, texts[k:k+batch]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "sentences/s")
		})
	}
}
