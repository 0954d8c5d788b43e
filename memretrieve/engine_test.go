package memretrieve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// Three memories on unrelated subjects.
var (
	locking = mem(testID(1), memcore.ScopeUser, memcore.CategoryCodingPreferences, 1, 0,
		"Prefers optimistic locking with retry for concurrent writes.")
	migrations = mem(testID(2), memcore.ScopeRepo, memcore.CategoryProjectConventions, 1, 1,
		"Database migrations live in db/migrations and are numbered sequentially.")
	logging = mem(testID(3), memcore.ScopeRepo, memcore.CategoryCorrections, 1, 2,
		"Uses zerolog for structured logging in library code, never fmt.Println.")
)

func threeMemories() []*memcore.MemoryFile {
	return []*memcore.MemoryFile{locking.Clone(), migrations.Clone(), logging.Clone()}
}

func TestRetrieveFindsRelevantMemory(t *testing.T) {
	storeKinds(t, func(t *testing.T, newStore func(t *testing.T) memcore.MemoryStore) {
		store := newStore(t)
		write(t, store, threeMemories()...)
		emb := newEmbedder(t)
		llm := newLLM(t, fake.LLMConfig{Replies: []string{"```json\n" + hypothesesReply(
			"Prefers optimistic locking for concurrent writes.",
			"Retries concurrent writes after a conflict.") + "\n```"}})
		cfg := DefaultConfig()
		cfg.HopDepth = 0
		cfg.MinScore = 0.3
		e := newEngine(t, store, emb, llm, cfg)
		rebuild(t, e)
		res, err := e.Retrieve(context.Background(), "t1", userWindow("Two requests update the same user row at once; how should I handle that?"))
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(res); len(got) != 1 || got[0] != locking.Meta.ID {
			t.Fatalf("memories = %v, want only the locking memory %s", got, locking.Meta.ID)
		}
		if !strings.Contains(res.Injection, locking.Content) || !strings.HasPrefix(res.Injection, "<recalled_memories>") {
			t.Errorf("injection does not present the memory:\n%s", res.Injection)
		}
	})
}

func TestUnionKeepsBestScorePerMemory(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := newEmbedder(t)
	h := []string{
		"Prefers optimistic locking with retry.",
		"Optimistic locking with retry for concurrent writes.",
		"Database migrations are numbered.",
	}
	llm := newLLM(t, fake.LLMConfig{Replies: []string{hypothesesReply(h...)}})
	cfg := ungated(vectorOnly(DefaultConfig()))
	cfg.HopDepth, cfg.MinScore = 0, -1
	e := newEngine(t, store, emb, llm, cfg)
	rebuild(t, e)
	res, err := e.Retrieve(context.Background(), "t", userWindow("locking?"))
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[string]bool)
	for _, r := range res.Memories {
		if seen[r.Memory.Meta.ID] {
			t.Fatalf("memory %s listed twice", r.Memory.Meta.ID)
		}
		seen[r.Memory.Meta.ID] = true
		want := math.Inf(-1)
		for _, q := range h {
			want = math.Max(want, cosine(t, emb, q, r.Memory.Content))
		}
		if math.Abs(r.Score-want) > 1e-5 {
			t.Errorf("%s: score %.6f, want the best over the hypotheses %.6f", r.Memory.Meta.ID, r.Score, want)
		}
		if !r.Via.Search() || r.Via.Matched != r.Memory.Meta.ID {
			t.Errorf("%s: via = %+v, want a search hit on itself", r.Memory.Meta.ID, r.Via)
		}
	}
	if len(seen) != 3 {
		t.Errorf("got %d memories, want all 3 with MinScore -1", len(seen))
	}
	if !slices.IsSortedFunc(res.Memories, func(a, b Recalled) int { return compareRecalled(&a, &b) }) {
		t.Errorf("memories not ordered by score")
	}
}

func TestMinScoreDropsWeakHits(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := newEmbedder(t)
	q := "Prefers optimistic locking with retry for concurrent writes."
	cfg := ungated(identityConfig())
	cfg.HopDepth = 0
	for _, tt := range []struct {
		min  float64
		want int
	}{{-1, 3}, {0.99, 1}} {
		cfg.MinScore = tt.min
		e := newEngine(t, store, emb, nil, cfg)
		rebuild(t, e)
		res, _ := e.Retrieve(context.Background(), "", userWindow(q))
		if len(res.Memories) != tt.want {
			t.Errorf("MinScore %v: %d memories, want %d", tt.min, len(res.Memories), tt.want)
		}
		for _, r := range res.Memories {
			if r.Score < tt.min {
				t.Errorf("MinScore %v: kept %s with score %v", tt.min, r.Memory.Meta.ID, r.Score)
			}
		}
	}
}

func TestIdentityModeMakesNoLLMCall(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := newEmbedder(t)
	llm := newLLM(t, fake.LLMConfig{Replies: []string{hypothesesReply("x")}})
	e := newEngine(t, store, emb, llm, identityConfig())
	rebuild(t, e)
	before := emb.Inputs()
	res, err := e.Retrieve(context.Background(), "t", []memcore.Message{
		{Role: memcore.RoleUser, Content: "Which logging library do we use in library code?"},
		{Role: memcore.RoleTool, Content: "database migrations numbered"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if llm.Calls() != 0 {
		t.Errorf("identity mode called the LLM %d times", llm.Calls())
	}
	if got := emb.Inputs() - before; got != 1 {
		t.Errorf("identity mode embedded %d texts, want the one window text", got)
	}
	if len(res.Memories) == 0 || res.Memories[0].Memory.Meta.ID != logging.Meta.ID {
		t.Errorf("memories = %v, want the logging memory first", ids(res))
	}
}

func TestOneEmbedCallPerTurn(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := newEmbedder(t)
	hs := []string{"a locking note.", "a migration note.", "a logging note.", "a retry note.", "a schema note.", "one too many."}
	llm := newLLM(t, fake.LLMConfig{Replies: []string{hypothesesReply(hs...)}})
	cfg := DefaultConfig()
	cfg.HypothesisCount = 5
	e := newEngine(t, store, emb, llm, cfg)
	rebuild(t, e)
	calls, inputs := emb.Calls(), emb.Inputs()
	if _, err := e.Retrieve(context.Background(), "t", userWindow("hello")); err != nil {
		t.Fatal(err)
	}
	if got := emb.Calls() - calls; got != 1 {
		t.Errorf("%d Embed calls in one turn, want 1", got)
	}
	if got := emb.Inputs() - inputs; got != 5 {
		t.Errorf("%d texts embedded, want the 5 hypotheses asked for (the sixth dropped)", got)
	}
	if llm.Calls() != 1 {
		t.Errorf("%d LLM calls, want 1", llm.Calls())
	}
}

func TestHypothesisRequest(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	llm := newLLM(t, fake.LLMConfig{Replies: []string{hypothesesReply("x y z.")}})
	cfg := DefaultConfig()
	cfg.HypothesisModel = "flash-mini"
	cfg.HypothesisCount = 7
	cfg.WindowTokenBudget = 60
	e := newEngine(t, store, newEmbedder(t), llm, cfg)
	rebuild(t, e)
	window := []memcore.Message{
		{Role: memcore.RoleUser, Content: "OLDEST " + strings.Repeat("filler ", 200)},
		{Role: memcore.RoleAssistant, Content: "Let me look. <tool_call>rm -rf SECRET</tool_call> Done."},
		{Role: memcore.RoleTool, Content: "TOOLOUTPUT"},
		{Role: memcore.RoleUser, Content: "NEWEST please use the usual locking"},
	}
	if _, err := e.Retrieve(context.Background(), "t", window); err != nil {
		t.Fatal(err)
	}
	reqs := llm.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Model != "flash-mini" {
		t.Errorf("model = %q, want the configured hypothesis model", r.Model)
	}
	if r.ResponseSchema == nil || !strings.Contains(string(r.ResponseSchema.Definition), `"hypotheses"`) {
		t.Fatalf("no response schema asking for hypotheses: %+v", r.ResponseSchema)
	}
	if r.ResponseSchema.Name != HypothesisSchemaName || HypothesisSchemaName != "memory_hypotheses" {
		t.Errorf("schema name = %q, HypothesisSchemaName = %q; want both the stable %q",
			r.ResponseSchema.Name, HypothesisSchemaName, "memory_hypotheses")
	}
	if !strings.Contains(r.System, "7 different sentences") {
		t.Errorf("system prompt does not ask for 7 sentences:\n%s", r.System)
	}
	text := r.Messages[len(r.Messages)-1].Content
	for _, banned := range []string{"SECRET", "TOOLOUTPUT", "OLDEST"} {
		if strings.Contains(text, banned) {
			t.Errorf("request contains %q (tool content, or text beyond the window budget):\n%s", banned, text)
		}
	}
	if !strings.Contains(text, "NEWEST please use the usual locking") {
		t.Errorf("request lacks the newest message:\n%s", text)
	}
	if got := memcore.EstimateTokens(text); got > cfg.WindowTokenBudget+20 {
		t.Errorf("transcript of %d tokens for a window budget of %d", got, cfg.WindowTokenBudget)
	}
}

func TestEmptyWindowMakesNoCalls(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := newEmbedder(t)
	llm := newLLM(t, fake.LLMConfig{Replies: []string{hypothesesReply("x.")}})
	e := newEngine(t, store, emb, llm, DefaultConfig())
	rebuild(t, e)
	calls := emb.Calls()
	for _, w := range [][]memcore.Message{nil, {}, {{Role: memcore.RoleTool, Content: "output"}}, {{Role: memcore.RoleUser, Content: "<tool_result>x</tool_result>"}}} {
		res, err := e.Retrieve(context.Background(), "", w)
		if err != nil || res == nil || len(res.Memories) != 0 || res.Injection != "" {
			t.Errorf("window %v: result %+v, err %v; want an empty result", w, res, err)
		}
	}
	if llm.Calls() != 0 || emb.Calls() != calls {
		t.Errorf("empty windows made %d LLM and %d Embed calls", llm.Calls(), emb.Calls()-calls)
	}
}

func TestProviderFailuresGiveEmptyResult(t *testing.T) {
	tests := []struct {
		name  string
		llm   func(testing.TB) *fake.LLM
		embed func(testing.TB, *fake.Embedder)
		kind  SkipReason // Result.Skipped, or with the lexical index on Result.VectorSkipped
		cause error      // in Result.Err
	}{
		{"llm rate limited", func(t testing.TB) *fake.LLM {
			return newLLM(t, fake.LLMConfig{FailNext: 1, FailWith: memcore.ErrRateLimited})
		}, nil,
			SkipHypothesisError, memcore.ErrRateLimited},
		{"llm unauthenticated", func(t testing.TB) *fake.LLM {
			return newLLM(t, fake.LLMConfig{FailNext: 1, FailWith: memcore.ErrUnauthenticated})
		}, nil,
			SkipHypothesisError, memcore.ErrUnauthenticated},
		{"llm empty reply", func(t testing.TB) *fake.LLM { return newLLM(t, fake.LLMConfig{Replies: []string{""}}) }, nil,
			SkipHypothesisError, memcore.ErrInvalidResponse},
		{"llm empty list", func(t testing.TB) *fake.LLM {
			return newLLM(t, fake.LLMConfig{Replies: []string{`{"hypotheses": []}`}})
		}, nil,
			SkipHypothesisError, memcore.ErrInvalidResponse},
		{"llm nil response", func(t testing.TB) *fake.LLM {
			return newLLM(t, fake.LLMConfig{ReplyFunc: func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
				return nil, nil
			}})
		}, nil, SkipHypothesisError, memcore.ErrInvalidResponse},
		{"embedder unavailable", func(t testing.TB) *fake.LLM {
			return newLLM(t, fake.LLMConfig{Replies: []string{hypothesesReply("Prefers optimistic locking.")}})
		},
			func(t testing.TB, e *fake.Embedder) { failNext(t, e, 1, memcore.ErrUnavailable) },
			SkipEmbedderError, memcore.ErrUnavailable},
	}
	for _, tt := range tests {
		for _, lexical := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/lexical=%v", tt.name, lexical), func(t *testing.T) {
				store := memcore.NewMemStore()
				write(t, store, threeMemories()...)
				emb := newEmbedder(t)
				var logs logBuffer
				cfg := DefaultConfig()
				if !lexical {
					cfg = vectorOnly(cfg)
				}
				e := newEngine(t, store, emb, tt.llm(t), cfg, withLogger(logs.logger()))
				rebuild(t, e)
				if tt.embed != nil {
					tt.embed(t, emb)
				}
				res, err := e.Retrieve(context.Background(), "t", userWindow("how do we lock rows?"))
				if err != nil {
					t.Fatalf("err = %v, want nil: failures are not the caller's problem", err)
				}
				if !errors.Is(res.Err, tt.cause) {
					t.Errorf("Err = %v, want %v", res.Err, tt.cause)
				}
				if !lexical {
					if res == nil || len(res.Memories) != 0 || res.Injection != "" {
						t.Fatalf("result = %+v, want empty", res)
					}
					if res.Skipped != tt.kind || res.VectorSkipped != SkipNone {
						t.Errorf("Skipped = %v, VectorSkipped = %v; want %v and none", res.Skipped, res.VectorSkipped, tt.kind)
					}
					if !containsAny(logs.lines("debug"), "no memories for this turn") {
						t.Errorf("the reason was not logged at debug level")
					}
					return
				}
				// The lexical index needs no model: the turn still recalls
				// the memory that shares its words, and says why the vector
				// search is missing.
				if got := ids(res); len(got) != 1 || got[0] != locking.Meta.ID {
					t.Fatalf("memories = %v, want the lexical match %s", got, locking.Meta.ID)
				}
				if !noVectorHits(res) || res.VectorSkipped != tt.kind || res.Skipped != SkipNone {
					t.Errorf("Skipped = %v, VectorSkipped = %v, ranked %+v; want a turn that ran without vector hits, for %v", res.Skipped, res.VectorSkipped, res.Ranked, tt.kind)
				}
				if !containsAny(logs.lines("debug"), "lexical ranking only") {
					t.Errorf("the lexical-only turn was not logged at debug level")
				}
			})
		}
	}
}

func TestHangingProvidersAreBoundedByTimeout(t *testing.T) {
	const timeout = 150 * time.Millisecond
	// The providers hang for good: a Retrieve that the timeout did not
	// bound would never return. The margin is for a loaded machine.
	const margin = 10 * time.Second
	tests := []struct {
		name string
		mode HypothesisMode
		llm  func(t *testing.T) memcore.LLMProvider
		emb  func(t *testing.T) memcore.Embedder
	}{
		{"llm honouring ctx", ModeLLM,
			func(t *testing.T) memcore.LLMProvider { return newLLM(t, fake.LLMConfig{Latency: time.Hour}) }, nil},
		{"llm ignoring ctx", ModeLLM, func(t *testing.T) memcore.LLMProvider {
			l := &blockingLLM{release: make(chan struct{})}
			t.Cleanup(func() { close(l.release) })
			return l
		}, nil},
		{"embedder ignoring ctx", ModeIdentity, nil, func(t *testing.T) memcore.Embedder {
			b := &blockingEmbedder{Embedder: newEmbedder(t), release: make(chan struct{})}
			t.Cleanup(func() { close(b.release) })
			return b
		}},
	}
	for _, tt := range tests {
		for _, lexical := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/lexical=%v", tt.name, lexical), func(t *testing.T) {
				store := memcore.NewMemStore()
				write(t, store, threeMemories()...)
				cfg := DefaultConfig()
				if !lexical {
					cfg = vectorOnly(cfg)
				}
				cfg.Mode = tt.mode
				cfg.Timeout = timeout
				var llm memcore.LLMProvider
				if tt.llm != nil {
					llm = tt.llm(t)
				}
				var emb memcore.Embedder = newEmbedder(t)
				e := newEngine(t, store, emb, llm, cfg)
				rebuild(t, e) // with a working embedder
				if tt.emb != nil {
					e.embedder = tt.emb(t) // now the query embedding hangs
				}
				start := time.Now()
				res, err := e.Retrieve(context.Background(), "t", userWindow("Prefers optimistic locking"))
				elapsed := time.Since(start)
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				earliest := timeout
				if lexical {
					// The model calls stop a tenth of the budget early, and
					// the turn answers from the lexical index.
					earliest = timeout - timeout/10
					if got := ids(res); len(got) != 1 || got[0] != locking.Meta.ID || !noVectorHits(res) {
						t.Errorf("memories = %v (ranked %+v), want the lexical match %s alone", got, res.Ranked, locking.Meta.ID)
					}
					if res.Skipped != SkipNone || res.VectorSkipped != SkipTimeout || !errors.Is(res.Err, context.DeadlineExceeded) {
						t.Errorf("Skipped = %v, VectorSkipped = %v (%v); want a turn that ran, its vector side timed out", res.Skipped, res.VectorSkipped, res.Err)
					}
				} else {
					if len(res.Memories) != 0 || res.Injection != "" {
						t.Errorf("result = %+v, want no memories", res)
					}
					if res.Skipped != SkipTimeout || !errors.Is(res.Err, context.DeadlineExceeded) {
						t.Errorf("Skipped = %v (%v), want a timeout", res.Skipped, res.Err)
					}
				}
				if elapsed < earliest || elapsed > timeout+margin {
					t.Errorf("Retrieve took %v, want about the %v timeout (at least %v, at most %v more)", elapsed, timeout, earliest, margin)
				}
			})
		}
	}
}

func TestCallerCancellation(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	llm := newLLM(t, fake.LLMConfig{Latency: time.Hour})
	e := newEngine(t, store, newEmbedder(t), llm, vectorOnly(DefaultConfig()))
	rebuild(t, e)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := e.Retrieve(ctx, "t", userWindow("x"))
	if !errors.Is(err, context.Canceled) || res == nil || len(res.Memories) != 0 {
		t.Fatalf("cancelled ctx: res %+v, err %v; want an empty result and context.Canceled", res, err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err = e.Retrieve(ctx, "t", userWindow("x"))
	if !errors.Is(err, context.DeadlineExceeded) || res == nil {
		t.Fatalf("caller deadline: res %+v, err %v; want context.DeadlineExceeded", res, err)
	}
	// The abandoned turn is not cached: the next call tries again.
	e.llm = newLLM(t, fake.LLMConfig{Replies: []string{hypothesesReply("Prefers optimistic locking with retry.")}})
	res, err = e.Retrieve(context.Background(), "t", userWindow("x"))
	if err != nil || len(res.Memories) == 0 {
		t.Fatalf("retry after cancellation: res %+v, err %v; want memories", res, err)
	}
}

func TestSupersededHitCreditedToHead(t *testing.T) {
	storeKinds(t, func(t *testing.T, newStore func(t *testing.T) memcore.MemoryStore) {
		v1 := mem(testID(11), memcore.ScopeUser, memcore.CategoryCodingPreferences, 1, 0, "Prefers pessimistic locking for concurrent writes.")
		v2 := supersede(mem(testID(12), memcore.ScopeUser, memcore.CategoryCodingPreferences, 2, 10, "Prefers optimistic locking, but pessimistic locks for payments."), v1)
		v3 := supersede(mem(testID(13), memcore.ScopeUser, memcore.CategoryCodingPreferences, 3, 20, "Prefers optimistic locking with retry everywhere."), v2)
		store := newStore(t)
		write(t, store, v1, v2, v3, migrations.Clone())
		cfg := identityConfig()
		cfg.HopDepth = 0
		cfg.MinScore = 0.5
		e := newEngine(t, store, newEmbedder(t), nil, cfg)
		rebuild(t, e)
		res, err := e.Retrieve(context.Background(), "t", userWindow(v1.Content))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) != 1 {
			t.Fatalf("memories = %v, want only the head %s", ids(res), v3.Meta.ID)
		}
		r := res.Memories[0]
		if r.Memory.Meta.ID != v3.Meta.ID {
			t.Fatalf("shown %s, want the head %s", r.Memory.Meta.ID, v3.Meta.ID)
		}
		if r.Via.Matched != v1.Meta.ID || math.Abs(r.Score-1) > 1e-5 {
			t.Errorf("via %+v score %v, want matched on %s with score 1", r.Via, r.Score, v1.Meta.ID)
		}
		var hist []string
		for _, h := range r.History {
			hist = append(hist, h.Meta.ID)
		}
		if !slices.Equal(hist, []string{v1.Meta.ID, v2.Meta.ID}) {
			t.Errorf("history = %v, want v1, v2 oldest first", hist)
		}
		for _, s := range []string{v1.Content, v2.Content, v3.Content, "version 1", "version 3", "the current text above"} {
			if !strings.Contains(res.Injection, s) {
				t.Errorf("injection lacks %q:\n%s", s, res.Injection)
			}
		}
		if strings.Index(res.Injection, v1.Content) > strings.Index(res.Injection, v2.Content) {
			t.Errorf("history not oldest first:\n%s", res.Injection)
		}
	})
}

// graphFixture: A is what the query finds. A refines B; C relates to A
// (recorded on C); B contradicts D; D relates to E; F relates to E. B has
// an older version B0 that G points at.
func graphFixture() (all []*memcore.MemoryFile, a, b, c, d, e, f, b0, g *memcore.MemoryFile) {
	a = mem(testID(21), memcore.ScopeRepo, memcore.CategoryArchitecturalDecisions, 1, 0, "Kestrel quartz lantern harbor.")
	b0 = mem(testID(22), memcore.ScopeRepo, memcore.CategoryProjectConventions, 1, 1, "Pebble orchard violin.")
	b = supersede(mem(testID(23), memcore.ScopeRepo, memcore.CategoryProjectConventions, 2, 2, "Pebble orchard violin, revised."), b0)
	c = mem(testID(24), memcore.ScopeUser, memcore.CategoryPatterns, 1, 3, "Saffron tundra bicycle.")
	d = mem(testID(25), memcore.ScopeRepo, memcore.CategoryCorrections, 1, 4, "Marble comet whistle.")
	e = mem(testID(26), memcore.ScopeRepo, memcore.CategoryUserFacts, 1, 5, "Velvet canyon piano.")
	f = mem(testID(27), memcore.ScopeRepo, memcore.CategoryUserFacts, 1, 6, "Copper meadow falcon.")
	g = mem(testID(28), memcore.ScopeUser, memcore.CategoryPatterns, 1, 7, "Amber glacier trumpet.")
	relate(a, memcore.RelationshipRefines, b.Meta.ID)
	relate(c, memcore.RelationshipRelatesTo, a.Meta.ID)
	relate(b, memcore.RelationshipContradicts, d.Meta.ID)
	relate(d, memcore.RelationshipRelatesTo, e.Meta.ID)
	relate(f, memcore.RelationshipRelatesTo, e.Meta.ID)
	relate(g, memcore.RelationshipRelatesTo, b0.Meta.ID)
	return []*memcore.MemoryFile{a, b0, b, c, d, e, f, g}, a, b, c, d, e, f, b0, g
}

func TestGraphExpansion(t *testing.T) {
	all, a, b, c, d, e, f, _, _ := graphFixture()
	type want struct {
		hops     int
		rel      memcore.Relationship
		from     string
		incoming bool
	}
	tests := []struct {
		depth int
		want  map[string]want
	}{
		{0, map[string]want{a.Meta.ID: {}}},
		{1, map[string]want{
			a.Meta.ID: {},
			b.Meta.ID: {1, memcore.RelationshipRefines, a.Meta.ID, false},
			c.Meta.ID: {1, memcore.RelationshipRelatesTo, a.Meta.ID, true},
		}},
		{2, map[string]want{
			a.Meta.ID: {},
			b.Meta.ID: {1, memcore.RelationshipRefines, a.Meta.ID, false},
			c.Meta.ID: {1, memcore.RelationshipRelatesTo, a.Meta.ID, true},
			d.Meta.ID: {2, memcore.RelationshipContradicts, b.Meta.ID, false},
		}},
		{3, map[string]want{
			a.Meta.ID: {},
			b.Meta.ID: {1, memcore.RelationshipRefines, a.Meta.ID, false},
			c.Meta.ID: {1, memcore.RelationshipRelatesTo, a.Meta.ID, true},
			d.Meta.ID: {2, memcore.RelationshipContradicts, b.Meta.ID, false},
			e.Meta.ID: {3, memcore.RelationshipRelatesTo, d.Meta.ID, false},
		}},
	}
	storeKinds(t, func(t *testing.T, newStore func(t *testing.T) memcore.MemoryStore) {
		store := newStore(t)
		for _, m := range all {
			write(t, store, m.Clone())
		}
		for _, tt := range tests {
			cfg := identityConfig()
			cfg.HopDepth = tt.depth
			cfg.MinScore = 0.9 // only A itself is a search hit
			eng := newEngine(t, store, newEmbedder(t), nil, cfg)
			rebuild(t, eng)
			res, err := eng.Retrieve(context.Background(), "", userWindow(a.Content))
			if err != nil {
				t.Fatal(err)
			}
			got := make(map[string]Recalled)
			for _, r := range res.Memories {
				got[r.Memory.Meta.ID] = r
			}
			if len(got) != len(tt.want) {
				t.Errorf("depth %d: memories %v, want %d of them", tt.depth, ids(res), len(tt.want))
			}
			if _, ok := got[f.Meta.ID]; ok {
				t.Errorf("depth %d: F is 4 hops away but was included", tt.depth)
			}
			for id, w := range tt.want {
				r, ok := got[id]
				if !ok {
					t.Errorf("depth %d: %s missing", tt.depth, id)
					continue
				}
				v := r.Via
				if v.Hops != w.hops || v.Relationship != w.rel || (w.hops > 0 && (v.From != w.from || v.Incoming != w.incoming || v.Source != a.Meta.ID)) {
					t.Errorf("depth %d: %s via %+v, want %+v from source %s", tt.depth, id, v, w, a.Meta.ID)
				}
				if w.hops > 0 {
					wantScore := got[a.Meta.ID].Score * math.Pow(0.9, float64(w.hops))
					if math.Abs(r.Score-wantScore) > 1e-9 || r.Score > got[a.Meta.ID].Score {
						t.Errorf("depth %d: %s score %v, want %v (source × 0.9^hops)", tt.depth, id, r.Score, wantScore)
					}
				}
			}
			if tt.depth >= 1 && !strings.Contains(res.Injection, "Recalled because it is refined by [1]") &&
				!strings.Contains(res.Injection, "Recalled because it refines [1]") {
				t.Errorf("depth %d: injection does not say why B is shown:\n%s", tt.depth, res.Injection)
			}
		}
	})
}

func TestNeighbourOnOldVersionMapsToHead(t *testing.T) {
	all, _, b, _, _, _, _, b0, g := graphFixture()
	store := memcore.NewMemStore()
	write(t, store, all...)
	cfg := identityConfig()
	cfg.MinScore = 0.9
	e := newEngine(t, store, newEmbedder(t), nil, cfg)
	rebuild(t, e)
	res, err := e.Retrieve(context.Background(), "", userWindow(g.Content))
	if err != nil {
		t.Fatal(err)
	}
	got := ids(res)
	if !slices.Equal(got, []string{g.Meta.ID, b.Meta.ID}) {
		t.Fatalf("memories = %v, want G and the head of B0's chain, B", got)
	}
	if slices.Contains(got, b0.Meta.ID) {
		t.Errorf("the superseded B0 is shown")
	}
	if h := res.Memories[1].History; len(h) != 1 || h[0].Meta.ID != b0.Meta.ID {
		t.Errorf("B's history = %v, want B0", h)
	}
}

func TestMaxMemoriesCapsExpansion(t *testing.T) {
	store := memcore.NewMemStore()
	hub := mem(testID(100), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 0, "Hub note about caching.")
	write(t, store, hub)
	for i := 1; i <= 20; i++ {
		write(t, store, relate(mem(testID(100+i), memcore.ScopeRepo, memcore.CategoryPatterns, 1, i, genContent(randFor(uint64(i)))),
			memcore.RelationshipRelatesTo, hub.Meta.ID))
	}
	cfg := identityConfig()
	cfg.MaxMemories = 5
	cfg.MinScore = 0.9
	e := newEngine(t, store, newEmbedder(t), nil, cfg)
	rebuild(t, e)
	res, _ := e.Retrieve(context.Background(), "", userWindow(hub.Content))
	if len(res.Memories)+res.Omitted != 5 {
		t.Fatalf("%d memories + %d omitted, want the cap of 5", len(res.Memories), res.Omitted)
	}
	if res.Memories[0].Memory.Meta.ID != hub.Meta.ID {
		t.Errorf("first = %s, want the search hit", res.Memories[0].Memory.Meta.ID)
	}
}

func TestTurnCache(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := newEmbedder(t)
	llm := hypothesisLLM(t, "Prefers optimistic locking with retry.")
	e := newEngine(t, store, emb, llm, DefaultConfig(), withTurnCacheSize(2))
	rebuild(t, e)
	ctx := context.Background()
	w := userWindow("locking")

	first, _ := e.Retrieve(ctx, "turn-1", w)
	llmCalls, embCalls := llm.Calls(), emb.Calls()
	again, _ := e.Retrieve(ctx, "turn-1", append(w, memcore.Message{Role: memcore.RoleAssistant, Content: "more text"}))
	if llm.Calls() != llmCalls || emb.Calls() != embCalls {
		t.Errorf("second call of a turn made %d LLM and %d Embed calls, want none", llm.Calls()-llmCalls, emb.Calls()-embCalls)
	}
	if again != first {
		t.Errorf("second call of a turn gave a different result")
	}
	if len(first.Memories) == 0 {
		t.Fatalf("no memories found")
	}

	// Another turn computes; with a cache of 2 turns, a third evicts the first.
	e.Retrieve(ctx, "turn-2", w)
	e.Retrieve(ctx, "turn-3", w)
	before := llm.Calls()
	e.Retrieve(ctx, "turn-3", w)
	if llm.Calls() != before {
		t.Errorf("turn-3 was not cached")
	}
	e.Retrieve(ctx, "turn-1", w)
	if llm.Calls() != before+1 {
		t.Errorf("turn-1 should have been evicted (LRU of 2) and computed again")
	}

	// A rebuild that changes the index invalidates cached turns; one that
	// changes nothing does not.
	rebuild(t, e)
	before = llm.Calls()
	e.Retrieve(ctx, "turn-3", w)
	if llm.Calls() != before {
		t.Errorf("a rebuild that changed nothing invalidated the turn cache")
	}
	write(t, store, mem(testID(9), memcore.ScopeUser, memcore.CategoryCodingPreferences, 1, 5, "Prefers optimistic locking with retry and jitter."))
	rebuild(t, e)
	res, _ := e.Retrieve(ctx, "turn-3", w)
	if llm.Calls() != before+1 {
		t.Errorf("a rebuild with a new memory did not invalidate the turn cache")
	}
	if !slices.Contains(ids(res), testID(9)) {
		t.Errorf("the recomputed turn lacks the new memory: %v", ids(res))
	}

	// An empty turn id is never cached.
	before = llm.Calls()
	e.Retrieve(ctx, "", w)
	e.Retrieve(ctx, "", w)
	if llm.Calls() != before+2 {
		t.Errorf("calls without a turn id were cached")
	}
}

func TestTurnCacheSharesConcurrentComputation(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	release := make(chan struct{})
	llm := newLLM(t, fake.LLMConfig{ReplyFunc: func(ctx context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		<-release
		return &memcore.CompletionResponse{Text: hypothesesReply("Prefers optimistic locking with retry.")}, nil
	}})
	cfg := DefaultConfig()
	cfg.Timeout = 30 * time.Second
	e := newEngine(t, store, newEmbedder(t), llm, cfg)
	rebuild(t, e)

	const n = 8
	waiting := make(chan struct{}, n)
	testHookTurnWait = func() { waiting <- struct{}{} }
	t.Cleanup(func() { testHookTurnWait = nil })

	results := make([]*Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = e.Retrieve(context.Background(), "same-turn", userWindow("locking"))
		}()
	}
	for range n - 1 {
		<-waiting
	}
	close(release)
	wg.Wait()
	if llm.Calls() != 1 {
		t.Errorf("%d concurrent calls of one turn made %d LLM calls, want 1", n, llm.Calls())
	}
	for i, r := range results {
		if r != results[0] || len(r.Memories) == 0 {
			t.Errorf("call %d got %+v, want the shared result with memories", i, r)
		}
	}
}

func TestRetrieveBeforeStartIsEmpty(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	e := newEngine(t, store, newEmbedder(t), nil, identityConfig())
	res, err := e.Retrieve(context.Background(), "t", userWindow(locking.Content))
	if err != nil || len(res.Memories) != 0 {
		t.Fatalf("before Start: %+v, %v; want empty", res, err)
	}
	e.Start(context.Background())
	res, err = e.Retrieve(context.Background(), "t", userWindow(locking.Content))
	if err != nil || len(res.Memories) == 0 {
		t.Fatalf("after Start: %+v, %v; want memories (the empty result before Start has no index, so is not kept)", res, err)
	}
}

func TestFirstTurnWaitsForInitialBuild(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := &gatedEmbedder{Embedder: newEmbedder(t), gate: make(chan struct{}), queried: make(chan struct{}, 1)}
	// Without the lexical index nothing is published before the vectors.
	cfg := vectorOnly(identityConfig())
	cfg.Timeout = 30 * time.Second
	e := newEngine(t, store, emb, nil, cfg)
	e.Start(context.Background())

	done := make(chan *Result)
	go func() {
		res, _ := e.Retrieve(context.Background(), "t1", userWindow(locking.Content))
		done <- res
	}()
	<-emb.queried // the turn has embedded its query; the build is still held
	if e.snap.Load() != nil {
		t.Fatal("the index was built while its embedding was held")
	}
	close(emb.gate)
	res := <-done
	if len(res.Memories) == 0 || res.Memories[0].Memory.Meta.ID != locking.Meta.ID {
		t.Fatalf("first turn got %v, want it to wait for the build and find %s", ids(res), locking.Meta.ID)
	}
}

func TestFirstTurnWaitIsBounded(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := &gatedEmbedder{Embedder: newEmbedder(t), gate: make(chan struct{})}
	cfg := vectorOnly(identityConfig())
	cfg.Timeout = time.Second
	e := newEngine(t, store, emb, nil, cfg)
	e.Start(context.Background())
	start := time.Now()
	res, err := e.Retrieve(context.Background(), "t1", userWindow(locking.Content))
	// The build never ends while the embedder is held: only the timeout
	// can end the wait (the upper margin is for a loaded machine).
	if elapsed := time.Since(start); elapsed < cfg.Timeout || elapsed > cfg.Timeout+10*time.Second {
		t.Errorf("waited %v for the build, want about the %v timeout", elapsed, cfg.Timeout)
	}
	if err != nil || len(res.Memories) != 0 || !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Errorf("got %+v, %v; want no memories, nil, and the wait's deadline in Result.Err", res, err)
	}
	// The build is still held: the next turn does not wait its budget out
	// again — it says there is no index yet, with no deadline reached.
	res, _ = e.Retrieve(context.Background(), "t2", userWindow(locking.Content))
	if res.Skipped != SkipNoIndex || res.Err != nil || len(res.Memories) != 0 {
		t.Errorf("second turn: %v (%v) with %d memories; want no index yet, no wait, no memories", res.Skipped, res.Err, len(res.Memories))
	}
	close(emb.gate)
	waitFor(t, "the initial build", func() bool { return e.snap.Load() != nil })
	res, _ = e.Retrieve(context.Background(), "t1", userWindow(locking.Content))
	if len(res.Memories) == 0 {
		t.Errorf("after the build, the same turn still has no memories: a result computed without an index must not be kept")
	}
}

func TestTriggerRebuildCoalesces(t *testing.T) {
	store := &countingStore{MemoryStore: memcore.NewMemStore(), entered: make(chan int64, 10), gate: make(chan struct{})}
	write(t, store, threeMemories()...)
	e := newEngine(t, store, newEmbedder(t), nil, identityConfig())

	e.TriggerRebuild() // before Start: covered by the initial build
	e.Start(context.Background())
	if n := <-store.entered; n != 1 {
		t.Fatalf("first List call is number %d", n)
	}
	// The initial build is held in List; ask five times.
	for range 5 {
		e.TriggerRebuild()
	}
	close(store.gate)
	if n := <-store.entered; n != 2 {
		t.Fatalf("second List call is number %d", n)
	}
	// The second build has taken the one pending request; none is left.
	if len(e.kick) != 0 {
		t.Errorf("requests made during a build caused more than one more build")
	}
	write(t, store, mem(testID(50), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 9, "Feature flags live in config/flags.yaml."))
	e.TriggerRebuild()
	<-store.entered
	waitFor(t, "the new memory in the index", func() bool {
		s := e.snap.Load()
		return s != nil && slices.Contains(s.idx.IDs, testID(50))
	})
	if n := store.lists.Load(); n != 3 {
		t.Errorf("%d builds, want 3 (initial, one for five requests, one for the new memory)", n)
	}
}

func TestSearchDoesNotWaitForRebuild(t *testing.T) {
	store := &countingStore{MemoryStore: memcore.NewMemStore(), entered: make(chan int64, 10)}
	write(t, store, threeMemories()...)
	cfg := identityConfig()
	cfg.Timeout = 30 * time.Second
	e := newEngine(t, store, newEmbedder(t), nil, cfg)
	e.Start(context.Background())
	<-store.entered
	waitFor(t, "the initial build", func() bool { return e.snap.Load() != nil })

	store.gate = make(chan struct{}) // hold the next build
	defer close(store.gate)
	e.TriggerRebuild()
	<-store.entered
	res, err := e.Retrieve(context.Background(), "t", userWindow(locking.Content))
	if err != nil || len(res.Memories) == 0 {
		t.Fatalf("during a rebuild: %+v, %v; want results from the current index", res, err)
	}
}

func TestRetryAfterFailedBuild(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := newEmbedder(t, fake.EmbedderConfig{FailNext: 1, FailWith: memcore.ErrUnauthenticated})
	var logs logBuffer
	e := newEngine(t, store, emb, nil, identityConfig(), withRetryDelay(time.Millisecond), withLogger(logs.logger()))
	e.Start(context.Background())
	waitFor(t, "a complete index after a failed build", func() bool {
		s := e.snap.Load()
		return s != nil && s.idx.Len() == 3
	})
	if len(logs.lines("warn")) == 0 {
		t.Errorf("the failed build was not logged")
	}
}

func TestRebuildReportsFailures(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	emb := newEmbedder(t, fake.EmbedderConfig{FailNext: 1, FailWith: memcore.ErrInvalidRequest})
	e := newEngine(t, store, emb, nil, identityConfig())
	if err := e.Rebuild(context.Background()); !errors.Is(err, memcore.ErrInvalidRequest) {
		t.Fatalf("Rebuild = %v, want the embedder's error", err)
	}
	if s := e.snap.Load(); s == nil || s.idx.Len() != 0 {
		t.Fatalf("after a failed build the index should exist and be empty")
	}
	rebuild(t, e)
	if s := e.snap.Load(); s.idx.Len() != 3 {
		t.Fatalf("index holds %d memories after a good build, want 3", s.idx.Len())
	}
}

func TestCloseStopsBackgroundWork(t *testing.T) {
	store := &countingStore{MemoryStore: memcore.NewMemStore(), entered: make(chan int64, 10)}
	write(t, store, threeMemories()...)
	e := newEngine(t, store, newEmbedder(t), nil, identityConfig())
	e.Start(context.Background())
	<-store.entered
	waitFor(t, "the initial build", func() bool { return e.snap.Load() != nil })
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.TriggerRebuild()
	e.Start(context.Background())
	if n := store.lists.Load(); n != 1 {
		t.Errorf("%d builds after Close, want none beyond the first", n-1)
	}
	res, err := e.Retrieve(context.Background(), "t", userWindow(locking.Content))
	if err != nil || len(res.Memories) == 0 {
		t.Errorf("after Close: %+v, %v; want the last index to keep serving", res, err)
	}
}

func TestStartContextEndsBackgroundWork(t *testing.T) {
	store := memcore.NewMemStore()
	e := newEngine(t, store, newEmbedder(t), nil, identityConfig())
	ctx, cancel := context.WithCancel(context.Background())
	e.Start(ctx)
	cancel()
	select {
	case <-e.done:
	case <-time.After(10 * time.Second):
		t.Fatal("background goroutine still running after Start's context ended")
	}
}

func TestConcurrentUse(t *testing.T) {
	store := memcore.NewMemStore()
	write(t, store, genMemories(200, 1)...)
	llm := hypothesisLLM(t, "error wrap sentinel logging.", "database migrations schema.")
	e := newEngine(t, store, newEmbedder(t), llm, DefaultConfig(), withTurnCacheSize(4))
	e.Start(context.Background())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				turn := string(rune('a' + (w+i)%6))
				if _, err := e.Retrieve(context.Background(), turn, userWindow("how do we wrap errors?")); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, m := range genMemories(20, 2) {
			write(t, store, m)
			if i%3 == 0 {
				e.TriggerRebuild()
			}
		}
	}()
	wg.Wait()
	e.TriggerRebuild()
	waitFor(t, "all 220 memories indexed", func() bool {
		s := e.snap.Load()
		return s != nil && s.idx.Len() == 220
	})
}

// A retired (forgotten) chain is never recalled, nor reached through a
// link; a later version revives it.
func TestRetiredChainIsNotRecalled(t *testing.T) {
	storeKinds(t, func(t *testing.T, newStore func(t *testing.T) memcore.MemoryStore) {
		v1 := mem(testID(31), memcore.ScopeRepo, memcore.CategoryArchitecturalDecisions, 1, 0, "Uses SQLite for the local development database.")
		v2 := supersede(mem(testID(32), memcore.ScopeRepo, memcore.CategoryArchitecturalDecisions, 2, 1, v1.Content), v1)
		v2.Meta.Retired, v2.Meta.RetiredReason = true, "moved to Postgres"
		linker := relate(mem(testID(33), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 2, "Kestrel quartz lantern harbor."), memcore.RelationshipRefines, v1.Meta.ID)
		store := newStore(t)
		write(t, store, v1, v2, linker)
		e := newEngine(t, store, newEmbedder(t), nil, identityConfig())
		rebuild(t, e)
		for _, q := range []string{v1.Content, linker.Content} {
			res, err := e.Retrieve(context.Background(), "", userWindow(q))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Memories {
				if r.Memory.Meta.ID == v1.Meta.ID || r.Memory.Meta.ID == v2.Meta.ID {
					t.Errorf("query %q recalled the retired chain (%s)", q, r.Memory.Meta.ID)
				}
			}
			if strings.Contains(res.Injection, "SQLite") {
				t.Errorf("the injection shows the retired memory:\n%s", res.Injection)
			}
		}

		v3 := supersede(mem(testID(34), memcore.ScopeRepo, memcore.CategoryArchitecturalDecisions, 3, 3, "Uses SQLite for the local development database again."), v2)
		write(t, store, v3)
		rebuild(t, e)
		res, err := e.Retrieve(context.Background(), "", userWindow(v1.Content))
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(res); len(got) == 0 || got[0] != v3.Meta.ID {
			t.Errorf("after revival recalled %v, want the new head %s first", got, v3.Meta.ID)
		}
	})
}
