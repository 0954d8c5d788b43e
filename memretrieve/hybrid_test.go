package memretrieve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// tableEmbedder gives each text a fixed vector, so a test decides what the
// vector search finds; a text it has no vector for gets fallback. It
// records the texts of every call.
type tableEmbedder struct {
	vecs     map[string][]float32
	fallback []float32

	mu    sync.Mutex
	calls [][]string
}

func (e *tableEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls = append(e.calls, slices.Clone(texts))
	e.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := e.vecs[t]
		if !ok {
			v = e.fallback
		}
		out[i] = slices.Clone(v)
	}
	return out, nil
}

func (e *tableEmbedder) Model() string { return "table" }

// basis returns the unit vector i of dimension 8.
func basis(i int) []float32 {
	v := make([]float32, 8)
	v[i] = 1
	return v
}

// candidate returns the ranked candidate id of res.
func candidate(res *Result, id string) (Candidate, bool) {
	i := slices.IndexFunc(res.Ranked, func(c Candidate) bool { return c.ID == id })
	if i < 0 {
		return Candidate{}, false
	}
	return res.Ranked[i], true
}

// TestFusionFindsWhatEachRankingMisses: a memory only the lexical search
// finds (an identifier the embedding does not catch), one only the vector
// search finds (a paraphrase sharing no word with the query), and one both
// find; the fused ranking holds all three, the one both found first.
func TestFusionFindsWhatEachRankingMisses(t *testing.T) {
	ident := mem(testID(41), memcore.ScopeRepo, memcore.CategoryProjectConventions, 1, 0,
		"Check error types with errors.As, never with a type switch.")
	para := mem(testID(42), memcore.ScopeUser, memcore.CategoryCodingPreferences, 1, 1,
		"Prefers small functions that do one thing.")
	both := mem(testID(43), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 2,
		"Helpers in this repository stay short.")
	filler := mem(testID(44), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 3,
		"Release tags follow semantic versioning.")
	query := "Use errors.As here, and keep each helper short and focused."
	emb := &tableEmbedder{
		vecs: map[string][]float32{
			ident.Content:  basis(0),
			para.Content:   basis(1),
			both.Content:   basis(2),
			filler.Content: basis(3),
			// Close to the paraphrase and the helper note, away from the
			// identifier note and the filler.
			query: {-0.5, 0.6, 0.5, -0.3, 0, 0, 0, 0},
		},
		fallback: basis(7),
	}
	store := memcore.NewMemStore()
	write(t, store, ident, para, both, filler)

	tests := []struct {
		name      string
		lexWeight float64
		want      []string // the memories, in order
		found     map[string]Found
	}{
		{"vector only", 0, []string{para.Meta.ID, both.Meta.ID},
			map[string]Found{para.Meta.ID: FoundVector, both.Meta.ID: FoundVector}},
		{"fused", 1, []string{both.Meta.ID, para.Meta.ID, ident.Meta.ID},
			map[string]Found{both.Meta.ID: FoundBoth, para.Meta.ID: FoundVector, ident.Meta.ID: FoundLexical}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := identityConfig()
			cfg.LexicalWeight, cfg.HopDepth = tt.lexWeight, 0
			e := newEngine(t, store, emb, nil, cfg)
			rebuild(t, e)
			res, err := e.Retrieve(context.Background(), "", userWindow(query))
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(res); !slices.Equal(got, tt.want) {
				t.Fatalf("memories = %v, want %v (ranked %+v)", got, tt.want, res.Ranked)
			}
			if len(res.Ranked) != len(tt.want) {
				t.Errorf("ranked %+v, want %d candidates", res.Ranked, len(tt.want))
			}
			for id, f := range tt.found {
				c, ok := candidate(res, id)
				if !ok || c.Found() != f {
					t.Errorf("%s: candidate %+v, want found by %v", id, c, f)
				}
			}
			if res.VectorSkipped != SkipNone || res.Err != nil {
				t.Errorf("VectorSkipped = %v (%v), want SkipNone", res.VectorSkipped, res.Err)
			}
		})
	}
}

// TestFusedScores checks reciprocal-rank fusion by hand: k = FusionK, the
// vector ranking weighs 1 and the lexical one LexicalWeight, and the sum is
// divided by the most a memory can get.
func TestFusedScores(t *testing.T) {
	store := memcore.NewMemStore()
	a := mem(testID(51), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 0, "alpha bravo charlie")
	b := mem(testID(52), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 1, "delta echo foxtrot")
	c := mem(testID(53), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 2, "golf hotel india")
	write(t, store, a, b, c)
	query := "bravo delta delta golf"
	emb := &tableEmbedder{vecs: map[string][]float32{
		a.Content: basis(0), b.Content: basis(1), c.Content: basis(2),
		query: {0.8, 0.5, 0.2, 0, 0, 0, 0, 0}, // vector ranking a, b, c
	}}
	for _, tt := range []struct {
		w float64
		k int
	}{{1, 60}, {0.5, 10}, {4, 1}} {
		cfg := ungated(identityConfig())
		cfg.LexicalWeight, cfg.FusionK, cfg.HopDepth = tt.w, tt.k, 0
		e := newEngine(t, store, emb, nil, cfg)
		rebuild(t, e)
		res, err := e.Retrieve(context.Background(), "", userWindow(query))
		if err != nil {
			t.Fatal(err)
		}
		k := float64(tt.k)
		norm := (1 + tt.w) / (k + 1)
		for _, cand := range res.Ranked {
			var want float64
			if cand.VectorRank > 0 {
				want += 1 / (k + float64(cand.VectorRank))
			}
			if cand.LexicalRank > 0 {
				want += tt.w / (k + float64(cand.LexicalRank))
			}
			want /= norm
			if diff := cand.Score - want; diff > 1e-12 || diff < -1e-12 {
				t.Errorf("w=%v k=%d: %s scores %v, want %v", tt.w, tt.k, cand.ID, cand.Score, want)
			}
		}
		if len(res.Ranked) != 3 || res.Ranked[0].VectorRank == 0 || res.Ranked[0].LexicalRank == 0 {
			t.Fatalf("w=%v k=%d: ranked %+v, want three candidates, the first found by both", tt.w, tt.k, res.Ranked)
		}
		if !slices.IsSortedFunc(res.Ranked, func(x, y Candidate) int { return byScore(x.Score, y.Score, x.ID, y.ID) }) {
			t.Errorf("ranked %+v not ordered by score", res.Ranked)
		}
	}
}

// TestRankedIsBeforeTheBudget: Ranked lists every candidate even when the
// injection budget shows only some.
func TestRankedIsBeforeTheBudget(t *testing.T) {
	store := memcore.NewMemStore()
	ms := genMemories(40, 5)
	write(t, store, ms...)
	cfg := identityConfig()
	cfg.InjectionTokenBudget, cfg.HopDepth = 200, 0
	e := newEngine(t, store, newEmbedder(t), nil, cfg)
	rebuild(t, e)
	res, err := e.Retrieve(context.Background(), "", userWindow(ms[3].Content+" "+ms[7].Content))
	if err != nil {
		t.Fatal(err)
	}
	if res.Omitted == 0 || len(res.Ranked) <= len(res.Memories) {
		t.Fatalf("%d memories, %d omitted, %d ranked; want the budget to cut and Ranked to hold them all",
			len(res.Memories), res.Omitted, len(res.Ranked))
	}
	for i, r := range res.Memories {
		if res.Ranked[i].ID != r.Memory.Meta.ID || res.Ranked[i].Score != r.Score {
			t.Errorf("memory %d is %s (%v), ranked %+v: the shown memories are the ranking's first", i, r.Memory.Meta.ID, r.Score, res.Ranked[i])
		}
	}
}

// TestLexicalIndexInStep: after every change of the store and a rebuild,
// the lexical index holds exactly the memories the vector index holds —
// heads and superseded versions of live chains — and its hits are credited
// to heads; retired and deleted memories are gone from both.
func TestLexicalIndexInStep(t *testing.T) {
	store := newFileStore(t)
	a := mem(testID(61), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 0, "Kestrel builds run nightly.")
	b := mem(testID(62), memcore.ScopeUser, memcore.CategoryCodingPreferences, 1, 1, "Prefers tabs in Makefiles.")
	write(t, store, a, b)
	c := mem(testID(63), memcore.ScopeRepo, memcore.CategoryProjectConventions, 1, 2, "Quartzite fixtures live in testdata.")
	b2 := supersede(mem(testID(64), memcore.ScopeUser, memcore.CategoryCodingPreferences, 2, 3, "Prefers obsidian tabs in Makefiles and scripts."), b)
	a2 := supersede(mem(testID(65), memcore.ScopeRepo, memcore.CategoryPatterns, 2, 4, a.Content), a)
	a2.Meta.Retired, a2.Meta.RetiredReason = true, "no nightly builds any more"

	e := newEngine(t, store, newEmbedder(t), nil, identityConfig())
	steps := []struct {
		name    string
		change  func(t *testing.T)
		indexed []string
		// queries maps a query to the head it must find lexically and the
		// version it matched ("" when it must find nothing).
		queries map[string][2]string
	}{
		{"initial", func(*testing.T) {}, []string{a.Meta.ID, b.Meta.ID},
			map[string][2]string{"kestrel": {a.Meta.ID, a.Meta.ID}, "quartzite": {}}},
		{"new memory", func(t *testing.T) { write(t, store, c) }, []string{a.Meta.ID, b.Meta.ID, c.Meta.ID},
			map[string][2]string{"quartzite": {c.Meta.ID, c.Meta.ID}}},
		{"superseded", func(t *testing.T) { write(t, store, b2) }, []string{a.Meta.ID, b.Meta.ID, c.Meta.ID, b2.Meta.ID},
			map[string][2]string{"obsidian": {b2.Meta.ID, b2.Meta.ID}, "makefiles": {b2.Meta.ID, b2.Meta.ID}}},
		{"retired", func(t *testing.T) { write(t, store, a2) }, []string{b.Meta.ID, c.Meta.ID, b2.Meta.ID},
			map[string][2]string{"kestrel": {}, "nightly": {}}},
		{"deleted", func(t *testing.T) {
			if err := os.Remove(filepath.Join(store.Dir(memcore.ScopeRepo), c.Meta.ID+".md")); err != nil {
				t.Fatal(err)
			}
		}, []string{b.Meta.ID, b2.Meta.ID},
			map[string][2]string{"quartzite": {}, "obsidian": {b2.Meta.ID, b2.Meta.ID}}},
	}
	for _, st := range steps {
		st.change(t)
		rebuild(t, e)
		snap := e.snap.Load()
		lexIDs, vecIDs := slices.Sorted(slices.Values(snap.lex.IDs)), slices.Sorted(slices.Values(snap.idx.IDs))
		want := slices.Sorted(slices.Values(st.indexed))
		if !slices.Equal(lexIDs, want) || !slices.Equal(vecIDs, want) {
			t.Errorf("%s: lexical index %v, vector index %v; want both %v", st.name, lexIDs, vecIDs, want)
		}
		if n := len(e.lexDocs); n != len(st.indexed) {
			t.Errorf("%s: %d tokenised texts kept, want %d (one per indexed content)", st.name, n, len(st.indexed))
		}
		for q, w := range st.queries {
			res, err := e.Retrieve(context.Background(), "", userWindow(q))
			if err != nil {
				t.Fatal(err)
			}
			var lexical []Candidate
			for _, c := range res.Ranked {
				if c.LexicalRank > 0 {
					lexical = append(lexical, c)
				}
			}
			switch {
			case w[0] == "" && len(lexical) > 0:
				t.Errorf("%s: %q found %+v lexically, want nothing", st.name, q, lexical)
			case w[0] != "" && (len(lexical) != 1 || lexical[0].ID != w[0]):
				t.Errorf("%s: %q found %+v lexically, want only %s", st.name, q, lexical, w[0])
			}
		}
	}
	// A hit on an old version's words is credited to the head.
	res, err := e.Retrieve(context.Background(), "", userWindow("Prefers tabs"))
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := candidate(res, b2.Meta.ID); !ok || c.LexicalRank != 1 {
		t.Errorf("a query of the old version's words: ranked %+v, want the head %s first lexically", res.Ranked, b2.Meta.ID)
	}
	if _, ok := candidate(res, b.Meta.ID); ok {
		t.Errorf("ranked %+v lists the superseded version %s", res.Ranked, b.Meta.ID)
	}
}

// TestLexicalAnswersWhileTheBuildIsBlocked: the first build is held in the
// embedder. The first turn waits for it within its budget and, when the
// budget runs short, answers from the lexical index, saying that no memory
// has a vector yet; the next turn does not wait; once the build is done
// the vector ranking joins in.
func TestLexicalAnswersWhileTheBuildIsBlocked(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := &gatedEmbedder{Embedder: newEmbedder(t), gate: make(chan struct{})}
	cfg := identityConfig()
	cfg.Timeout = 300 * time.Millisecond
	e := newEngine(t, store, emb, nil, cfg)
	e.Start(context.Background())

	for _, turn := range []string{"t1", "t2"} {
		res, err := e.Retrieve(context.Background(), turn, userWindow("Should concurrent writes lock optimistically?"))
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(res); len(got) == 0 || got[0] != locking.Meta.ID {
			t.Fatalf("%s, during the build: memories %v, want %s first from the lexical index", turn, got, locking.Meta.ID)
		}
		if !noVectorHits(res) || res.VectorSkipped != SkipNoIndex || res.Skipped != SkipNone {
			t.Errorf("%s, during the build: Skipped %v, VectorSkipped %v, ranked %+v; want a turn that ran without vector hits, for want of vectors", turn, res.Skipped, res.VectorSkipped, res.Ranked)
		}
		if !e.stopWaiting.Load() {
			t.Errorf("%s: after a turn ran out of time waiting, later turns still wait for the first build", turn)
		}
	}
	close(emb.gate)
	rebuild(t, e) // waits for the background build, then finds nothing new
	res, err := e.Retrieve(context.Background(), "t1", userWindow("Should concurrent writes lock optimistically?"))
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := candidate(res, locking.Meta.ID); !ok || c.Found() != FoundBoth || res.VectorSkipped != SkipNone {
		t.Errorf("after the build: ranked %+v, VectorSkipped %v; want %s found by both rankings", res.Ranked, res.VectorSkipped, locking.Meta.ID)
	}
}

// TestLexicalAnswersWhenTheEmbedderIsDown: the embedder fails every call,
// for the build and for the turn's queries; the turn is answered from the
// lexical index and says why the vector side is missing.
func TestLexicalAnswersWhenTheEmbedderIsDown(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := newEmbedder(t)
	failNext(t, emb, 1000, memcore.ErrUnauthenticated)
	e := newEngine(t, store, emb, nil, identityConfig())
	if err := e.Rebuild(context.Background()); !errors.Is(err, memcore.ErrUnauthenticated) {
		t.Fatalf("Rebuild = %v, want the embedder's error", err)
	}
	res, err := e.Retrieve(context.Background(), "", userWindow("Where do the database migrations live?"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res); len(got) == 0 || got[0] != migrations.Meta.ID {
		t.Fatalf("memories %v, want %s first from the lexical index", got, migrations.Meta.ID)
	}
	if !noVectorHits(res) || res.VectorSkipped != SkipEmbedderError || !errors.Is(res.Err, memcore.ErrUnauthenticated) || res.Skipped != SkipNone {
		t.Errorf("Skipped %v, VectorSkipped %v (%v), ranked %+v; want a turn that ran without vector hits, for the embedder's failure", res.Skipped, res.VectorSkipped, res.Err, res.Ranked)
	}
}

func TestFocusedQueries(t *testing.T) {
	u := func(s string) memcore.Message { return memcore.Message{Role: memcore.RoleUser, Content: s} }
	a := func(s string) memcore.Message { return memcore.Message{Role: memcore.RoleAssistant, Content: s} }
	long := strings.Repeat("old topic words ", 100) + "end of it"
	tests := []struct {
		name  string
		win   []memcore.Message
		limit int
		want  []string
	}{
		{"one message", []memcore.Message{u("hello")}, 512, []string{"hello"}},
		{"exchange", []memcore.Message{u("q1"), a("a1"), u("q2")}, 512, []string{"q2", "a1\n\nq2", "q1\n\na1\n\nq2"}},
		{"two messages", []memcore.Message{a("a1"), u("q2")}, 512, []string{"q2", "a1\n\nq2"}},
		{"ends with the assistant", []memcore.Message{u("q1"), a("a1"), u("q2"), a("a2")}, 512,
			[]string{"q2", "a1\n\nq2\n\na2", "q1\n\na1\n\nq2\n\na2"}},
		{"no user message", []memcore.Message{a("a1"), a("a2")}, 512, []string{"a2", "a1\n\na2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := focusedQueries(tt.win, tt.limit)
			if !slices.Equal(got, tt.want) {
				t.Errorf("focusedQueries = %q, want %q", got, tt.want)
			}
		})
	}
	// A latest message over the limit is cut, its end kept.
	got := focusedQueries([]memcore.Message{u(long)}, 10)
	if len(got) != 1 || !strings.HasSuffix(got[0], "end of it") || memcore.EstimateTokens(got[0]) > 10 || len(got[0]) < 20 {
		t.Errorf("focusedQueries of one long message = %q, want its end within 10 tokens", got)
	}
}

// TestIdentityQueriesFitTheLimit: every text an identity turn embeds fits
// in QueryTokenLimit, and the latest message is one of them, so a long
// earlier topic does not drown it.
func TestIdentityQueriesFitTheLimit(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := &tableEmbedder{vecs: map[string][]float32{}, fallback: basis(0)}
	cfg := identityConfig()
	cfg.QueryTokenLimit = 64
	e := newEngine(t, store, emb, nil, cfg)
	rebuild(t, e)
	var win []memcore.Message
	for range 20 {
		win = append(win, memcore.Message{Role: memcore.RoleUser, Content: logging.Content + " " + strings.Repeat("and more about logs ", 10)},
			memcore.Message{Role: memcore.RoleAssistant, Content: "Noted."})
	}
	last := "Now: where do the migrations go?"
	win = append(win, memcore.Message{Role: memcore.RoleUser, Content: last})
	emb.calls = nil
	if _, err := e.Retrieve(context.Background(), "", win); err != nil {
		t.Fatal(err)
	}
	if len(emb.calls) != 1 {
		t.Fatalf("%d Embed calls, want 1", len(emb.calls))
	}
	texts := emb.calls[0]
	if len(texts) != 3 || texts[0] != last {
		t.Fatalf("queries %q, want three, the latest message first", texts)
	}
	for _, q := range texts {
		if n := memcore.EstimateTokens(q); n > cfg.QueryTokenLimit {
			t.Errorf("query of %d tokens, want at most %d: %q", n, cfg.QueryTokenLimit, q)
		}
	}
}

// TestLexicalSearchesTheHypotheses: in LLM mode the lexical search takes
// the hypotheses' words too, so a turn whose embedder fails still finds a
// memory only a hypothesis names.
func TestLexicalSearchesTheHypotheses(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := newEmbedder(t)
	llm := hypothesisLLM(t, "Database migrations are numbered sequentially.")
	// The gate weighs the words of the conversation, not the hypotheses':
	// this test is of the lexical search.
	e := newEngine(t, store, emb, llm, ungated(DefaultConfig()))
	rebuild(t, e)
	failNext(t, emb, 1, memcore.ErrUnavailable)
	res, err := e.Retrieve(context.Background(), "", userWindow("What comes next for the schema change?"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res); len(got) == 0 || got[0] != migrations.Meta.ID || !noVectorHits(res) {
		t.Errorf("memories %v (ranked %+v, VectorSkipped %v), want %s found by the hypothesis' words", got, res.Ranked, res.VectorSkipped, migrations.Meta.ID)
	}
}
