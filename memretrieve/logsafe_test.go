package memretrieve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// echoEmbedder embeds with the fake embedder until fail is set, then fails
// every call with an error quoting its input, as a provider quoting the
// rejected request might.
type echoEmbedder struct {
	*fake.Embedder
	fail bool
}

func (e *echoEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.fail {
		return nil, fmt.Errorf("%w: rejected input %q", memcore.ErrInvalidRequest, strings.Join(texts, " "))
	}
	return e.Embedder.Embed(ctx, texts)
}

// TestLogsHoldNoSecrets: provider errors that quote the conversation or
// the memories — the hypothesis model's, the embedder's at query time and
// at build time — reach neither the log, even at debug level, nor
// Result.Err, and the cause stays reachable with errors.Is.
func TestLogsHoldNoSecrets(t *testing.T) {
	secret := "ghp_" + gen36()
	window := userWindow("deploy with the token " + secret + " please")
	tests := []struct {
		name  string
		setup func(t *testing.T, store memcore.MemoryStore) (*Engine, *logBuffer)
		says  string
	}{
		{"hypothesis model error", func(t *testing.T, store memcore.MemoryStore) (*Engine, *logBuffer) {
			llm := newLLM(t, fake.LLMConfig{ReplyFunc: func(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
				return nil, fmt.Errorf("%w: cannot process %q", memcore.ErrInvalidRequest, req.Messages[0].Content)
			}})
			var logs logBuffer
			e := newEngine(t, store, newEmbedder(t), llm, DefaultConfig(), withLogger(logs.logger()))
			rebuild(t, e)
			return e, &logs
		}, "the hypothesis model failed"},
		{"embedder error at query time", func(t *testing.T, store memcore.MemoryStore) (*Engine, *logBuffer) {
			emb := &echoEmbedder{Embedder: newEmbedder(t)}
			var logs logBuffer
			e := newEngine(t, store, emb, nil, identityConfig(), withLogger(logs.logger()))
			rebuild(t, e)
			emb.fail = true
			return e, &logs
		}, "the embedder failed"},
		{"embedder error at build time", func(t *testing.T, store memcore.MemoryStore) (*Engine, *logBuffer) {
			write(t, store, mem(testID(9), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 5, "Deploys use the token "+secret+"."))
			emb := &echoEmbedder{Embedder: newEmbedder(t), fail: true}
			var logs logBuffer
			e := newEngine(t, store, emb, nil, identityConfig(), withLogger(logs.logger()), withRetryDelay(time.Hour))
			e.Start(context.Background())
			return e, &logs
		}, "index build incomplete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memcore.NewMemStore()
			write(t, store, threeMemories()...)
			e, logs := tt.setup(t, store)
			res, err := e.Retrieve(context.Background(), "t", window)
			if err != nil {
				t.Fatal(err)
			}
			if res.Err == nil || !errors.Is(res.Err, memcore.ErrInvalidRequest) {
				t.Errorf("Result.Err = %v, want the provider's error", res.Err)
			} else if strings.Contains(res.Err.Error(), secret) {
				t.Errorf("Result.Err holds a secret: %v", res.Err)
			}
			waitFor(t, "the log line", func() bool {
				return containsAny(logs.lines("debug"), tt.says) || containsAny(logs.lines("warn"), tt.says)
			})
			logs.mu.Lock()
			out := logs.buf.String()
			logs.mu.Unlock()
			if strings.Contains(out, secret) {
				t.Errorf("the log holds a secret:\n%s", out)
			}
		})
	}
}

// gen36 returns 36 letters and digits that look machine-made, from a fixed
// seed.
func gen36() string {
	r := randFor(9)
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte("A1b")
	for len(b) < 36 {
		b = append(b, alnum[r.IntN(len(alnum))])
	}
	return string(b)
}
