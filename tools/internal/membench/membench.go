package membench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Config sets the sizes of a run.
type Config struct {
	// SearchSizes are the numbers of documents of the search comparison.
	SearchSizes []int
	// Dim is the dimension of the vectors of the search comparison and of
	// the embedder of the engine measurements.
	Dim int
	// K is the number of results per search.
	K int
	// Queries is the number of queries per search size.
	Queries int
	// Memories is the size of the store of the cold-start, rebuild, capture
	// and retrieval measurements.
	Memories int
	// Trials is how many times the cold start and the rebuild are measured.
	Trials int
	// Retrieves is how many turns the retrieval latency is measured over.
	Retrieves int
	// RecallDocs and RecallQueries size the clustered synthetic data of
	// the quantised index's recall (of dimension Dim).
	RecallDocs, RecallQueries int
	// RealTexts is how many MADial-Bench texts are embedded with
	// tools/embedserver for the recall on real embeddings: all of them
	// when -1, none when 0 (the figure is then null).
	RealTexts int
	// SessionTurns is the length of the scripted capture session.
	SessionTurns int
	// Hook sizes the prompt hook and MCP measurements (see HookConfig);
	// its zero value measures none. HookOnly measures nothing else.
	Hook     HookConfig
	HookOnly bool
	// Dir is where the memory folders are made; "" means a new temporary
	// folder, removed afterwards.
	Dir string
	// Progress, if not nil, receives a line per step.
	Progress io.Writer
}

// DefaultConfig is the configuration of the published figures.
func DefaultConfig() Config {
	return Config{
		SearchSizes: []int{1_000, 10_000, 100_000},
		Dim:         1536,
		K:           10,
		Queries:     40,
		Memories:    10_000,
		Trials:      5,
		Retrieves:   300,

		RecallDocs:    10_000,
		RecallQueries: 200,
		RealTexts:     -1,
		SessionTurns:  100,
		Hook:          DefaultHookConfig(),
	}
}

// Targets are the goals the report checks the figures against.
var Targets = struct {
	SearchVsChromem     float64 // at most this × chromem-go's time, at 10,000 and 100,000 documents
	SearchVsStreamFloor float64 // at most this × the stream floor (every core reading the block)
	ColdStartVsFloor    float64 // at most this × reading the memory files
	QuantizedRecall     float64 // at least this recall@10 of the quantised index against the exact one
	CaptureNewTokens    float64 // at most this many new prompt tokens per turn in the scripted session
	CaptureSharedRatio  float64 // at least this share of each prompt's tokens shared with the previous one
}{0.5, 1.3, 5, 0.99, 2500, 0.8}

// Report is every figure of one run. Its JSON form is one object; the keys
// named by the performance issue are among its top-level fields (named for
// the published sizes: 10,000 memories, 1,000 to 100,000 documents), and
// the figures of every search size are in Search.
type Report struct {
	Machine Machine `json:"machine"`
	Config  struct {
		Dim      int  `json:"dim"`
		K        int  `json:"k"`
		Queries  int  `json:"queries"`
		Memories int  `json:"memories"`
		HookOnly bool `json:"hook_only,omitempty"`
	} `json:"config"`

	Search []SearchResult `json:"search"`

	// The ratios at the published sizes; null when a run did not measure
	// that size.
	Search1000RatioVsChromem   *float64 `json:"search_1000_ratio_vs_chromem"`
	Search10000RatioVsChromem  *float64 `json:"search_10000_ratio_vs_chromem"`
	Search100000RatioVsChromem *float64 `json:"search_100000_ratio_vs_chromem"`
	Search10000RatioVsStream   *float64 `json:"search_10000_ratio_vs_stream_floor"`
	Search100000RatioVsStream  *float64 `json:"search_100000_ratio_vs_stream_floor"`
	SearchTopKMatchesExact     bool     `json:"search_topk_matches_exact"`

	// QuantizedRecallAt10 is the lower of the two recalls below (the
	// clustered one alone when the real texts were not embedded).
	QuantizedRecallAt10          float64  `json:"quantized_recall_at_10"`
	QuantizedRecallAt10Clustered float64  `json:"quantized_recall_at_10_clustered"`
	QuantizedRecallAt10Real      *float64 `json:"quantized_recall_at_10_real"`
	Recall                       Recall   `json:"recall"`

	IndexBytesPerMemory IndexBytes `json:"index_bytes_per_memory"`

	ColdStartMs               float64 `json:"coldstart_10000_ms"`
	ColdStartReadFloorMs      float64 `json:"coldstart_10000_read_floor_ms"`
	ColdStartEmbedInputs      int     `json:"coldstart_10000_embed_inputs"`
	ColdStartRatioVsReadFloor float64 `json:"coldstart_10000_ratio_vs_read_floor"`

	RebuildOneNewEmbedInputs int     `json:"rebuild_one_new_embed_inputs"`
	RebuildOneNewMs          float64 `json:"rebuild_one_new_ms"`

	CaptureTurnNs             float64 `json:"capture_on_turn_complete_ns"`
	CaptureTurnAllocs         int64   `json:"capture_on_turn_complete_allocs"`
	CapturePromptTokens       int     `json:"capture_prompt_tokens_10000"`
	CapturePromptBudgetTokens int     `json:"capture_prompt_budget_tokens"`
	CaptureListedMemories     int     `json:"capture_prompt_listed_memories_10000"`
	CaptureWholePromptTokens  int     `json:"capture_whole_prompt_tokens_10000"`

	// The scripted capture session (over a store of Memories memories,
	// whose existing-memories list is full at every pass).
	CaptureNewTokensPerTurn  float64        `json:"capture_new_tokens_per_turn"`
	CapturePrefixSharedRatio float64        `json:"capture_prefix_shared_ratio"`
	Session                  SessionFigures `json:"capture_session"`
	// The same session over a store that starts empty.
	SessionFreshStore SessionFigures `json:"capture_session_fresh_store"`

	RetrieveP50Ms         float64 `json:"retrieve_10000_p50_ms"`
	RetrieveP99Ms         float64 `json:"retrieve_10000_p99_ms"`
	RetrieveIdentityP50Ms float64 `json:"retrieve_10000_identity_p50_ms"`
	RetrieveIdentityP99Ms float64 `json:"retrieve_10000_identity_p99_ms"`

	// Lexical holds the lexical index's figures, and Retrieve's with it
	// off, from the same run.
	Lexical Lexical `json:"lexical"`

	// Anchors holds the figures of memories' anchors: extraction per
	// memory written, and the check per turn, at Memories memories.
	Anchors Anchors `json:"anchors"`

	// HookFigures are what a user waits for: the prompt hook, a new
	// process per prompt, and the MCP server's recall (keys at the top
	// level).
	HookFigures

	// Misses lists each target the figures miss, with the figure.
	Misses []string `json:"targets_missed"`
}

// Machine describes where the figures were measured.
type Machine struct {
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUModel   string `json:"cpu_model,omitempty"`
	Date       string `json:"date"`
}

// Run measures everything and returns the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	r := &Report{Machine: machine()}
	r.Config.Dim, r.Config.K, r.Config.Queries, r.Config.Memories = cfg.Dim, cfg.K, cfg.Queries, cfg.Memories
	r.Config.HookOnly = cfg.HookOnly
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "membench: "+format+"\n", args...)
		}
	}
	dir, cleanup, err := workDir(cfg)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if cfg.HookOnly {
		if err := measureHooks(ctx, cfg, dir, r, progress); err != nil {
			return nil, err
		}
		r.Misses = append([]string{}, hookMisses(r)...)
		return r, nil
	}

	r.SearchTopKMatchesExact = true
	for _, n := range cfg.SearchSizes {
		progress("search over %d vectors of %d dimensions", n, cfg.Dim)
		s, err := measureSearch(ctx, n, cfg.Dim, cfg.K, cfg.Queries)
		if err != nil {
			return nil, fmt.Errorf("search at %d: %w", n, err)
		}
		r.Search = append(r.Search, *s)
		r.SearchTopKMatchesExact = r.SearchTopKMatchesExact && s.TopKMatchesExact
		switch n {
		case 1_000:
			r.Search1000RatioVsChromem = &s.RatioVsChromem
		case 10_000:
			r.Search10000RatioVsChromem, r.Search10000RatioVsStream = &s.RatioVsChromem, &s.RatioVsStreamFloor
		case 100_000:
			r.Search100000RatioVsChromem, r.Search100000RatioVsStream = &s.RatioVsChromem, &s.RatioVsStreamFloor
		}
		runtime.GC()
	}

	progress("recall@%d of the quantised index (%d clustered vectors of %d dimensions; real sentence embeddings)", cfg.K, cfg.RecallDocs, cfg.Dim)
	if err := measureRecall(ctx, cfg, r, progress); err != nil {
		return nil, fmt.Errorf("recall: %w", err)
	}
	runtime.GC()

	progress("engine over %d memory files (cold start, rebuild, retrieval)", cfg.Memories)
	if err := measureEngine(ctx, cfg, dir, r); err != nil {
		return nil, err
	}
	for _, step := range []struct {
		what, fail string
		run        func() error
	}{
		{fmt.Sprintf("lexical index over %d memory texts", cfg.Memories), "lexical index",
			func() error { return measureLexical(cfg, r) }},
		{fmt.Sprintf("anchors of %d memories", cfg.Memories), "anchors",
			func() error { return measureAnchors(ctx, cfg, dir, r, progress) }},
		{fmt.Sprintf("capture overhead and classifier prompt with %d memories", cfg.Memories), "capture",
			func() error { return measureCapture(ctx, cfg, r) }},
		{fmt.Sprintf("scripted capture session of %d turns", cfg.SessionTurns), "capture session",
			func() error { return measureSession(ctx, cfg, r) }},
	} {
		progress("%s", step.what)
		if err := step.run(); err != nil {
			return nil, fmt.Errorf("%s: %w", step.fail, err)
		}
	}
	runtime.GC()
	if err := measureHooks(ctx, cfg, dir, r, progress); err != nil {
		return nil, err
	}
	r.Misses = append(misses(r), hookMisses(r)...)
	return r, nil
}

// workDir is cfg.Dir, or a new temporary folder that cleanup removes.
func workDir(cfg Config) (dir string, cleanup func(), err error) {
	if cfg.Dir != "" {
		return cfg.Dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "membench-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// misses lists the targets the report's figures do not meet.
func misses(r *Report) []string {
	out := []string{}
	for _, s := range r.Search {
		if s.Docs < 10_000 {
			continue
		}
		if s.RatioVsChromem > Targets.SearchVsChromem {
			out = append(out, fmt.Sprintf("search at %d: %.2f × chromem-go's time (target ≤ %.1f)", s.Docs, s.RatioVsChromem, Targets.SearchVsChromem))
		}
		if s.RatioVsStreamFloor > Targets.SearchVsStreamFloor {
			out = append(out, fmt.Sprintf("search at %d: %.2f × the stream floor (target ≤ %.1f)", s.Docs, s.RatioVsStreamFloor, Targets.SearchVsStreamFloor))
		}
	}
	if !r.SearchTopKMatchesExact {
		out = append(out, "search: a top-k differed from the exact search")
	}
	if r.ColdStartRatioVsReadFloor > Targets.ColdStartVsFloor {
		out = append(out, fmt.Sprintf("cold start: %.2f × the read floor (target < %.0f)", r.ColdStartRatioVsReadFloor, Targets.ColdStartVsFloor))
	}
	if r.ColdStartEmbedInputs != 0 {
		out = append(out, fmt.Sprintf("cold start: %d texts embedded (target 0)", r.ColdStartEmbedInputs))
	}
	if r.RebuildOneNewEmbedInputs != 1 {
		out = append(out, fmt.Sprintf("rebuild after one new memory: %d texts embedded (target 1)", r.RebuildOneNewEmbedInputs))
	}
	if r.QuantizedRecallAt10 < Targets.QuantizedRecall {
		out = append(out, fmt.Sprintf("quantised index: recall@10 %.4f (target ≥ %.2f)", r.QuantizedRecallAt10, Targets.QuantizedRecall))
	}
	if r.CaptureNewTokensPerTurn > Targets.CaptureNewTokens {
		out = append(out, fmt.Sprintf("capture session: %.0f new prompt tokens per turn (target ≤ %.0f)", r.CaptureNewTokensPerTurn, Targets.CaptureNewTokens))
	}
	if r.CapturePrefixSharedRatio < Targets.CaptureSharedRatio {
		out = append(out, fmt.Sprintf("capture session: %.2f of the prompt tokens shared with the previous pass (target ≥ %.1f)", r.CapturePrefixSharedRatio, Targets.CaptureSharedRatio))
	}
	if r.CapturePromptTokens > r.CapturePromptBudgetTokens {
		out = append(out, fmt.Sprintf("capture: existing-memories list of %d tokens over its budget of %d", r.CapturePromptTokens, r.CapturePromptBudgetTokens))
	}
	out = append(out, anchorMisses(r)...)
	return append(out, lexicalMisses(r)...)
}

func machine() Machine {
	m := Machine{
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		CPUs:       runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Date:       time.Now().UTC().Format("2006-01-02"),
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// QuickConfig is a small run that takes seconds, for trying the command
// and for tests. Its figures are not the published ones.
func QuickConfig() Config {
	return Config{
		SearchSizes: []int{1_000, 10_000},
		Dim:         256,
		K:           10,
		Queries:     5,
		Memories:    1_000,
		Trials:      2,
		Retrieves:   20,

		RecallDocs:    2_000,
		RecallQueries: 50,
		RealTexts:     0,
		SessionTurns:  100,
		Hook:          HookConfig{Sizes: []int{1_000}, Dims: []int{256}, Prompts: 5, FirstRounds: 3, FirstSize: 1_000, MCPRecalls: 3},
	}
}
