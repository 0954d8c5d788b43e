package memretrieve

import (
	"context"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// batchGate is the fake embedder holding every call that embeds memory
// texts (an index build's batch) until the test releases it; queries pass.
type batchGate struct {
	*fake.Embedder
	contents map[string]bool
	entered  chan []string // each held batch, as it starts
	release  chan struct{} // one receive lets one batch through
}

func newBatchGate(t *testing.T, ms []*memcore.MemoryFile) *batchGate {
	g := &batchGate{Embedder: newEmbedder(t), contents: map[string]bool{}, entered: make(chan []string, 16), release: make(chan struct{})}
	for _, m := range ms {
		g.contents[m.Content] = true
	}
	return g
}

func (g *batchGate) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if g.contents[texts[0]] {
		g.entered <- texts
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Embedder.Embed(ctx, texts)
}

// found reports whether res recalls the memory whose content is text.
func found(res *Result, text string) bool {
	for _, r := range res.Memories {
		if r.Memory.Content == text {
			return true
		}
	}
	return false
}

// TestFirstBuildAnswersWithWhatIsEmbedded: while a slow first build runs,
// turns are answered from the memories whose vectors are already there —
// a warm cache at once, a cold one with the batches embedded so far —
// instead of getting nothing until the build ends.
func TestFirstBuildAnswersWithWhatIsEmbedded(t *testing.T) {
	ms := threeMemories()
	extra := []*memcore.MemoryFile{
		mem(testID(4), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 3, "Feature flags are read once at start-up from flags.yaml."),
		mem(testID(5), memcore.ScopeUser, memcore.CategoryUserFacts, 1, 4, "Works in the Europe/Lisbon time zone."),
	}
	cfg := cacheConfig()
	cfg.Timeout = 5 * time.Second
	cfg.HopDepth = 0

	t.Run("warm cache", func(t *testing.T) {
		dir := t.TempDir()
		store := memcore.NewMemStore()
		write(t, store, ms...)
		warmEngine(t, store, newEmbedder(t), withCacheDir(dir)) // caches the three
		write(t, store, extra...)                               // two more, not cached
		gate := newBatchGate(t, append(append([]*memcore.MemoryFile{}, ms...), extra...))
		e := newEngine(t, store, gate, nil, cfg, withCacheDir(dir))
		e.Start(context.Background())
		batch := await(t, gate.entered, "the build's batch of the two new memories")
		if len(batch) != 2 {
			t.Fatalf("the build embeds %d texts, want the 2 not cached", len(batch))
		}
		start := time.Now()
		res, err := e.Retrieve(context.Background(), "t1", userWindow(locking.Content+" Why?"))
		if err != nil || !found(res, locking.Content) {
			t.Fatalf("while the build embeds, a turn got %v (%v, %v); want the cached memory", ids(res), res.Skipped, err)
		}
		if elapsed := time.Since(start); elapsed >= cfg.Timeout {
			t.Errorf("the turn took %v: it waited for the build", elapsed)
		}
		close(gate.release)
		waitForBuild(t, e)
		res, _ = e.Retrieve(context.Background(), "t2", userWindow(extra[0].Content+" Why?"))
		if !found(res, extra[0].Content) {
			t.Errorf("after the build, a turn got %v; want the new memory", ids(res))
		}
	})

	t.Run("cold cache", func(t *testing.T) {
		store := memcore.NewMemStore()
		all := append(append([]*memcore.MemoryFile{}, ms...), extra...)
		write(t, store, all...)
		gate := newBatchGate(t, all)
		e := newEngine(t, store, gate, nil, cfg, withEmbedBatch(1))
		e.Start(context.Background())
		first := await(t, gate.entered, "the first batch")
		gate.release <- struct{}{}
		second := await(t, gate.entered, "the second batch")
		// The first batch is searchable while the second is embedded.
		res, err := e.Retrieve(context.Background(), "t1", userWindow(first[0]+" Why?"))
		if err != nil || !found(res, first[0]) {
			t.Fatalf("after one batch, a turn got %v (%v, %v); want the memory embedded", ids(res), res.Skipped, err)
		}
		gate.release <- struct{}{}
		await(t, gate.entered, "the third batch")
		res, _ = e.Retrieve(context.Background(), "t2", userWindow(second[0]+" Why?"))
		if !found(res, second[0]) {
			t.Errorf("after two batches, a turn got %v; want the second memory", ids(res))
		}
		close(gate.release)
		waitForBuild(t, e)
		if n := e.snap.Load().idx.Len(); n != len(all) {
			t.Errorf("the finished index holds %d memories, want %d", n, len(all))
		}
	})
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

// waitForBuild waits for the engine's first background build to end.
func waitForBuild(t *testing.T, e *Engine) {
	t.Helper()
	await(t, e.ready, "the first build to end")
}

// TestFirstTurnWaitsForVectors: with the lexical index on, a cold first
// build publishes the lexical index of every memory before it embeds
// anything; a turn then waits, within its model calls' deadline, for the
// first batch's vectors rather than answering from the lexical index
// alone. (TestLexicalAnswersWhileTheBuildIsBlocked is the turn that cannot
// wait that long.)
func TestFirstTurnWaitsForVectors(t *testing.T) {
	ms := threeMemories()
	store := memcore.NewMemStore()
	write(t, store, ms...)
	gate := newBatchGate(t, ms)
	cfg := cacheConfig()
	cfg.Timeout = 20 * time.Second
	cfg.HopDepth = 0
	e := newEngine(t, store, gate, nil, cfg, withEmbedBatch(1))
	e.Start(context.Background())
	t.Cleanup(func() {
		close(gate.release)
		waitForBuild(t, e)
	})
	first := await(t, gate.entered, "the first batch")
	if s := e.snap.Load(); s == nil || s.idx.Len() != 0 || s.lex.Len() != len(ms) {
		t.Fatalf("before the first batch, the published snapshot is %+v; want the lexical index of all %d memories, no vectors", s, len(ms))
	}
	done := make(chan *Result, 1)
	go func() {
		res, _ := e.Retrieve(context.Background(), "t1", userWindow(first[0]+" Why?"))
		done <- res
	}()
	select {
	case res := <-done:
		t.Fatalf("the turn answered before the first batch was embedded: %v (VectorSkipped %v)", ids(res), res.VectorSkipped)
	case <-time.After(200 * time.Millisecond):
	}
	gate.release <- struct{}{}
	res := await(t, done, "the turn")
	var id string
	for _, m := range ms {
		if m.Content == first[0] {
			id = m.Meta.ID
		}
	}
	if c, ok := candidate(res, id); !ok || c.VectorRank == 0 || res.VectorSkipped != SkipNone || res.Skipped != SkipNone {
		t.Errorf("ranked %+v, Skipped %v, VectorSkipped %v; want %s found by its vector", res.Ranked, res.Skipped, res.VectorSkipped, id)
	}
}
