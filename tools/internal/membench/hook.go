package membench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/providers/fake"
)

// What a user waits for: the built forgemem binary run as Claude Code runs
// its prompt hook — a new process per prompt, the hook's JSON on stdin —
// over memory folders with a warm embedding cache and the offline
// provider, and the resident MCP server's memory_recall; beside each, the
// floor measured in the same loop.

// HookConfig sizes the hook measurements.
type HookConfig struct {
	// Sizes are the numbers of memories; Dims the vector dimensions
	// (memory.embedding_dimensions of the fake embedder). Every pair is
	// measured.
	Sizes, Dims []int
	// Prompts is how many prompts are timed per pair, after a warm-up.
	Prompts int
	// FirstRounds is how many times a new memory is written (forgemem
	// remember) and the next prompt timed, at FirstSize memories and the
	// first of Dims; 0 skips it.
	FirstRounds, FirstSize int
	// MCPRecalls is how many memory_recall calls are timed on the MCP
	// server, at FirstSize memories and the first of Dims; 0 skips it.
	MCPRecalls int
}

// DefaultHookConfig is the configuration of the published figures.
func DefaultHookConfig() HookConfig {
	return HookConfig{Sizes: []int{1_000, 10_000, 100_000}, Dims: []int{1024, 1536}, Prompts: 40, FirstRounds: 20, FirstSize: 10_000, MCPRecalls: 40}
}

// HookTargets are the goals of the hook figures.
var HookTargets = struct {
	P50Ms10000, P50Ms10000Wide, P50Ms100000Wide float64 // hook prompt p50: 10,000 at 1,024 (the offline default) and 1,536 dimensions; 100,000 at 1,536
	FirstVsP50                                  float64 // the first prompt after a new memory, at most this × the p50
}{50, 80, 300, 2}

// wideDim is the dimension whose keys carry a suffix.
const wideDim = 1536

// HookRun is the figures of one size and dimension.
type HookRun struct {
	Memories int `json:"memories"`
	Dim      int `json:"dim"`
	Prompts  int `json:"prompts"`
	// P50Ms and P95Ms are the hook's wall time, from the start of the
	// process to its exit.
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
	// FloorMs is the median floor: a Go binary that reads the same stdin
	// and exits (StartMs), plus one read of the bytes a prompt must touch
	// — the vectors, streamed from memory by every core (VectorsMs), and
	// the transcript and settings file read (FilesMs) — each measured
	// beside every prompt.
	FloorMs   float64 `json:"floor_ms"`
	StartMs   float64 `json:"floor_start_ms"`
	VectorsMs float64 `json:"floor_vectors_ms"`
	FilesMs   float64 `json:"floor_files_ms"`
	// Ratio is P50Ms over FloorMs.
	Ratio float64 `json:"ratio_vs_floor"`
	// FirstPromptMs is the median time of the first prompt after forgemem
	// remember wrote a new memory, and FirstVsP50 its ratio to P50Ms; 0
	// when not measured at this size.
	FirstPromptMs float64 `json:"first_prompt_ms,omitempty"`
	FirstVsP50    float64 `json:"first_prompt_ratio_vs_p50,omitempty"`
	// MCPRecallP50Ms is a memory_recall call's round trip on a running
	// forgemem mcp, MCPFloorMs one read of the vectors beside it, and
	// MCPRatio the first over the second; 0 when not measured.
	MCPRecallP50Ms float64 `json:"mcp_recall_p50_ms,omitempty"`
	MCPFloorMs     float64 `json:"mcp_floor_ms,omitempty"`
	MCPRatio       float64 `json:"mcp_ratio_vs_floor,omitempty"`
}

// HookFigures are the hook and MCP figures at the top level of a report,
// null when not measured.
type HookFigures struct {
	HookP50Ms1000       *float64 `json:"hook_prompt_p50_ms_1000"`
	HookP95Ms1000       *float64 `json:"hook_prompt_p95_ms_1000"`
	HookP50Ms10000      *float64 `json:"hook_prompt_p50_ms_10000"`
	HookP95Ms10000      *float64 `json:"hook_prompt_p95_ms_10000"`
	HookP50Ms100000     *float64 `json:"hook_prompt_p50_ms_100000"`
	HookP95Ms100000     *float64 `json:"hook_prompt_p95_ms_100000"`
	HookP50Ms1000Wide   *float64 `json:"hook_prompt_p50_ms_1000_1536"`
	HookP95Ms1000Wide   *float64 `json:"hook_prompt_p95_ms_1000_1536"`
	HookP50Ms10000Wide  *float64 `json:"hook_prompt_p50_ms_10000_1536"`
	HookP95Ms10000Wide  *float64 `json:"hook_prompt_p95_ms_10000_1536"`
	HookP50Ms100000Wide *float64 `json:"hook_prompt_p50_ms_100000_1536"`
	HookP95Ms100000Wide *float64 `json:"hook_prompt_p95_ms_100000_1536"`
	// HookFirstPromptMs10000 is the median time of the first prompt after
	// forgemem remember wrote a new memory, at 10,000 memories and the
	// first of HookConfig.Dims; its ratio is to the p50 of the same.
	HookFirstPromptMs10000    *float64 `json:"hook_first_prompt_ms_10000"`
	HookFirstPromptVsP5010000 *float64 `json:"hook_first_prompt_ratio_vs_p50_10000"`
	// MCPRecallP50Ms10000 is a memory_recall call's round trip on a
	// running forgemem mcp at 10,000 memories; its floor is one read of
	// the vectors.
	MCPRecallP50Ms10000        *float64 `json:"mcp_recall_p50_ms_10000"`
	MCPRecallFloorMs10000      *float64 `json:"mcp_recall_floor_ms_10000"`
	MCPRecallRatioVsFloor10000 *float64 `json:"mcp_recall_ratio_vs_floor_10000"`
	// HookRuns holds every size and dimension's figures, floors and
	// ratios.
	HookRuns []HookRun `json:"hook_runs"`
}

// set fills the top-level keys of run's size and dimension.
func (h *HookFigures) set(run HookRun) {
	p50, p95 := run.P50Ms, run.P95Ms
	switch key := fmt.Sprint(run.Memories, "/", run.Dim == wideDim); key {
	case "1000/false":
		h.HookP50Ms1000, h.HookP95Ms1000 = &p50, &p95
	case "10000/false":
		h.HookP50Ms10000, h.HookP95Ms10000 = &p50, &p95
	case "100000/false":
		h.HookP50Ms100000, h.HookP95Ms100000 = &p50, &p95
	case "1000/true":
		h.HookP50Ms1000Wide, h.HookP95Ms1000Wide = &p50, &p95
	case "10000/true":
		h.HookP50Ms10000Wide, h.HookP95Ms10000Wide = &p50, &p95
	case "100000/true":
		h.HookP50Ms100000Wide, h.HookP95Ms100000Wide = &p50, &p95
	}
	if run.Memories == 10_000 && run.Dim != wideDim {
		if run.FirstPromptMs > 0 {
			first, ratio := run.FirstPromptMs, run.FirstVsP50
			h.HookFirstPromptMs10000, h.HookFirstPromptVsP5010000 = &first, &ratio
		}
		if run.MCPRecallP50Ms > 0 {
			mcp, floor, ratio := run.MCPRecallP50Ms, run.MCPFloorMs, run.MCPRatio
			h.MCPRecallP50Ms10000, h.MCPRecallFloorMs10000, h.MCPRecallRatioVsFloor10000 = &mcp, &floor, &ratio
		}
	}
	h.HookRuns = append(h.HookRuns, run)
}

// measureHooks builds the forgemem binary and a floor binary and measures
// every size and dimension of cfg.Hook.
func measureHooks(ctx context.Context, cfg Config, dir string, r *Report, progress func(string, ...any)) error {
	hc := cfg.Hook
	if len(hc.Sizes) == 0 || len(hc.Dims) == 0 {
		return nil
	}
	bins, err := buildBinaries(ctx, dir)
	if err != nil {
		return err
	}
	for _, dim := range hc.Dims {
		for _, n := range hc.Sizes {
			progress("prompt hook over %d memories, %d dimensions", n, dim)
			if err := measureHookSize(ctx, cfg, bins, dir, n, dim, r); err != nil {
				return fmt.Errorf("prompt hook at %d memories, %d dimensions: %w", n, dim, err)
			}
		}
	}
	return nil
}

// binaries are the programs a hook measurement runs.
type binaries struct {
	forgemem string // the command, built from the workspace
	floor    string // a Go program that reads its stdin and exits
}

// floorProgram is the floor's program: the least a hook process does.
const floorProgram = `package main

import (
	"io"
	"os"
)

func main() { _, _ = io.Copy(io.Discard, os.Stdin) }
`

// buildBinaries builds forgemem (through the repository's go.work, as a
// developer's go build does) and the floor program into dir.
func buildBinaries(ctx context.Context, dir string) (*binaries, error) {
	if _, err := goWork(ctx); err != nil {
		return nil, err
	}
	b := &binaries{forgemem: filepath.Join(dir, "bin", "forgemem"), floor: filepath.Join(dir, "bin", "floor")}
	build := exec.CommandContext(ctx, "go", "build", "-o", b.forgemem, "github.com/forgemem/forgemem/cmd/forgemem")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building forgemem: %w\n%s", err, out)
	}
	src := filepath.Join(dir, "floorsrc")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(floorProgram), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module floor\n\ngo 1.24\n"), 0o644); err != nil {
		return nil, err
	}
	build = exec.CommandContext(ctx, "go", "build", "-o", b.floor, ".")
	build.Dir, build.Env = src, append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the floor program: %w\n%s", err, out)
	}
	return b, nil
}

// errNoWorkspace: the forgemem command is built from the repository's
// go.work, which this go command does not use.
var errNoWorkspace = errors.New("the prompt hook is measured with forgemem built from the repository's go.work; run membench inside the repository, without GOWORK=off")

// goWork returns the go.work file the go command uses here.
func goWork(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOWORK").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOWORK: %w", err)
	}
	work := strings.TrimSpace(string(out))
	if work == "" || work == "off" {
		return "", errNoWorkspace
	}
	return work, nil
}

// place is a person's machine for one size and dimension: a home with
// forgemem's settings, a repository with its memories, a session's
// transcript, and a short temporary folder for the recall server's socket.
type place struct {
	bins       *binaries
	home, repo string
	transcript string
	config     string
	tmp        string
}

// newPlace writes n memories and warms their embedding cache at dim
// dimensions.
func newPlace(ctx context.Context, bins *binaries, dir string, n, dim int) (*place, error) {
	root := filepath.Join(dir, fmt.Sprintf("hook-%d-%d", n, dim))
	p := &place{bins: bins, home: filepath.Join(root, "home"), repo: filepath.Join(root, "repo")}
	p.config = filepath.Join(p.home, ".forge", "config.yaml")
	p.transcript = filepath.Join(p.home, ".claude", "projects", "repo", "session.jsonl")
	for _, d := range []string{filepath.Join(p.repo, ".git"), filepath.Dir(p.config), filepath.Dir(p.transcript)} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, err
		}
	}
	settings := fmt.Sprintf("memory:\n  provider: fake\n  embedding_dimensions: %d\n", dim)
	if err := os.WriteFile(p.config, []byte(settings), 0o600); err != nil {
		return nil, err
	}
	if err := writeTranscript(p.transcript, conversation(8, 42)); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "mbh") // short: a socket's path is at most 107 bytes
	if err != nil {
		return nil, err
	}
	p.tmp = tmp
	store, err := memcore.NewFileStore(filepath.Join(p.repo, ".forge", "memory"), filepath.Join(p.home, ".forge", "memory"), memcore.FileStoreConfig{})
	if err != nil {
		return nil, err
	}
	if _, err := writeCorpus(store, n); err != nil {
		return nil, err
	}
	emb, err := fake.NewEmbedder(fake.EmbedderConfig{Dimension: dim})
	if err != nil {
		return nil, err
	}
	warm, err := memretrieve.NewEngine(store, emb, nil, identity(memretrieve.DefaultConfig()))
	if err != nil {
		return nil, err
	}
	return p, warm.Rebuild(ctx)
}

// close stops the place's servers and removes its temporary folder.
func (p *place) close() {
	_, _ = p.run(context.Background(), "", "recall-server", "--stop")
	p.waitServer(context.Background(), false)
	_ = os.RemoveAll(p.tmp)
}

// writeTranscript writes msgs as a Claude Code transcript.
func writeTranscript(path string, msgs []memcore.Message) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, m := range msgs {
		line := map[string]any{"type": string(m.Role), "message": map[string]any{"role": string(m.Role), "content": m.Content}}
		if m.Role == memcore.RoleAssistant {
			line["message"] = map[string]any{"role": "assistant", "content": []map[string]string{{"type": "text", "text": m.Content}}}
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}

// env is the environment of the place's commands.
func (p *place) env() []string {
	return []string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + p.tmp}
}

// run runs forgemem in the repository with stdin and returns its output.
func (p *place) run(ctx context.Context, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, p.bins.forgemem, args...)
	cmd.Dir, cmd.Env = p.repo, p.env()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("forgemem %s: %w: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), nil
}

// payload is the UserPromptSubmit hook's input for a prompt.
func (p *place) payload(prompt string) string {
	b, _ := json.Marshal(map[string]string{"session_id": "3f2a9c1e-7b4d-4c2a-9e8f-1a2b3c4d5e6f", "transcript_path": p.transcript,
		"cwd": p.repo, "hook_event_name": "UserPromptSubmit", "prompt": prompt})
	return string(b)
}

// timedRun runs a program with stdin and returns its wall time in
// milliseconds and its output.
func timedRun(ctx context.Context, dir string, env []string, stdin string, path string, args ...string) (float64, string, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	d := float64(time.Since(start).Nanoseconds()) / 1e6
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w: %s", filepath.Base(path), err, errOut.String())
	}
	return d, out.String(), nil
}

// hook times one prompt's hook and checks that it recalled something
// (else the figure would not be of a recall).
func (p *place) hook(ctx context.Context, prompt string) (float64, string, error) {
	d, out, err := timedRun(ctx, p.repo, p.env(), p.payload(prompt), p.bins.forgemem, "hook", "claude-code")
	if err == nil && !strings.Contains(out, "recalled_memories") {
		err = fmt.Errorf("the prompt %q recalled nothing: the measurement would not be of a recall", prompt)
	}
	return d, out, err
}

// waitServer waits until the place's recall server answers (running) or
// no longer does, for at most two minutes.
func (p *place) waitServer(ctx context.Context, running bool) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := p.run(ctx, "", "recall-server", "--status", "--json")
		var st struct {
			Running bool   `json:"running"`
			Reason  string `json:"reason"`
		}
		if err == nil {
			err = json.Unmarshal([]byte(out), &st)
		}
		if err == nil && st.Running == running {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the recall server's state stayed running=%v for two minutes (%v %s)", !running, err, st.Reason)
		}
		time.Sleep(50 * time.Millisecond) // a process of its own: nothing to wait on but its answer
	}
}

// measureHookSize measures the prompts (and, at FirstSize, the first
// prompt after a write and the MCP server) of one size and dimension.
func measureHookSize(ctx context.Context, cfg Config, bins *binaries, dir string, n, dim int, r *Report) error {
	p, err := newPlace(ctx, bins, dir, n, dim)
	if err != nil {
		return err
	}
	defer p.close()
	// The first prompt starts the server, and recalls in its own process
	// (with many memories, it may give up at the hook's deadline).
	if _, _, err := timedRun(ctx, p.repo, p.env(), p.payload("warm up the recall server"), p.bins.forgemem, "hook", "claude-code"); err != nil {
		return err
	}
	if err := p.waitServer(ctx, true); err != nil {
		return err
	}
	// The vectors a search reads: written, so that reading them reads
	// memory (pages never written all map the one zero page).
	block := make([]float32, n*dim)
	for i := range block {
		block[i] = float32(i%1024) / 1024
	}
	run, err := p.prompts(ctx, cfg.Hook.Prompts, block)
	if err != nil {
		return err
	}
	run.Memories, run.Dim = n, dim
	if n == cfg.Hook.FirstSize && dim == cfg.Hook.Dims[0] {
		if err := p.firstPrompts(ctx, cfg.Hook.FirstRounds, run); err != nil {
			return err
		}
		if err := p.mcpRecalls(ctx, cfg.Hook.MCPRecalls, block, run); err != nil {
			return err
		}
	}
	r.HookFigures.set(*run)
	return nil
}

// prompts times count prompts, each beside its floor.
func (p *place) prompts(ctx context.Context, count int, block []float32) (*HookRun, error) {
	var hooks, floors, starts, vectors, files []float64
	topics := conversation(count, 7)
	for i := range count {
		d, _, err := p.hook(ctx, topics[i].Content)
		if err != nil {
			return nil, err
		}
		hooks = append(hooks, d)
		start, _, err := timedRun(ctx, p.repo, p.env(), p.payload(topics[i].Content), p.bins.floor)
		if err != nil {
			return nil, err
		}
		vec, err := timed(func() error { streamFloor(block); return nil })
		if err != nil {
			return nil, err
		}
		fr, err := timed(func() error { return readFiles(p.transcript, p.config) })
		if err != nil {
			return nil, err
		}
		starts, vectors, files = append(starts, start), append(vectors, vec/1e6), append(files, fr/1e6)
		floors = append(floors, start+vec/1e6+fr/1e6)
	}
	slices.Sort(hooks)
	run := &HookRun{Prompts: count, P50Ms: percentile(hooks, 50), P95Ms: percentile(hooks, 95),
		FloorMs: median(floors), StartMs: median(starts), VectorsMs: median(vectors), FilesMs: median(files)}
	run.Ratio = run.P50Ms / run.FloorMs
	return run, nil
}

// readFiles reads the files a prompt's hook must read.
func readFiles(paths ...string) error {
	for _, path := range paths {
		if _, err := os.ReadFile(path); err != nil {
			return err
		}
	}
	return nil
}

// firstPrompts writes a new memory with forgemem remember, then times the
// prompt right after it, rounds times; the prompt must recall the new
// memory.
func (p *place) firstPrompts(ctx context.Context, rounds int, run *HookRun) error {
	if rounds == 0 {
		return nil
	}
	var times []float64
	topics := conversation(rounds, 13)
	for i := range rounds {
		// A memory about the prompt, which both rankings put first.
		token := fmt.Sprintf("quokka%d", i)
		text := fmt.Sprintf("Note %s: %s.", token, topics[i].Content)
		if _, err := p.run(ctx, "", "remember", text, "--scope", "repo", "--category", "project-conventions"); err != nil {
			return err
		}
		d, out, err := p.hook(ctx, topics[i].Content+" ("+token+")")
		if err != nil {
			return err
		}
		if !strings.Contains(out, text) {
			return fmt.Errorf("the prompt right after remember did not recall the new memory %q", text)
		}
		times = append(times, d)
	}
	run.FirstPromptMs = median(times)
	run.FirstVsP50 = run.FirstPromptMs / run.P50Ms
	return nil
}

// mcpRecalls times count memory_recall calls on a running forgemem mcp,
// after one that builds its index, each beside one read of the vectors.
func (p *place) mcpRecalls(ctx context.Context, count int, block []float32, run *HookRun) error {
	if count == 0 {
		return nil
	}
	c, err := startMCP(ctx, p)
	if err != nil {
		return err
	}
	defer c.close()
	topics := conversation(count+1, 9)
	var calls, floors []float64
	for i := range count + 1 {
		var text string
		d, err := timed(func() (err error) {
			text, err = c.recall(topics[i].Content)
			return err
		})
		if err != nil {
			return err
		}
		if !strings.Contains(text, "recalled_memories") {
			return fmt.Errorf("memory_recall of %q recalled nothing: %s", topics[i].Content, text)
		}
		if i == 0 {
			continue // the first call builds the index
		}
		f, _ := timed(func() error { streamFloor(block); return nil })
		calls, floors = append(calls, d/1e6), append(floors, f/1e6)
	}
	slices.Sort(calls)
	run.MCPRecallP50Ms, run.MCPFloorMs = percentile(calls, 50), median(floors)
	run.MCPRatio = run.MCPRecallP50Ms / run.MCPFloorMs
	return nil
}

// hookMisses lists the hook targets the figures miss.
func hookMisses(r *Report) []string {
	var out []string
	check := func(name string, got *float64, goal float64) {
		if got != nil && *got > goal {
			out = append(out, fmt.Sprintf("%s: %.1f ms (target ≤ %.0f ms)", name, *got, goal))
		}
	}
	check("hook prompt p50 at 10000 memories", r.HookP50Ms10000, HookTargets.P50Ms10000)
	check("hook prompt p50 at 10000 memories, 1536 dimensions", r.HookP50Ms10000Wide, HookTargets.P50Ms10000Wide)
	check("hook prompt p50 at 100000 memories, 1536 dimensions", r.HookP50Ms100000Wide, HookTargets.P50Ms100000Wide)
	if v := r.HookFirstPromptVsP5010000; v != nil && *v > HookTargets.FirstVsP50 {
		out = append(out, fmt.Sprintf("first prompt after a new memory at 10000: %.2f × the p50 (target ≤ %.0f×)", *v, HookTargets.FirstVsP50))
	}
	return out
}

// errNoMCPReply: the MCP server closed its output before answering.
var errNoMCPReply = errors.New("the MCP server ended before answering")
