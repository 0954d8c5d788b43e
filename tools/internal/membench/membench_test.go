package membench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// tiny is a run small enough for the race detector.
func tiny() Config {
	return Config{SearchSizes: []int{300, 1_000}, Dim: 32, K: 5, Queries: 3, Memories: 150, Trials: 1, Retrieves: 5}
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
		"search_10000_ratio_vs_floor", "search_100000_ratio_vs_floor", "search_topk_matches_exact",
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
		if s.OursNs <= 0 || s.ChromemNs <= 0 || s.FloorNs <= 0 || s.RatioVsChromem <= 0 || s.RatioVsFloor <= 0 {
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
		{"vector-only retrieval measured", r.Lexical.RetrieveVectorOnlyP50Ms > 0 && r.Lexical.RetrieveVectorOnlyP50Ms <= r.Lexical.RetrieveVectorOnlyP99Ms &&
			r.Lexical.RetrieveIdentityVectorOnlyP50Ms > 0 && r.Lexical.RetrieveIdentityVectorOnlyP50Ms <= r.Lexical.RetrieveIdentityVectorOnlyP99Ms},
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
	for _, want := range []string{"# Performance", "go run ./tools/cmd/membench -test", "| 1000 |", "cold start / read floor", "OnTurnComplete", "p99", "## Lexical index", "`identity`, vector only"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the performance page lacks %q", want)
		}
	}
}

func TestMissesNamesEachMissedTarget(t *testing.T) {
	r := &Report{
		Search:                    []SearchResult{{Docs: 10_000, RatioVsChromem: 0.7, RatioVsFloor: 1.2}, {Docs: 1_000, RatioVsChromem: 0.9}},
		SearchTopKMatchesExact:    true,
		ColdStartRatioVsReadFloor: 6,
		RebuildOneNewEmbedInputs:  1,
	}
	got := strings.Join(misses(r), "\n")
	for _, want := range []string{"search at 10000: 0.70 × chromem-go", "cold start: 6.00 × the read floor"} {
		if !strings.Contains(got, want) {
			t.Errorf("misses lacks %q; got:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"search at 1000:", "floor (target ≤ 1.5)", "embedded"} {
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
