package memretrieve

import (
	"context"
	iofs "io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// codingMemories are the memories of a small coding project, each about
// one thing, for the relevance gate's tests.
var codingMemories = []string{
	"Wants Go tests table-driven, each case run as a t.Run subtest.",
	"Does not want testify in Go tests; uses plain if checks and go-cmp.",
	"Wraps Go errors with fmt.Errorf and %w, saying what was being done.",
	"Database migrations live in db/migrations as numbered up and down files.",
	"SQL queries are written in internal/store/queries and compiled with sqlc; no ORM.",
	"Decided against GORM after it hid N+1 queries; sqlc keeps queries explicit.",
	"Money amounts are int64 cents with an ISO currency code, never float64.",
	"Invoice numbers are gapless per account and year, allocated in the issuing transaction.",
	"HTTP routes use chi; each resource registers its routes in a Routes method.",
	"Uses zerolog for structured logging with a logger passed in, never fmt.Println.",
	"The frontend uses pnpm, never npm or yarn; the lock file is pnpm-lock.yaml.",
	"Avoids TypeScript enums; uses string literal unions instead.",
	"Background jobs run on river, a Postgres-backed queue, enqueued in the same transaction.",
	"Deployment uses the Helm chart in deploy/helm with values per environment.",
	"Secrets come from External Secrets and AWS Secrets Manager, never from values files.",
	"Releases are tagged vYYYY.MM.N from main by the release workflow.",
	"Invoice PDFs are rendered by the pdfgen worker with headless Chromium.",
	"Outgoing webhooks are signed with HMAC-SHA256 and retried for three days.",
	"Rate limiting is per API key, 100 requests per second, in Redis.",
	"List endpoints use cursor pagination with an opaque next_cursor, never offsets.",
}

// gateStore writes codingMemories to a MemStore and returns it with their
// memories, in order.
func gateStore(t *testing.T) (*memcore.MemStore, []*memcore.MemoryFile) {
	t.Helper()
	store := memcore.NewMemStore()
	ms := make([]*memcore.MemoryFile, len(codingMemories))
	for i, c := range codingMemories {
		ms[i] = mem(testID(100+i), memcore.ScopeRepo, memcore.CategoryProjectConventions, 1, i, c)
	}
	write(t, store, ms...)
	return store, ms
}

// TestNothingMatchesInjectsNothing: a turn about something the memories do
// not cover gets no memory, though the search ranks some, and every one of
// them is listed as dropped below the gate, with the thresholds it missed.
// Before the gate the injection held the ranking's best memories.
func TestNothingMatchesInjectsNothing(t *testing.T) {
	store, _ := gateStore(t)
	for _, cfg := range []Config{identityConfig(), vectorOnly(identityConfig())} {
		e := newEngine(t, store, newEmbedder(t), nil, cfg)
		rebuild(t, e)
		for _, prompt := range []string{
			"What is a good recipe for banana bread with walnuts?",
			"Translate where is the train station into Italian, please.",
			"How long should I boil an egg for a runny yolk?",
		} {
			res, err := e.Retrieve(context.Background(), "", userWindow(prompt))
			if err != nil {
				t.Fatal(err)
			}
			if res.Injection != "" || len(res.Memories) != 0 {
				t.Errorf("lexical weight %v, %q: injected %d memories, want none", cfg.LexicalWeight, prompt, len(res.Memories))
			}
			if len(res.Ranked) == 0 || len(res.Dropped) != len(res.Ranked) {
				t.Fatalf("%q: %d ranked, %d dropped; want every ranked memory dropped", prompt, len(res.Ranked), len(res.Dropped))
			}
			for _, d := range res.Dropped {
				ev := d.Evidence
				belowVector := ev.Vector < ev.VectorNeeded || ev.VectorNeeded == 0 && ev.Vector == 0
				belowLexical := ev.LexicalTerms == 0 || ev.Lexical < ev.LexicalNeeded
				if d.Reason != DropBelowGate || ev.Strong() || !belowVector || !belowLexical || ev.Relevance >= 1-cfg.GateChance {
					t.Errorf("%q: dropped %+v, want below the gate's thresholds", prompt, d)
				}
				if ev.VectorNeeded == 0 && ev.LexicalNeeded == 0 {
					t.Errorf("%q: dropped %s without a threshold", prompt, d.ID)
				}
			}
		}
	}
}

// TestOneMatchInjectsItAndFewOthers: a turn about one memory's subject
// gets that memory first, with the evidence that let it in, and few
// others.
func TestOneMatchInjectsItAndFewOthers(t *testing.T) {
	store, ms := gateStore(t)
	e := newEngine(t, store, newEmbedder(t), nil, identityConfig())
	rebuild(t, e)
	tests := []struct {
		prompt string
		want   *memcore.MemoryFile
	}{
		{"Add the new invoice migration under db/migrations, numbered after the last one.", ms[3]},
		{"Should the webhooks be signed with HMAC-SHA256, and how long are they retried?", ms[17]},
		{"Install the chart library in the frontend with pnpm.", ms[10]},
	}
	for _, tt := range tests {
		res, err := e.Retrieve(context.Background(), "", userWindow(tt.prompt))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].Memory.Meta.ID != tt.want.Meta.ID {
			t.Fatalf("%q: injected %v, want %s first", tt.prompt, ids(res), tt.want.Meta.ID)
		}
		// Memories with weaker evidence, above chance, come along with the
		// match: few of the collection's, far from the limit.
		if n := len(res.Memories); n > 4 {
			t.Errorf("%q: %d memories injected, want the match and at most 3 others", tt.prompt, n)
		}
		ev := res.Memories[0].Evidence
		if !ev.Strong() || ev.Relevance < 1-DefaultConfig().GateChance {
			t.Errorf("%q: the match's evidence %+v, want it strong with a relevance of at least 0.9", tt.prompt, ev)
		}
		for _, r := range res.Memories {
			if r.Via.Search() && !r.Evidence.Strong() {
				t.Errorf("%q: %s injected without passing the gate: %+v", tt.prompt, r.Memory.Meta.ID, r.Evidence)
			}
			checkCleared(t, r.Evidence)
		}
		if ev.Cleared == 0 {
			t.Errorf("%q: the match's evidence %+v cleared the gate on no side", tt.prompt, ev)
		}
	}
}

// TestOneWordFindsItsMemoryAlone: a one-word text, as a search is, is
// judged as a text of the shortest probe's length: the null model, drawn
// out below the lengths it was fitted on, would put chance so low that
// memories about something else come along with the match.
func TestOneWordFindsItsMemoryAlone(t *testing.T) {
	store, ms := gateStore(t)
	e := newEngine(t, store, newEmbedder(t), nil, identityConfig())
	rebuild(t, e)
	for word, want := range map[string]*memcore.MemoryFile{"pnpm": ms[10], "webhooks": ms[17]} {
		res, err := e.Retrieve(context.Background(), "", userWindow(word))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) != 1 || res.Memories[0].Memory.Meta.ID != want.Meta.ID {
			t.Errorf("%q: injected %v, want %s alone", word, ids(res), want.Meta.ID)
		}
	}
}

// checkCleared checks that ev's Cleared holds the sides whose score reached
// what the gate needed, and no other.
func checkCleared(t *testing.T, ev Evidence) {
	t.Helper()
	sides := []struct {
		side          Found
		score, needed float64
	}{
		{FoundVector, ev.Vector, ev.VectorNeeded},
		{FoundLexical, ev.Lexical, ev.LexicalNeeded},
	}
	for _, s := range sides {
		if cleared, reached := ev.Cleared&s.side != 0, s.needed != 0 && s.score >= s.needed; cleared != reached {
			t.Errorf("evidence %+v: %v cleared %t, but its score %.4f against %.4f needed", ev, s.side, cleared, s.score, s.needed)
		}
	}
}

// TestGraphExpansionOnlyFromHitsThatPassed: a neighbour comes along with a
// hit that passed the gate, attached to it; a neighbour of a hit that did
// not pass does not, nor does the weak hit itself.
func TestGraphExpansionOnlyFromHitsThatPassed(t *testing.T) {
	store, ms := gateStore(t)
	// Refines the migrations memory; says nothing of the turn's words.
	refines := relate(mem(testID(200), memcore.ScopeRepo, memcore.CategoryCorrections, 1, 30,
		"Corrected: a NOT NULL column with a default locked the invoices table for minutes."),
		memcore.RelationshipRefines, ms[3].Meta.ID)
	// Related to the logging memory, which the turn does not concern.
	aside := relate(mem(testID(201), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 31,
		"Log fields use snake_case keys with request_id on every line."),
		memcore.RelationshipRelatesTo, ms[9].Meta.ID)
	write(t, store, refines, aside)
	e := newEngine(t, store, newEmbedder(t), nil, identityConfig())
	rebuild(t, e)
	res, err := e.Retrieve(context.Background(), "", userWindow("Add the new invoice migration under db/migrations, numbered after the last one."))
	if err != nil {
		t.Fatal(err)
	}
	got := ids(res)
	if len(got) < 2 || got[0] != ms[3].Meta.ID {
		t.Fatalf("injected %v, want the migrations memory first", got)
	}
	var neighbour *Recalled
	for i, r := range res.Memories {
		switch r.Memory.Meta.ID {
		case refines.Meta.ID:
			neighbour = &res.Memories[i]
		case aside.Meta.ID, ms[9].Meta.ID:
			t.Errorf("injected %s, which only an unrelated memory leads to", r.Memory.Meta.ID)
		}
	}
	if neighbour == nil || neighbour.Via.Source != ms[3].Meta.ID || neighbour.Via.Search() {
		t.Fatalf("the correction that refines the match: %+v, want it attached to the match", neighbour)
	}
	if res.Memories[0].Score <= neighbour.Score {
		t.Errorf("the neighbour scores %v, its source %v: want it below", neighbour.Score, res.Memories[0].Score)
	}
}

// TestNeighboursCountTowardsTheCutOff: MaxMemories caps the injection,
// neighbours included.
func TestNeighboursCountTowardsTheCutOff(t *testing.T) {
	store, ms := gateStore(t)
	var extra []*memcore.MemoryFile
	for i := range 4 {
		extra = append(extra, relate(mem(testID(300+i), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 40+i,
			"A detail of the project, number "+string(rune('A'+i))+"."), memcore.RelationshipRefines, ms[3].Meta.ID))
	}
	write(t, store, extra...)
	cfg := identityConfig()
	cfg.MaxMemories = 3
	e := newEngine(t, store, newEmbedder(t), nil, cfg)
	rebuild(t, e)
	res, err := e.Retrieve(context.Background(), "", userWindow("Add the new invoice migration under db/migrations, numbered after the last one."))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 3 || res.Memories[0].Memory.Meta.ID != ms[3].Meta.ID {
		t.Fatalf("injected %v, want the match and 2 of its 4 neighbours", ids(res))
	}
}

// TestGateOff: with GateChance 1 every ranked memory may be injected, up to
// MaxMemories: the ranking alone decides, as before the gate.
func TestGateOff(t *testing.T) {
	store, _ := gateStore(t)
	cfg := identityConfig()
	cfg.GateChance = 1
	emb := newEmbedder(t)
	e := newEngine(t, store, emb, nil, cfg)
	rebuild(t, e)
	if emb.Inputs() != len(codingMemories) {
		t.Errorf("embedded %d texts, want the %d memories only: no probes with the gate off", emb.Inputs(), len(codingMemories))
	}
	res, err := e.Retrieve(context.Background(), "", userWindow("What is a good recipe for banana bread with walnuts?"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ranked) == 0 || len(res.Memories) != min(len(res.Ranked), cfg.MaxMemories) {
		t.Fatalf("%d memories of %d ranked, want the first %d", len(res.Memories), len(res.Ranked), cfg.MaxMemories)
	}
	for _, r := range res.Memories {
		if r.Evidence.Passed == 0 || r.Evidence.Relevance != 0 {
			t.Errorf("gate off: evidence %+v, want Passed what found it and no relevance", r.Evidence)
		}
	}
}

// TestGateWithTheEmbedderDown: when the turn's query cannot be embedded,
// the gate weighs the lexical evidence alone: shared rare words let a
// memory in, an unrelated turn gets nothing.
func TestGateWithTheEmbedderDown(t *testing.T) {
	store, ms := gateStore(t)
	emb := newEmbedder(t)
	e := newEngine(t, store, emb, nil, identityConfig())
	rebuild(t, e)
	failNext(t, emb, 1, memcore.ErrUnavailable)
	res, err := e.Retrieve(context.Background(), "", userWindow("Sign the outgoing webhooks with HMAC-SHA256 and retry them for three days."))
	if err != nil {
		t.Fatal(err)
	}
	if res.VectorSkipped != SkipEmbedderError || len(res.Memories) == 0 || res.Memories[0].Memory.Meta.ID != ms[17].Meta.ID {
		t.Fatalf("memories %v (vector skipped %v), want the webhook memory by its words", ids(res), res.VectorSkipped)
	}
	if p := res.Memories[0].Evidence.Passed; p != FoundLexical {
		t.Errorf("passed on %v, want lexical", p)
	}
	failNext(t, emb, 1, memcore.ErrUnavailable)
	res, err = e.Retrieve(context.Background(), "", userWindow("What is a good recipe for banana bread with walnuts?"))
	if err != nil || len(res.Memories) != 0 {
		t.Errorf("an unrelated turn with the embedder down: %v, %v; want nothing", ids(res), err)
	}
}

// TestCalibrationIsKeptInTheCache: the gate's calibration is measured once,
// kept beside the vectors, read by a new engine (a new process) without
// embedding the probes or measuring again, measured again when the
// memories change, and for another embedding model; a damaged file is a
// miss.
func TestCalibrationIsKeptInTheCache(t *testing.T) {
	fs := newFileStore(t)
	write(t, fs, gateMemories()...)
	e1 := newEngine(t, fs, newEmbedder(t), nil, identityConfig())
	rebuild(t, e1)
	// The first build measures each partial index it publishes too.
	if n := e1.calibrations.Load(); n < 1 {
		t.Fatalf("first build measured the calibration %d times, want at least 1", n)
	}
	cal1 := e1.snap.Load().cal
	if cal1 == nil || cal1.Vector == nil || cal1.Lexical == nil {
		t.Fatalf("calibration %+v, want a vector and a lexical model", cal1)
	}
	path := filepath.Join(fs.Dir(memcore.ScopeRepo), cacheDirName, calibrationFileName(newEmbedder(t).Model(), nil))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no calibration file: %v", err)
	}

	// A new process: the calibration and the probes' vectors come from the
	// cache.
	emb2 := newEmbedder(t)
	e2 := newEngine(t, fs, emb2, nil, identityConfig())
	rebuild(t, e2)
	if n, in := e2.calibrations.Load(), emb2.Inputs(); n != 0 || in != 0 {
		t.Fatalf("a restart measured the calibration %d times and embedded %d texts, want 0 and 0", n, in)
	}
	if !reflect.DeepEqual(e2.snap.Load().cal, cal1) {
		t.Fatalf("restored calibration %+v, want %+v", e2.snap.Load().cal, cal1)
	}

	// A new memory: measured again, and kept.
	write(t, fs, mem(testID(400), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 50, "Feature flags are removed within two releases of full rollout."))
	rebuild(t, e2)
	if n := e2.calibrations.Load(); n != 1 {
		t.Errorf("a new memory: measured %d times, want 1", n)
	}
	e3 := newEngine(t, fs, newEmbedder(t), nil, identityConfig())
	rebuild(t, e3)
	if n := e3.calibrations.Load(); n != 0 {
		t.Errorf("a restart after the change measured %d times, want 0", n)
	}

	// Another embedding model: its probes are embedded, and it is measured.
	other := renamedEmbedder{Embedder: newEmbedder(t), name: "other-model"}
	e4 := newEngine(t, fs, other, nil, identityConfig())
	rebuild(t, e4)
	if n, in := e4.calibrations.Load(), other.Inputs(); n < 1 || in < len(theProbes().all) {
		t.Errorf("another model: measured %d times, embedded %d texts; want it measured, and the %d probes among them", n, in, len(theProbes().all))
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), calibrationFileName("other-model", nil))); err != nil {
		t.Errorf("no calibration file for the other model: %v", err)
	}

	// A damaged file is a miss: measured again, no error.
	if err := os.WriteFile(path, []byte(`{"version": 1, "model": "fake`), 0o600); err != nil {
		t.Fatal(err)
	}
	e5 := newEngine(t, fs, newEmbedder(t), nil, identityConfig())
	if err := e5.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := e5.calibrations.Load(); n != 1 {
		t.Errorf("a damaged file: measured %d times, want 1", n)
	}
}

// TestNoMemoriesWriteNothing: a build with no memories embeds nothing —
// the relevance gate needs no calibration when there is nothing to let
// through — and writes nothing: no cache folder, no vectors, no
// calibration, wherever the cache is kept. The first memory then brings
// the probes and the calibration, kept for the next process.
func TestNoMemoriesWriteNothing(t *testing.T) {
	for _, where := range []string{"scope folders", "CacheDir"} {
		t.Run(where, func(t *testing.T) {
			fs := newFileStore(t)
			root := filepath.Dir(fs.Dir(memcore.ScopeRepo))
			var opts []cfgOpt
			if where == "CacheDir" {
				opts = append(opts, withCacheDir(filepath.Join(root, "cache")))
			}
			before := treeOf(t, root)
			emb := newEmbedder(t)
			e := newEngine(t, fs, emb, nil, identityConfig(), opts...)
			rebuild(t, e)
			if emb.Inputs() != 0 {
				t.Errorf("a build of no memories embedded %d texts, want 0", emb.Inputs())
			}
			res, err := e.Retrieve(context.Background(), "t", userWindow("how are releases tagged"))
			if err != nil || len(res.Memories) != 0 || res.Skipped != SkipNone || res.VectorSkipped != SkipNone {
				t.Fatalf("Retrieve over no memories = %+v, %v; want none, nothing skipped", res, err)
			}
			if emb.Inputs() != 0 {
				t.Errorf("Retrieve over no memories embedded %d texts, want 0: there is nothing to search", emb.Inputs())
			}
			if after := treeOf(t, root); !slices.Equal(after, before) {
				t.Errorf("a build of no memories wrote %v; the folders held %v", after, before)
			}

			write(t, fs, gateMemories()...)
			rebuild(t, e)
			if in := emb.Inputs(); in < len(theProbes().all)+len(codingMemories) {
				t.Errorf("the first memories embedded %d texts, want the %d probes and the %d memories", in, len(theProbes().all), len(codingMemories))
			}
			if cal := e.snap.Load().cal; cal == nil || cal.Vector == nil {
				t.Fatalf("calibration %+v once there are memories, want a vector model", cal)
			}
			emb2 := newEmbedder(t)
			e2 := newEngine(t, fs, emb2, nil, identityConfig(), opts...)
			rebuild(t, e2)
			if n, in := e2.calibrations.Load(), emb2.Inputs(); n != 0 || in != 0 {
				t.Errorf("a restart measured the calibration %d times and embedded %d texts, want 0 and 0", n, in)
			}
		})
	}
}

// treeOf lists every file and folder under root, sorted.
func treeOf(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, _ iofs.DirEntry, err error) error {
		out = append(out, path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCalibrationIsNotWrittenIntoAnEmptiedCache: when the cache folder was
// emptied under a running engine — the first step of rm -r of the memory
// folder, whose deletions the engine sees as changes — a rebuild measures
// the calibration again but writes nothing into the folder, which would
// make the folder's removal fail; the turn still gets its calibration.
func TestCalibrationIsNotWrittenIntoAnEmptiedCache(t *testing.T) {
	fs := newFileStore(t)
	ms := gateMemories()
	write(t, fs, ms...)
	e := newEngine(t, fs, newEmbedder(t), nil, identityConfig())
	rebuild(t, e)
	cacheDir := filepath.Join(fs.Dir(memcore.ScopeRepo), cacheDirName)
	entries, err := os.ReadDir(cacheDir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("cache folder %s after a build: %v, %v; want files", cacheDir, entries, err)
	}
	for _, en := range entries {
		if err := os.Remove(filepath.Join(cacheDir, en.Name())); err != nil {
			t.Fatal(err)
		}
	}
	// A memory goes: the collection changed, so the calibration is
	// measured again.
	var gone *memcore.MemoryFile
	for _, m := range ms {
		if m.Meta.Scope == memcore.ScopeRepo {
			gone = m
			break
		}
	}
	if err := os.Remove(filepath.Join(fs.Dir(memcore.ScopeRepo), gone.Meta.ID+".md")); err != nil {
		t.Fatal(err)
	}
	before := e.calibrations.Load()
	rebuild(t, e)
	if e.calibrations.Load() == before || e.snap.Load().cal == nil {
		t.Fatalf("the rebuild after a memory went did not measure the calibration again (%d measurements)", e.calibrations.Load())
	}
	if entries, err := os.ReadDir(cacheDir); err != nil || len(entries) != 0 {
		t.Errorf("the emptied cache folder holds %v (%v) after the rebuild, want nothing", entries, err)
	}
}

// gateMemories are codingMemories as memories of both scopes.
func gateMemories() []*memcore.MemoryFile {
	out := make([]*memcore.MemoryFile, len(codingMemories))
	for i, c := range codingMemories {
		scope := memcore.ScopeRepo
		if i%3 == 0 {
			scope = memcore.ScopeUser
		}
		out[i] = mem(testID(100+i), scope, memcore.CategoryProjectConventions, 1, i, c)
	}
	return out
}

// TestCalibrationFileIsValidated: a file whose numbers cannot be a
// calibration is not used.
func TestCalibrationFileIsValidated(t *testing.T) {
	good := &nullModel{Domains: []lineFit{{A: 0.2, B: 0.01}}, SD: 0.05, MinTokens: 9}
	tests := []struct {
		name string
		cal  calibration
		ok   bool
	}{
		{"good", calibration{Vector: good, Lexical: good}, true},
		{"lexical only", calibration{Lexical: good}, true},
		{"no domain", calibration{Vector: &nullModel{SD: 0.05}}, false},
		{"NaN", calibration{Vector: &nullModel{Domains: []lineFit{{A: math.NaN()}}, SD: 0.05}}, false},
		{"zero spread", calibration{Vector: &nullModel{Domains: []lineFit{{A: 0.2}}, SD: 0}}, false},
		{"infinite spread", calibration{Vector: &nullModel{Domains: []lineFit{{A: 0.2}}, SD: math.Inf(1)}}, false},
		{"no shortest probe (an earlier format)", calibration{Vector: &nullModel{Domains: []lineFit{{A: 0.2}}, SD: 0.05}}, false},
	}
	for _, tt := range tests {
		if got := tt.cal.valid(); got != tt.ok {
			t.Errorf("%s: valid = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

// TestFitNull: the null model recovers the line and spread of scores drawn
// around a line in ln(tokens), and its mean is the lowest domain's.
func TestFitNull(t *testing.T) {
	r := randFor(5)
	var scores []probeScore
	for d, line := range []lineFit{{A: 0.10, B: 0.04}, {A: 0.30, B: 0.00}} {
		for i := range 400 {
			tokens := 5 + i%300
			y := line.A + line.B*math.Log(float64(tokens)) + 0.03*r.NormFloat64()
			scores = append(scores, probeScore{domain: d, tokens: tokens, score: y})
		}
	}
	m := fitNull(scores, minSD)
	if m == nil || len(m.Domains) != 2 {
		t.Fatalf("fitNull = %+v, want two domains", m)
	}
	if d := m.Domains[0]; math.Abs(d.A-0.10) > 0.01 || math.Abs(d.B-0.04) > 0.003 {
		t.Errorf("domain 0 fit %+v, want about a 0.10, b 0.04", d)
	}
	if math.Abs(m.SD-0.03) > 0.003 {
		t.Errorf("spread %v, want about 0.03", m.SD)
	}
	// At 10 tokens domain 0 is lower (0.19), at 1000 domain 1 (0.30).
	if got := m.mean(10); math.Abs(got-(m.Domains[0].A+m.Domains[0].B*math.Log(10))) > 1e-12 {
		t.Errorf("mean at 10 tokens %v, want domain 0's", got)
	}
	if got := m.mean(1000); math.Abs(got-(m.Domains[1].A+m.Domains[1].B*math.Log(1000))) > 1e-12 {
		t.Errorf("mean at 1000 tokens %v, want domain 1's", got)
	}
	if z := m.z(m.threshold(10, 2.5), 10); math.Abs(z-2.5) > 1e-9 {
		t.Errorf("z of the threshold %v, want 2.5", z)
	}
	// The shortest probe had 5 tokens: a shorter text is judged as one of
	// 5, not by the line drawn out below what was measured.
	if m.MinTokens != 5 {
		t.Errorf("MinTokens %d, want 5, the shortest probe's", m.MinTokens)
	}
	for _, tokens := range []int{0, 1, 4} {
		if got, want := m.mean(tokens), m.mean(5); got != want {
			t.Errorf("mean at %d tokens %v, want the mean at 5, %v", tokens, got, want)
		}
	}
	if fitNull(nil, minSD) != nil {
		t.Error("fitNull without scores: not nil")
	}
}

// TestCutOff: when one of the turn's first MaxMemories memories passed the
// gate, the injection holds each of them whose evidence stands above
// chance and near the best hit's on its side (no lower than a quarter of
// it, or five deviations under it, whichever is lower), best first, at
// most MaxMemories; every other ranked memory is listed with why it was
// left out.
func TestCutOff(t *testing.T) {
	ms := make([]*memcore.MemoryFile, 6)
	for i := range ms {
		ms[i] = mem(testID(500+i), memcore.ScopeRepo, memcore.CategoryPatterns, 1, i, "memory "+string(rune('a'+i)))
	}
	snap := &snapshot{graph: memcore.NewGraph(ms)}
	const gateZ = 2.5 // the standard deviations the gate needs of one memory
	inf := math.Inf(-1)
	tests := []struct {
		name     string
		strength []float64 // standard deviations above chance; -Inf: not found
		max      int
		kept     int
		why      []DropReason // of the others, in ranking order
	}{
		{"all strong", []float64{9, 8, 4, 3}, 8, 4, nil},
		{"weaker ones come along", []float64{4, 1.5, 0.5}, 8, 3, nil},
		{"a weak tail", []float64{12, 8, 2.9, 2}, 8, 2, []DropReason{DropCliff, DropCliff}},
		{"far above chance", []float64{61, 51, 20, 9}, 8, 3, []DropReason{DropCliff}},
		{"no better than chance", []float64{6, -0.5, 5}, 8, 2, []DropReason{DropBelowGate}},
		{"not found", []float64{6, inf, 5}, 8, 2, []DropReason{DropBelowGate}},
		{"over the limit", []float64{6, 5, 5, 5, 4, 4}, 3, 3, []DropReason{DropLimit, DropLimit, DropLimit}},
		{"nothing passed", []float64{2, 1.5}, 8, 0, []DropReason{DropBelowGate, DropBelowGate}},
		{"the one that passed is past the limit", []float64{2, 1, 9}, 2, 0, []DropReason{DropBelowGate, DropBelowGate, DropBelowGate}},
	}
	for _, tt := range tests {
		e := &Engine{cfg: DefaultConfig()}
		e.cfg.MaxMemories, e.cfg.HopDepth = tt.max, 0
		var ranked []Candidate
		for i, z := range tt.strength {
			c := Candidate{ID: ms[i].Meta.ID, Score: 1 - float64(i)/10, Matched: ms[i].Meta.ID,
				Evidence: Evidence{zVector: z, zLexical: inf}}
			if !math.IsInf(z, -1) {
				c.VectorRank = i + 1
			}
			if z >= gateZ {
				c.Evidence.Cleared = FoundVector // as judge found it
			}
			ranked = append(ranked, c)
		}
		admit(ranked, tt.max)
		kept, dropped := e.choose(snap, ranked)
		if len(kept) != tt.kept {
			t.Errorf("%s: kept %d, want %d", tt.name, len(kept), tt.kept)
		}
		var why []DropReason
		for _, d := range dropped {
			why = append(why, d.Reason)
		}
		if !reflect.DeepEqual(why, tt.why) {
			t.Errorf("%s: dropped as %v, want %v", tt.name, why, tt.why)
		}
	}
	// Each side is measured against its own best: a strong lexical hit does
	// not push out a hit that passed on its vector alone.
	e := &Engine{cfg: DefaultConfig()}
	ranked := []Candidate{
		{ID: ms[0].Meta.ID, Score: 1, LexicalRank: 1, Evidence: Evidence{Cleared: FoundLexical, LexicalTerms: 2, zLexical: 40, zVector: inf}},
		{ID: ms[1].Meta.ID, Score: 0.5, VectorRank: 1, Evidence: Evidence{Cleared: FoundVector, zVector: 3, zLexical: inf}},
	}
	admit(ranked, e.cfg.MaxMemories)
	if kept, dropped := e.choose(snap, ranked); len(kept) != 2 || len(dropped) != 0 {
		t.Errorf("a lexical and a vector hit: kept %d, dropped %+v; want both kept", len(kept), dropped)
	}
}

// TestDropReasonsReadWell: every reason has words, in JSON too.
func TestDropReasonsReadWell(t *testing.T) {
	for r := DropBelowGate; r <= DropBudget; r++ {
		b, err := r.MarshalText()
		if err != nil || len(b) == 0 || string(b) != r.String() {
			t.Errorf("%d: %q, %v", r, b, err)
		}
	}
	if DropNone.String() != "" || DropReason(99).String() != "DropReason(99)" {
		t.Error("DropNone or an unknown reason reads wrong")
	}
}

// TestTiesGoToTheStrongerEvidence: memories the fusion scored alike are
// ordered by their evidence — standard deviations above chance, then
// cosine similarity, then lexical evidence — and by id only when all of it
// is equal; the score and the hops come first.
func TestTiesGoToTheStrongerEvidence(t *testing.T) {
	rec := func(id string, score float64, hops int, ev Evidence) *Recalled {
		return &Recalled{Memory: mem(id, memcore.ScopeRepo, memcore.CategoryPatterns, 1, 0, "x"), Score: score, Via: Via{Hops: hops}, Evidence: ev}
	}
	low, high := testID(1), testID(2) // by id, low comes first
	tests := []struct {
		name      string
		low, high *Recalled
		highFirst bool
	}{
		{"higher score", rec(low, 0.5, 0, Evidence{zVector: 9}), rec(high, 0.6, 0, Evidence{}), true},
		{"fewer hops", rec(low, 0.5, 1, Evidence{zVector: 9}), rec(high, 0.5, 0, Evidence{}), true},
		{"more deviations on the better side", rec(low, 0.5, 0, Evidence{zVector: 2, zLexical: 3, Vector: 0.9}), rec(high, 0.5, 0, Evidence{zVector: 4, zLexical: math.Inf(-1)}), true},
		{"gate off: higher cosine", rec(low, 0.5, 0, Evidence{Vector: 0.3, Lexical: 9}), rec(high, 0.5, 0, Evidence{Vector: 0.4}), true},
		{"more lexical evidence", rec(low, 0.5, 0, Evidence{Vector: 0.3, Lexical: 2}), rec(high, 0.5, 0, Evidence{Vector: 0.3, Lexical: 4}), true},
		{"all equal: id", rec(low, 0.5, 0, Evidence{zVector: 1, Vector: 0.3, Lexical: 2}), rec(high, 0.5, 0, Evidence{zVector: 1, Vector: 0.3, Lexical: 2}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compareRecalled(tt.high, tt.low) < 0; got != tt.highFirst {
				t.Errorf("%s first: %v, want %v", tt.high.Memory.Meta.ID, got, tt.highFirst)
			}
			if got := compareRecalled(tt.low, tt.high) > 0; got != tt.highFirst {
				t.Errorf("the order is not symmetric")
			}
		})
	}
}
