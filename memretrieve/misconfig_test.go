package memretrieve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// TestNewEngineRejectsMissingProviders: a store, an embedder, and in ModeLLM
// a hypothesis provider are required; a nil one — or a typed nil, such as
// a nil *memcore.FileStore in the interface — is a construction error that
// names it, never a silently disabled engine or a panic.
func TestNewEngineRejectsMissingProviders(t *testing.T) {
	var nilFileStore *memcore.FileStore
	var nilEmbedder *fake.Embedder
	var nilLLM *fake.LLM
	store := memcore.NewMemStore()
	tests := []struct {
		name    string
		store   memcore.MemoryStore
		emb     memcore.Embedder
		llm     memcore.LLMProvider
		mode    HypothesisMode
		says    []string
		noStore bool
	}{
		{"nil store", nil, newEmbedder(t), newLLM(t), ModeLLM, []string{"store"}, true},
		{"typed-nil store", nilFileStore, newEmbedder(t), newLLM(t), ModeLLM, []string{"store"}, true},
		{"nil embedder", store, nil, newLLM(t), ModeLLM, []string{"embedder", "memory.embedding_model"}, false},
		{"typed-nil embedder", store, nilEmbedder, newLLM(t), ModeLLM, []string{"embedder"}, false},
		{"nil hypothesis provider in ModeLLM", store, newEmbedder(t), nil, ModeLLM, []string{"hypothesis", "memory.retrieval_model", "ModeIdentity"}, false},
		{"typed-nil hypothesis provider", store, newEmbedder(t), nilLLM, ModeLLM, []string{"hypothesis"}, false},
		{"nil embedder in ModeIdentity", store, nil, nil, ModeIdentity, []string{"embedder"}, false},
		{"everything missing", nil, nil, nil, ModeLLM, []string{"store", "embedder", "hypothesis"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Mode = tt.mode
			var e *Engine
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("NewEngine panicked: %v", r)
					}
				}()
				e, err = NewEngine(tt.store, tt.emb, tt.llm, cfg)
			}()
			if e != nil || !errors.Is(err, memcore.ErrInvalidConfig) {
				t.Fatalf("NewEngine = %v, %v; want no engine and an error matching memcore.ErrInvalidConfig", e, err)
			}
			var ce *memcore.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("%v is not a *memcore.ConfigError", err)
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not mention %q", err, s)
				}
			}
			if errors.Is(err, ErrNoStore) != tt.noStore {
				t.Errorf("errors.Is(err, ErrNoStore) = %v, want %v", !tt.noStore, tt.noStore)
			}
		})
	}
	// In ModeIdentity the hypothesis provider is not used and may be nil.
	cfg := DefaultConfig()
	cfg.Mode = ModeIdentity
	if _, err := NewEngine(store, newEmbedder(t), nil, cfg); err != nil {
		t.Errorf("ModeIdentity without a hypothesis provider: %v", err)
	}
}

// TestNilEngineIsRetrievalOff: retrieval off is an engine never built; a nil
// *Engine is safe to use and says so in every Result.
func TestNilEngineIsRetrievalOff(t *testing.T) {
	var e *Engine
	ctx := context.Background()
	e.Start(ctx)
	e.TriggerRebuild()
	if err := e.Rebuild(ctx); err != nil {
		t.Errorf("Rebuild = %v", err)
	}
	res, err := e.Retrieve(ctx, "t", userWindow("anything"))
	if err != nil || res == nil || res.Skipped != SkipDisabled || res.Injection != "" {
		t.Errorf("Retrieve = %+v, %v; want an empty result skipped as disabled", res, err)
	}
	if e.Enabled() {
		t.Error("a nil engine says it is enabled")
	}
	if err := e.Close(ctx); err != nil {
		t.Errorf("Close = %v", err)
	}
}

// bulkFailingEmbedder fails calls of more than one text (index builds) with
// ErrUnavailable and embeds single texts (identity-mode queries).
type bulkFailingEmbedder struct{ *fake.Embedder }

func (b bulkFailingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) > 1 {
		return nil, fmt.Errorf("embedder: %w", memcore.ErrUnavailable)
	}
	return b.Embedder.Embed(ctx, texts)
}

// TestResultSaysWhyTheTurnGotNothing: every way a turn can get nothing sets
// Result.Skipped, and Result.Err carries the cause, so a host can tell a
// dead embedder from a slow model from no index yet. With the lexical index
// on, a failure of the vector side (a model call, or an index without
// vectors) no longer leaves the turn with nothing: the lexical ranking
// answers, and Result.VectorSkipped says why the vector ranking is
// missing, with the same cause in Result.Err.
func TestResultSaysWhyTheTurnGotNothing(t *testing.T) {
	type setup struct {
		emb  memcore.Embedder
		llm  memcore.LLMProvider
		mode HypothesisMode
		// start: Start instead of Rebuild; none: neither.
		start, none bool
		window      []memcore.Message
		ctx         func() (context.Context, context.CancelFunc)
	}
	locked := userWindow("how do we lock rows for concurrent writes?")
	tests := []struct {
		name   string
		setup  func(t *testing.T) setup
		want   SkipReason
		cause  error // matched with errors.Is; nil: Err is nil
		retErr error // Retrieve's own error
		// vector: with the lexical index on, want is the vector side's
		// reason (Result.VectorSkipped) and the lexical ranking answers.
		vector bool
	}{
		{"a turn that ran", func(t *testing.T) setup {
			return setup{emb: newEmbedder(t), llm: hypothesisLLM(t, "Prefers optimistic locking."), mode: ModeLLM, window: locked}
		}, SkipNone, nil, nil, false},
		{"empty window", func(t *testing.T) setup {
			return setup{emb: newEmbedder(t), llm: newLLM(t), mode: ModeLLM,
				window: []memcore.Message{{Role: memcore.RoleTool, Content: "tool output"}}}
		}, SkipEmptyWindow, nil, nil, false},
		{"not started", func(t *testing.T) setup {
			return setup{emb: newEmbedder(t), mode: ModeIdentity, none: true, window: locked}
		}, SkipNoIndex, nil, nil, false},
		{"first build failed", func(t *testing.T) setup {
			return setup{emb: bulkFailingEmbedder{newEmbedder(t)}, mode: ModeIdentity, start: true, window: locked}
		}, SkipNoIndex, memcore.ErrUnavailable, nil, true},
		{"hypothesis model rate limited", func(t *testing.T) setup {
			return setup{emb: newEmbedder(t), llm: newLLM(t, fake.LLMConfig{FailNext: 1, FailWith: memcore.ErrRateLimited}), mode: ModeLLM, window: locked}
		}, SkipHypothesisError, memcore.ErrRateLimited, nil, true},
		{"hypothesis model unauthenticated", func(t *testing.T) setup {
			return setup{emb: newEmbedder(t), llm: newLLM(t, fake.LLMConfig{FailNext: 1, FailWith: memcore.ErrUnauthenticated}), mode: ModeLLM, window: locked}
		}, SkipHypothesisError, memcore.ErrUnauthenticated, nil, true},
		{"hypothesis reply holds nothing", func(t *testing.T) setup {
			return setup{emb: newEmbedder(t), llm: newLLM(t, fake.LLMConfig{Replies: []string{""}}), mode: ModeLLM, window: locked}
		}, SkipHypothesisError, memcore.ErrInvalidResponse, nil, true},
		{"embedder down", func(t *testing.T) setup {
			emb := newEmbedder(t)
			return setup{emb: &failAfterBuild{Embedder: emb, err: memcore.ErrUnavailable}, llm: hypothesisLLM(t, "Prefers optimistic locking."), mode: ModeLLM, window: locked}
		}, SkipEmbedderError, memcore.ErrUnavailable, nil, true},
		{"hypothesis model hangs", func(t *testing.T) setup {
			l := &blockingLLM{release: make(chan struct{})}
			t.Cleanup(func() { close(l.release) })
			return setup{emb: newEmbedder(t), llm: l, mode: ModeLLM, window: locked}
		}, SkipTimeout, context.DeadlineExceeded, nil, true},
		{"caller cancelled", func(t *testing.T) setup {
			return setup{emb: newEmbedder(t), llm: newLLM(t), mode: ModeLLM, window: locked,
				ctx: func() (context.Context, context.CancelFunc) {
					ctx, cancel := context.WithCancel(context.Background())
					cancel()
					return ctx, cancel
				}}
		}, SkipCancelled, context.Canceled, context.Canceled, false},
	}
	for _, tt := range tests {
		for _, lexical := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/lexical=%v", tt.name, lexical), func(t *testing.T) {
				s := tt.setup(t)
				store := memcore.NewMemStore()
				write(t, store, threeMemories()...)
				cfg := DefaultConfig()
				if !lexical {
					cfg = vectorOnly(cfg)
				}
				cfg.Mode = s.mode
				cfg.Timeout = 2 * time.Second
				e := newEngine(t, store, s.emb, s.llm, cfg, withRetryDelay(time.Hour))
				switch {
				case s.start:
					e.Start(context.Background())
				case !s.none:
					rebuild(t, e)
				}
				ctx, cancel := context.WithCancel(context.Background())
				if s.ctx != nil {
					ctx, cancel = s.ctx()
				}
				defer cancel()
				res, err := e.Retrieve(ctx, "turn", s.window)
				if !errors.Is(err, tt.retErr) || (tt.retErr == nil) != (err == nil) {
					t.Fatalf("Retrieve error = %v, want %v", err, tt.retErr)
				}
				want, wantVector := tt.want, SkipNone
				if lexical && tt.vector {
					want, wantVector = SkipNone, tt.want
				}
				if res.Skipped != want || res.VectorSkipped != wantVector {
					t.Errorf("Skipped = %v, VectorSkipped = %v, want %v and %v (Err %v)", res.Skipped, res.VectorSkipped, want, wantVector, res.Err)
				}
				if tt.cause == nil && res.Err != nil || tt.cause != nil && !errors.Is(res.Err, tt.cause) {
					t.Errorf("Err = %v, want %v", res.Err, tt.cause)
				}
				if want != SkipNone && (len(res.Memories) != 0 || res.Injection != "") {
					t.Errorf("a skipped turn has memories: %+v", res)
				}
				if want == SkipNone && len(res.Memories) == 0 {
					t.Errorf("a turn that ran found nothing")
				}
				if wantVector != SkipNone && (!noVectorHits(res) || !found(res, locking.Content)) {
					t.Errorf("memories %v (ranked %+v); want the lexical match %s, no vector hits", ids(res), res.Ranked, locking.Meta.ID)
				}
				if tt.want != SkipNone && tt.want.String() == "" {
					t.Errorf("SkipReason %d has no name", tt.want)
				}
			})
		}
	}
}

// failAfterBuild embeds normally until the first index build is over,
// then fails every call with err.
type failAfterBuild struct {
	*fake.Embedder
	err   error
	built atomic.Bool
}

func (f *failAfterBuild) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.built.Swap(true) {
		return nil, fmt.Errorf("embedder: %w", f.err)
	}
	return f.Embedder.Embed(ctx, texts)
}
