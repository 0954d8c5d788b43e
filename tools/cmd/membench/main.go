// Command membench measures forgemem's performance against a peer
// (github.com/philippgille/chromem-go) and against the hardware floor, and
// prints every figure of one run.
//
// Usage:
//
//	go run ./tools/cmd/membench [-json] [-markdown FILE] [-quick] [-anchors] [-hook]
//
// With -json it prints one JSON object with every figure; with -markdown it
// also writes the performance page (docs/PERFORMANCE.md) from the same run,
// and the JSON beside it (membench.json). With -anchors it measures only the
// memories' anchors (extraction, and the stale check per turn) and prints
// their section. Progress goes to standard error.
// -quick runs small sizes, for trying the command out; published figures
// come from a full run. -hook measures only what a user waits for: the
// built forgemem binary run as Claude Code's prompt hook, a new process
// per prompt, at 1,000 to 100,000 memories (the figures of that part of a
// full run), and the MCP server's recall.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/forgemem/forgemem/tools/internal/membench"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "membench:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("membench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the figures as one JSON object")
	markdown := fs.String("markdown", "", "also write the performance page to this file, and membench.json beside it")
	quick := fs.Bool("quick", false, "small sizes, for trying the command out")
	quiet := fs.Bool("q", false, "no progress on standard error")
	anchorsOnly := fs.Bool("anchors", false, "measure only the anchors: their extraction and the stale check per turn")
	hook := fs.Bool("hook", false, "measure only the prompt hook (a new forgemem process per prompt) and the MCP server's recall")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *anchorsOnly && *markdown != "" {
		return fmt.Errorf("-anchors measures one part and -markdown writes the whole page: run them apart")
	}
	cfg := membench.DefaultConfig()
	if *quick {
		cfg = membench.QuickConfig()
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	cfg.HookOnly = *hook
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *anchorsOnly {
		return runAnchors(ctx, cfg, args, *asJSON, stdout)
	}
	r, err := membench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if *asJSON {
		if _, err := fmt.Fprintf(stdout, "%s\n", data); err != nil {
			return err
		}
	} else {
		if err := membench.WriteMarkdown(stdout, r, commandLine(args)); err != nil {
			return err
		}
	}
	if *markdown != "" {
		f, err := os.Create(*markdown)
		if err != nil {
			return err
		}
		if err := membench.WriteMarkdown(f, r, commandLine(args)); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(*markdown), "membench.json"), append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// runAnchors measures the anchors alone and prints their figures.
func runAnchors(ctx context.Context, cfg membench.Config, args []string, asJSON bool, stdout io.Writer) error {
	r, err := membench.RunAnchors(ctx, cfg)
	if err != nil {
		return err
	}
	if !asJSON {
		return membench.WriteAnchorsMarkdown(stdout, r, commandLine(args))
	}
	data, err := json.MarshalIndent(struct {
		Machine membench.Machine `json:"machine"`
		Anchors membench.Anchors `json:"anchors"`
		Misses  []string         `json:"targets_missed"`
	}{r.Machine, r.Anchors, r.Misses}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", data)
	return err
}

func commandLine(args []string) string {
	return strings.Join(append([]string{"go run ./tools/cmd/membench"}, args...), " ")
}
