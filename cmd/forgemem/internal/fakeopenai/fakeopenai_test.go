package fakeopenai_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/fakeopenai"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
	"github.com/forgemem/forgemem/providers/openai"
)

func TestServerSpeaksOpenAI(t *testing.T) {
	srv, err := fakeopenai.Start(func(req fakeopenai.ChatRequest) string {
		return "echo " + req.SchemaName + ": " + req.Messages[len(req.Messages)-1].Content
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), Model: "m", EmbeddingModel: "e"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	resp, err := c.Complete(ctx, memcore.CompletionRequest{
		System:         "be brief",
		Messages:       []memcore.Message{{Role: memcore.RoleUser, Content: "hello"}},
		ResponseSchema: &memcore.Schema{Name: "greeting", Definition: []byte(`{"type":"object"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "echo greeting: hello" {
		t.Fatalf("reply %q", resp.Text)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Model != "m" || reqs[0].Messages[0].Role != memcore.RoleSystem {
		t.Fatalf("recorded %+v", reqs)
	}

	vecs, err := c.Embed(ctx, []string{"stale build cache", "my cat likes fish"})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := fake.NewEmbedder(fake.EmbedderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := emb.Embed(ctx, []string{"stale build cache", "my cat likes fish"})
	for i := range want {
		for j := range want[i] {
			if vecs[i][j] != want[i][j] {
				t.Fatalf("vector %d differs from the hashing embedder's at %d", i, j)
			}
		}
	}
	if got := srv.Embedded(); len(got) != 2 || got[1] != "my cat likes fish" {
		t.Fatalf("embedded %q", got)
	}

	srv.FailWith(http.StatusServiceUnavailable)
	if _, err := c.Embed(ctx, []string{"x"}); !errors.Is(err, memcore.ErrUnavailable) {
		t.Fatalf("a failing server gave %v, want ErrUnavailable", err)
	}
}
