package membench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/tools/internal/embedserver"
)

// tiny is a run small enough for the race detector.
func tiny() Config {
	return Config{SearchSizes: []int{300, 1_000}, Dim: 32, K: 5, Queries: 3, Memories: 150, Trials: 1, Retrieves: 5,
		RecallDocs: 500, RecallQueries: 20, SessionTurns: 60}
}

// TestRunReportsEveryFigure runs the whole harness at tiny sizes and checks
// that the report holds every key the performance issue names and that the
// invariants the targets rest on hold: exact top-k, no embedding at a cold
// start, one text embedded after one new memory, the classifier's list
// within its budget, one allocation per OnTurnComplete.
func TestRunReportsEveryFigure(t *testing.T) {
	cfg := tiny()
	cfg.Dir = t.TempDir()
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{
		"search_1000_ratio_vs_chromem", "search_10000_ratio_vs_chromem", "search_100000_ratio_vs_chromem",
		"search_10000_ratio_vs_stream_floor", "search_100000_ratio_vs_stream_floor", "search_topk_matches_exact",
		"quantized_recall_at_10", "index_bytes_per_memory", "capture_new_tokens_per_turn", "capture_prefix_shared_ratio",
		"coldstart_10000_embed_inputs", "coldstart_10000_ratio_vs_read_floor", "rebuild_one_new_embed_inputs",
		"capture_prompt_tokens_10000", "capture_prompt_budget_tokens", "retrieve_10000_p99_ms", "targets_missed",
	} {
		if _, ok := obj[key]; !ok {
			t.Errorf("the JSON report has no key %q", key)
		}
	}
	if obj["search_100000_ratio_vs_chromem"] != nil {
		t.Errorf("a size the run did not measure must be null, got %v", obj["search_100000_ratio_vs_chromem"])
	}
	if r.Search1000RatioVsChromem == nil || *r.Search1000RatioVsChromem <= 0 {
		t.Errorf("search_1000_ratio_vs_chromem = %v, want a positive ratio", r.Search1000RatioVsChromem)
	}
	if len(r.Search) != 2 {
		t.Fatalf("%d search results, want 2", len(r.Search))
	}
	for _, s := range r.Search {
		if s.OursNs <= 0 || s.ChromemNs <= 0 || s.StreamFloorNs <= 0 || s.QuantizedNs <= 0 || s.RatioVsChromem <= 0 || s.RatioVsStreamFloor <= 0 || s.QuantizedRatioVsStreamFloor <= 0 {
			t.Errorf("search at %d: a time or ratio is not positive: %+v", s.Docs, s)
		}
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"top-k equals the exact search", r.SearchTopKMatchesExact},
		{"no text embedded at a cold start with a warm cache", r.ColdStartEmbedInputs == 0},
		{"one text embedded after one new memory", r.RebuildOneNewEmbedInputs == 1},
		{"cold start and floor measured", r.ColdStartMs > 0 && r.ColdStartReadFloorMs > 0},
		{"the classifier's list within its budget", r.CapturePromptTokens > 0 && r.CapturePromptTokens <= r.CapturePromptBudgetTokens},
		{"the whole prompt holds more than the list", r.CaptureWholePromptTokens > r.CapturePromptTokens},
		{"OnTurnComplete measured", r.CaptureTurnNs > 0 && r.CaptureTurnAllocs <= 1},
		{"retrieval percentiles ordered", r.RetrieveP50Ms > 0 && r.RetrieveP50Ms <= r.RetrieveP99Ms},
		{"identity retrieval measured", r.RetrieveIdentityP50Ms > 0 && r.RetrieveIdentityP50Ms <= r.RetrieveIdentityP99Ms},
		{"quantised recall measured", r.QuantizedRecallAt10 > 0.9 && r.QuantizedRecallAt10 <= 1 && r.QuantizedRecallAt10Real == nil},
		{"a quantised index smaller than the float32 one", r.IndexBytesPerMemory.Quantized > 0 && r.IndexBytesPerMemory.Quantized < r.IndexBytesPerMemory.Float32},
		{"a float32 index holds at least its vectors", r.IndexBytesPerMemory.Float32 >= float64(r.IndexBytesPerMemory.Float32Vector)},
		{"the lexical index takes some of the index's memory", r.IndexBytesPerMemory.Lexical > 0 && r.IndexBytesPerMemory.Lexical < r.IndexBytesPerMemory.Quantized},
		{"quantising shrinks the vector index more than the whole", r.IndexBytesPerMemory.VectorRatio < r.IndexBytesPerMemory.Ratio},
		{"the capture session has a pass per turn", r.Session.Passes == r.Session.Turns && r.SessionFreshStore.Passes == r.Session.Turns},
		{"the capture session's prompts share a prefix", r.CapturePrefixSharedRatio > 0 && r.CapturePrefixSharedRatio < 1 && r.CaptureNewTokensPerTurn > 0},
		{"the window stepped forward in the session", r.Session.WindowSteps > 0},
		{"the pinned list changed only where the window stepped", r.Session.ListChanges > 0 && r.Session.ListChanges <= r.Session.WindowSteps},
		{"memories were listed as added since the list was pinned", r.Session.AddedSinceTokensPerPass > 0 && r.SessionFreshStore.AddedSinceTokensPerPass > 0},
		{"the session wrote memories", r.Session.MemoriesWritten > 0 && r.SessionFreshStore.MemoriesWritten > 0},
		{"vector-only retrieval measured", r.Lexical.RetrieveVectorOnlyP50Ms > 0 && r.Lexical.RetrieveVectorOnlyP50Ms <= r.Lexical.RetrieveVectorOnlyP99Ms &&
			r.Lexical.RetrieveIdentityVectorOnlyP50Ms > 0 && r.Lexical.RetrieveIdentityVectorOnlyP50Ms <= r.Lexical.RetrieveIdentityVectorOnlyP99Ms},
		{"anchors extracted", r.Anchors.Memories == cfg.Memories && r.Anchors.AnchorsPerMemory >= 1 && r.Anchors.ExtractP50Ms > 0 &&
			r.Anchors.ExtractP50Ms <= r.Anchors.ExtractP99Ms && r.Anchors.ExtractWalkP50Ms > 0},
		{"stale memories found and checked per turn", r.Anchors.StaleMemories > 0 && r.Anchors.CheckedPerTurn > 0 && r.Anchors.StalePerTurn > 0 &&
			r.Anchors.CheckTurnP50Ms > 0 && r.Anchors.CheckTurnP50Ms <= r.Anchors.CheckTurnP99Ms && r.Anchors.CheckFirstTurnMs > 0 && r.Anchors.CheckAllMs > 0},
		{"lexical index measured", r.Lexical.Memories == cfg.Memories && r.Lexical.BuildMs > 0 && r.Lexical.QueryP50Ms > 0 && r.Lexical.QueryP50Ms <= r.Lexical.QueryP99Ms},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: no (report %s)", c.name, data)
		}
	}

	var md bytes.Buffer
	if err := WriteMarkdown(&md, r, "go run ./tools/cmd/membench -test"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Performance", "go run ./tools/cmd/membench -test", "| 1000 |", "cold start / read floor", "OnTurnComplete", "p99",
		"stream floor", "recall@5 of the quantised index", "bytes per memory", "new tokens per turn", "## Lexical index", "`identity`, vector only", "## Anchors", "check per turn"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the performance page lacks %q", want)
		}
	}
}

func TestMissesNamesEachMissedTarget(t *testing.T) {
	r := &Report{
		Search:                    []SearchResult{{Docs: 10_000, RatioVsChromem: 0.7, RatioVsStreamFloor: 1.2}, {Docs: 100_000, RatioVsChromem: 0.3, RatioVsStreamFloor: 1.4}, {Docs: 1_000, RatioVsChromem: 0.9}},
		SearchTopKMatchesExact:    true,
		ColdStartRatioVsReadFloor: 6,
		RebuildOneNewEmbedInputs:  1,
		QuantizedRecallAt10:       0.98,
		CaptureNewTokensPerTurn:   2400,
		CapturePrefixSharedRatio:  0.7,
		Anchors:                   Anchors{Memories: 10, StaleMemories: 1, CheckTurnP99Ms: 1.5},
	}
	got := strings.Join(misses(r), "\n")
	for _, want := range []string{"search at 10000: 0.70 × chromem-go", "cold start: 6.00 × the read floor", "search at 100000: 1.40 × the stream floor",
		"recall@10 0.9800", "0.70 of the prompt tokens shared", "anchors: checking a turn's memories takes 1.50 ms at p99"} {
		if !strings.Contains(got, want) {
			t.Errorf("misses lacks %q; got:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"search at 1000:", "search at 10000: 1.20", "embedded", "new prompt tokens"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("misses reports %q, which was met or is not a target; got:\n%s", unwanted, got)
		}
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ p, want float64 }{{50, 5}, {99, 10}, {10, 1}, {100, 10}} {
		if got := percentile(xs, c.p); got != c.want {
			t.Errorf("percentile(1..10, %v) = %v, want %v", c.p, got, c.want)
		}
	}
	if median([]float64{3, 1, 2}) != 2 || median([]float64{4, 1, 3, 2}) != 2.5 {
		t.Errorf("median is wrong")
	}
}

// TestMADialTexts: every memory's event and every dialogue line are
// documents; the dialogues up to their test turn and the lines are the
// queries.
func TestMADialTexts(t *testing.T) {
	docs, queries, err := madialTexts(-1)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 160+1439 || len(queries) != 1439+160 {
		t.Fatalf("%d documents and %d queries, want 1599 and 1599", len(docs), len(queries))
	}
	for _, d := range docs {
		if strings.TrimSpace(d) == "" || strings.Contains(d, "<BOD>") || strings.Contains(d, "<EOD>") {
			t.Fatalf("document %q", d)
		}
	}
	if docs[0] != "Bart danced at the Christmas party and felt very happy." {
		t.Errorf("first document %q", docs[0])
	}
}

// TestRecallOnRealEmbeddings measures the quantised index's recall over
// some MADial-Bench texts embedded by tools/embedserver; it skips without
// node, unless embedserver.RequireEnv is set.
func TestRecallOnRealEmbeddings(t *testing.T) {
	if testing.Short() {
		t.Skip("starts tools/embedserver")
	}
	cfg := tiny()
	cfg.RealTexts = 160
	r := &Report{}
	if err := measureRecall(context.Background(), cfg, r, func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	if r.QuantizedRecallAt10Real == nil {
		if os.Getenv(embedserver.RequireEnv) == "" {
			t.Skipf("no real embeddings: %s", r.Recall.RealSkipped)
		}
		t.Fatalf("no real embeddings: %s", r.Recall.RealSkipped)
	}
	if got := *r.QuantizedRecallAt10Real; got < 0.95 || got > 1 {
		t.Errorf("recall@%d on real embeddings = %v, want at least 0.95", cfg.K, got)
	}
	if r.Recall.RealDocs != 160 || r.Recall.RealDim != embedserver.Dimension || r.Recall.RealCandidates["8"] < r.Recall.RealCandidates["1"] {
		t.Errorf("recall details: %+v", r.Recall)
	}
	if r.QuantizedRecallAt10 > *r.QuantizedRecallAt10Real || r.QuantizedRecallAt10 > r.QuantizedRecallAt10Clustered {
		t.Errorf("quantized_recall_at_10 = %v is not the lower of %v and %v", r.QuantizedRecallAt10, *r.QuantizedRecallAt10Real, r.QuantizedRecallAt10Clustered)
	}
}
