package memcapture

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// stallingLLM answers its first call only when released, whatever its
// context says, with first; later calls answer at once with later.
type stallingLLM struct {
	first, later string
	calls        atomic.Int32
	entered      chan int32    // receives the number of each call as it starts
	release      chan struct{} // closed to let the first call return
	returned     chan struct{} // closed when the first call has returned
}

func newStallingLLM(first, later string) *stallingLLM {
	return &stallingLLM{first: first, later: later, entered: make(chan int32, 8), release: make(chan struct{}), returned: make(chan struct{})}
}

func (l *stallingLLM) Complete(ctx context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	n := l.calls.Add(1)
	l.entered <- n
	if n == 1 {
		defer close(l.returned)
		<-l.release
		return &memcore.CompletionResponse{Text: l.first, Usage: memcore.Usage{InputTokens: 1000, OutputTokens: 1000}}, nil
	}
	return &memcore.CompletionResponse{Text: l.later}, nil
}

// await receives from ch, or fails the test after a generous wait.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// TestStalledClassifierIsAbandoned: a classifier that ignores its context
// holds the capture goroutine no longer than the pass timeout: the pass is
// abandoned and counted, the next pass runs, and the stalled call's late
// reply is never used or written.
func TestStalledClassifierIsAbandoned(t *testing.T) {
	late := reply(mem{"content": "Written from the abandoned call.", "scope": "user", "category": "user-facts"})
	next := reply(mem{"content": "Written by the next pass.", "scope": "user", "category": "user-facts"})
	llm := newStallingLLM(late, next)
	t.Cleanup(func() {
		select {
		case <-llm.release:
		default:
			close(llm.release)
		}
	})
	store := memcore.NewMemStore()
	rebuilt := make(chan struct{}, 4)
	p := startPipeline(t, llm, store, Config{Rebuild: func() { rebuilt <- struct{}{} }, PassTimeout: 200 * time.Millisecond})

	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("first window")})
	await(t, llm.entered, "the first classifier call")
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("second window")})
	// The second call starts only once the first pass has given up.
	if n := await(t, llm.entered, "the second classifier call: the stalled pass was never abandoned"); n != 2 {
		t.Fatalf("call %d, want 2", n)
	}
	await(t, rebuilt, "the second pass's write")
	close(llm.release)
	await(t, llm.returned, "the stalled call to return")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}

	all := listAll(t, store)
	if len(all) != 1 || all[0].Content != "Written by the next pass." {
		t.Errorf("stored %d memories (%v), want only the next pass's", len(all), all)
	}
	s := p.Stats()
	if s.StalledCalls != 1 || s.LLMErrors != 1 || s.MemoriesWritten != 1 || s.Passes != 2 {
		t.Errorf("StalledCalls %d, LLMErrors %d, MemoriesWritten %d, Passes %d; want 1, 1, 1, 2", s.StalledCalls, s.LLMErrors, s.MemoriesWritten, s.Passes)
	}
	if s.TokensUsed != 0 {
		t.Errorf("TokensUsed %d: the abandoned call's usage was counted", s.TokensUsed)
	}
	f := s.LastFailure
	if f.Kind != FailureClassifier || !errors.Is(f.Err, ErrStalled) || !errors.Is(f.Err, context.DeadlineExceeded) || f.At.IsZero() {
		t.Errorf("LastFailure = %+v, want a classifier failure wrapping ErrStalled and context.DeadlineExceeded", f)
	}
}

// stallingEmbedder blocks its first call until released, whatever its
// context says.
type stallingEmbedder struct {
	*fake.Embedder
	calls   atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (e *stallingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.calls.Add(1) == 1 {
		e.entered <- struct{}{}
		<-e.release
	}
	return e.Embedder.Embed(context.Background(), texts)
}

// TestStalledEmbedderIsAbandoned: an embedder that ignores its context, used
// to rank the existing memories, is abandoned at the pass deadline and
// counted; the pipeline carries on with the next pass.
func TestStalledEmbedderIsAbandoned(t *testing.T) {
	store := memcore.NewMemStore()
	seed(t, store, "Uses tabs for indentation.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
	emb := &stallingEmbedder{Embedder: newEmbedder(t, fake.EmbedderConfig{}), entered: make(chan struct{}, 1), release: make(chan struct{})}
	t.Cleanup(func() { close(emb.release) })
	calls := make(chan struct{}, 4)
	llm := newLLM(t, fake.LLMConfig{ReplyFunc: func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		calls <- struct{}{}
		return &memcore.CompletionResponse{Text: nothing}, nil
	}})
	p := startPipeline(t, llm, store, Config{Embedder: emb, PassTimeout: 200 * time.Millisecond})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("first window")})
	await(t, emb.entered, "the first Embed call")
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("second window")})
	await(t, calls, "a classifier call after the stalled Embed was abandoned")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if s := p.Stats(); s.StalledCalls != 1 {
		t.Errorf("StalledCalls = %d, want 1", s.StalledCalls)
	}
}
