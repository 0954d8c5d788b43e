package memcapture

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// TestLastFailure: Stats.LastFailure says which step of the latest failed
// pass failed, when, and why, with the cause reachable by errors.Is.
func TestLastFailure(t *testing.T) {
	clock := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	rateLimited := func(t *testing.T) memcore.LLMProvider {
		return newLLM(t, fake.LLMConfig{FailNext: 100, FailWith: memcore.ErrRateLimited})
	}
	tests := []struct {
		name  string
		llm   func(t *testing.T) memcore.LLMProvider
		store memcore.MemoryStore
		cfg   Config
		kind  FailureKind
		cause error
	}{
		{"classifier rate limited", rateLimited, memcore.NewMemStore(), Config{}, FailureClassifier, memcore.ErrRateLimited},
		{"classifier unauthenticated", func(t *testing.T) memcore.LLMProvider {
			return newLLM(t, fake.LLMConfig{FailNext: 1, FailWith: memcore.ErrUnauthenticated})
		}, memcore.NewMemStore(), Config{}, FailureClassifier, memcore.ErrUnauthenticated},
		{"reply unreadable", func(t *testing.T) memcore.LLMProvider { return newLLM(t, always("no JSON here")) },
			memcore.NewMemStore(), Config{}, FailureUnreadableReply, errUnparseable},
		{"store cannot list", func(t *testing.T) memcore.LLMProvider { return newLLM(t, always(nothing)) },
			failingStore{MemoryStore: memcore.NewMemStore(), listFails: true}, Config{}, FailureStore, errDisk},
		{"write fails", func(t *testing.T) memcore.LLMProvider {
			return newLLM(t, always(reply(mem{"content": "Uses tabs. FAIL", "scope": "repo", "category": "project-conventions"})))
		}, failingStore{MemoryStore: memcore.NewMemStore()}, Config{}, FailureStore, errDisk},
		{"classifier panics", func(t *testing.T) memcore.LLMProvider {
			return newLLM(t, fake.LLMConfig{ReplyFunc: func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
				panic("provider bug")
			}})
		}, memcore.NewMemStore(), Config{}, FailurePanic, nil},
		{"classifier does not answer in time", func(t *testing.T) memcore.LLMProvider {
			return newLLM(t, fake.LLMConfig{ReplyFunc: func(ctx context.Context, _ memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}})
		}, memcore.NewMemStore(), Config{PassTimeout: 50 * time.Millisecond}, FailureClassifier, context.DeadlineExceeded},
		{"embedder down", func(t *testing.T) memcore.LLMProvider { return newLLM(t, always(nothing)) }, memcore.NewMemStore(),
			Config{Embedder: func() *fake.Embedder {
				e := newEmbedder(t, fake.EmbedderConfig{})
				failNext(t, e, 100, memcore.ErrUnavailable)
				return e
			}()}, FailureEmbedder, memcore.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seed(t, tt.store, "Uses spaces.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
			cfg := tt.cfg
			cfg.Clock = func() time.Time { return clock }
			p := startPipeline(t, tt.llm(t), tt.store, cfg)
			if f := p.Stats().LastFailure; f.Kind != "" || f.Err != nil {
				t.Fatalf("LastFailure before any pass = %+v, want none", f)
			}
			p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("Let's use tabs from now on.")})
			f := passes(t, p, 1).LastFailure
			if f.Kind != tt.kind || f.Err == nil || !f.At.Equal(clock) {
				t.Fatalf("LastFailure = %+v, want kind %q at %v", f, tt.kind, clock)
			}
			if tt.cause != nil && !errors.Is(f.Err, tt.cause) {
				t.Errorf("LastFailure.Err = %v, does not match %v", f.Err, tt.cause)
			}
			// A pass that ran out of time says so, with its limit.
			const late = "no answer within the pass's time limit (50ms): classifier: "
			if (tt.cause == context.DeadlineExceeded) != strings.HasPrefix(f.Err.Error(), late) {
				t.Errorf("LastFailure.Err = %q; starts with %q: %v", f.Err, late, tt.cause == context.DeadlineExceeded)
			}
		})
	}
}
