package membench

import (
	"fmt"
)

// hookTargetRows writes the hook targets' rows of the targets table.
func hookTargetRows(p func(string, ...any), r *Report) {
	row := func(name string, got *float64, goal float64) {
		if got != nil {
			p("| %s | ≤ %.0f ms | %.1f ms | %s |\n", name, goal, *got, yes(*got <= goal))
		}
	}
	row("prompt hook p50 at 10000 memories", r.HookP50Ms10000, HookTargets.P50Ms10000)
	row("prompt hook p50 at 10000 memories, 1536 dimensions", r.HookP50Ms10000Wide, HookTargets.P50Ms10000Wide)
	row("prompt hook p50 at 100000 memories, 1536 dimensions", r.HookP50Ms100000Wide, HookTargets.P50Ms100000Wide)
	if v := r.HookFirstPromptVsP5010000; v != nil {
		p("| first prompt after a new memory at 10000, vs the p50 | ≤ %.0f× | %.2f× | %s |\n", HookTargets.FirstVsP50, *v, yes(*v <= HookTargets.FirstVsP50))
	}
}

// writeHookMarkdown writes the section of the prompt hook and the MCP
// server's recall.
func writeHookMarkdown(p func(string, ...any), r *Report) {
	if len(r.HookRuns) == 0 {
		return
	}
	p("## What a prompt waits for\n\n")
	p("The built `forgemem` binary run as Claude Code runs its `UserPromptSubmit` hook: a new process per\n")
	p("prompt, the hook's JSON on stdin (a prompt, a session id, a transcript of 8 messages, the\n")
	p("folder), the offline `fake` provider at the dimension given (`memory.embedding_dimensions`) and a\n")
	p("warm embedding cache. The first prompt starts the recall server (`forgemem recall-server`);\n")
	p("the prompts timed are answered by it. Times are wall times from the process's start to its exit.\n")
	p("The *floor* is measured beside every prompt: a Go program that reads the same stdin and exits,\n")
	p("plus one read of what a prompt must touch — the vectors, read from memory once by every core,\n")
	p("and the transcript and settings files.\n\n")
	p("| memories | dimensions | prompts | p50 | p95 | floor | of which: start, vectors, files | p50 / floor |\n")
	p("|---:|---:|---:|---:|---:|---:|---|---:|\n")
	for _, run := range r.HookRuns {
		p("| %d | %d | %d | %.1f ms | %.1f ms | %.1f ms | %.1f, %.2f, %.2f ms | %.2f× |\n", run.Memories, run.Dim, run.Prompts,
			run.P50Ms, run.P95Ms, run.FloorMs, run.StartMs, run.VectorsMs, run.FilesMs, run.Ratio)
	}
	p("\n")
	for _, run := range r.HookRuns {
		if run.FirstPromptMs > 0 {
			p("The first prompt after `forgemem remember` wrote a new memory, at %d memories and %d\n", run.Memories, run.Dim)
			p("dimensions (median of the rounds; each prompt recalled the new memory): **%.1f ms**, %.2f× the p50.\n\n", run.FirstPromptMs, run.FirstVsP50)
		}
		if run.MCPRecallP50Ms > 0 {
			p("`memory_recall` on a running `forgemem mcp` over stdio, at %d memories and %d dimensions: **%.2f ms**\n", run.Memories, run.Dim, run.MCPRecallP50Ms)
			p("at p50, %s× one read of the vectors (%.2f ms) measured beside each call.\n\n", fmt.Sprintf("%.2f", run.MCPRatio), run.MCPFloorMs)
		}
	}
}

// writeHookOnly writes the page of a run of the hook measurements alone.
func writeHookOnly(p func(string, ...any), r *Report) {
	p("## Targets\n\n")
	if len(r.Misses) == 0 {
		p("All targets of this part met.\n\n")
	} else {
		p("Targets missed:\n\n")
		for _, miss := range r.Misses {
			p("- %s\n", miss)
		}
		p("\n")
	}
	p("| target | goal | measured | met |\n|---|---|---|---|\n")
	hookTargetRows(p, r)
	p("\n")
	writeHookMarkdown(p, r)
}
