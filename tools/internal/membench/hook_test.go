package membench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestHookFigures runs the prompt hook and MCP measurements at a small
// size through the built binary and checks that the report holds their
// keys, each beside a positive floor.
func TestHookFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgemem and runs it")
	}
	if _, err := goWork(context.Background()); err != nil {
		t.Skip(err) // the tools module tested alone has no forgemem to build
	}
	cfg := Config{Dir: t.TempDir(), HookOnly: true,
		Hook: HookConfig{Sizes: []int{1_000}, Dims: []int{32}, Prompts: 3, FirstRounds: 2, FirstSize: 1_000, MCPRecalls: 2}}
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
	for _, key := range []string{"hook_prompt_p50_ms_1000", "hook_prompt_p95_ms_1000", "hook_prompt_p50_ms_10000", "hook_prompt_p50_ms_10000_1536",
		"hook_prompt_p95_ms_100000_1536", "hook_first_prompt_ms_10000", "mcp_recall_p50_ms_10000", "hook_runs", "targets_missed"} {
		if _, ok := obj[key]; !ok {
			t.Errorf("the JSON report has no key %q", key)
		}
	}
	if obj["hook_prompt_p50_ms_10000"] != nil || obj["hook_first_prompt_ms_10000"] != nil {
		t.Errorf("a size the run did not measure must be null: %s", data)
	}
	if len(r.HookRuns) != 1 {
		t.Fatalf("%d runs, want 1", len(r.HookRuns))
	}
	run := r.HookRuns[0]
	checks := []struct {
		name string
		ok   bool
	}{
		{"the key of the size measured", r.HookP50Ms1000 != nil && *r.HookP50Ms1000 == run.P50Ms},
		{"percentiles ordered", run.P50Ms > 0 && run.P50Ms <= run.P95Ms},
		// Each floor is the sum of its parts, so the median floor is at
		// least the median of each part — not their sum: the medians of
		// the parts may come from different prompts.
		{"the floor and its parts", run.FloorMs > 0 && run.StartMs > 0 && run.VectorsMs > 0 && run.FilesMs > 0 &&
			run.FloorMs >= max(run.StartMs, run.VectorsMs, run.FilesMs)},
		{"the ratio", run.Ratio > 0},
		{"the first prompt after a write", run.FirstPromptMs > 0 && run.FirstVsP50 > 0},
		{"the MCP recall", run.MCPRecallP50Ms > 0 && run.MCPFloorMs > 0 && run.MCPRatio > 0},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: no (report %s)", c.name, data)
		}
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r, "go run ./tools/cmd/membench -hook"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## What a prompt waits for", "| 1000 | 32 | 3 |", "memory_recall", "first prompt after"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the page lacks %q:\n%s", want, md.String())
		}
	}
}

func TestHookMisses(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := &Report{HookFigures: HookFigures{HookP50Ms10000: f(60), HookP50Ms10000Wide: f(70), HookP50Ms100000Wide: f(310), HookFirstPromptVsP5010000: f(2.5)}}
	got := strings.Join(hookMisses(r), "\n")
	for _, want := range []string{"p50 at 10000 memories: 60.0 ms", "100000 memories, 1536 dimensions: 310.0 ms", "2.50 × the p50"} {
		if !strings.Contains(got, want) {
			t.Errorf("misses lacks %q; got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "10000 memories, 1536") {
		t.Errorf("a met target reported:\n%s", got)
	}
}
