// Command consumercheck checks that forgemem's modules can be used the way
// a stranger uses them after `go get` and `go install`: it publishes every
// module of the workspace except tools from the working tree into a module
// proxy on disk, at the version the modules require of each other, then,
// in a temporary folder outside the repository, with GOWORK=off, no replace
// directive and an empty module cache, builds and runs two consumers
// (testdata/):
//
//   - memcore-only imports memcore alone: its build list must have no
//     provider module and no provider SDK (go-openai, genai);
//   - retrieve-openai imports memcore, memretrieve and providers/openai: its
//     build list must have nothing of the Gemini provider (providers/gemini,
//     genai);
//
// and installs the forgemem command with go install
// github.com/forgemem/forgemem/cmd/forgemem@VERSION, runs `forgemem demo`
// with it, and checks with go version -m that no development harness (the
// benchmark peer chromem-go, the assembly generator avo, the tools module,
// the conformance suites) is built into it.
//
// Third-party modules come from the local module cache when it has them
// (scripts/test runs this after the other checks, which fill it), and from
// the fallback proxy otherwise.
//
// Usage:
//
//	go run ./tools/cmd/consumercheck [-v] [-keep DIR] [-fallback PROXIES]
//	go run ./tools/cmd/consumercheck -publish DIR
//
// -v prints every build list; -keep leaves the proxy and the consumers in
// DIR for a look; -fallback replaces the proxies tried after ours.
// -publish only publishes the modules into a proxy at DIR and prints its
// GOPROXY entry (file://DIR): scripts/test builds the command's module
// alone (GOWORK=off) against it.
// scripts/test runs it. It exits 1, printing each failing consumer's build
// list, when a check fails.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/forgemem/forgemem/tools/internal/consumercheck"
)

const repo = "github.com/forgemem/forgemem/"

//go:embed testdata
var consumerFiles embed.FS

// consumers are the programs built against the published modules.
func consumers() ([]consumercheck.Consumer, error) {
	sub := func(name string) (fs.FS, error) { return fs.Sub(consumerFiles, "testdata/"+name) }
	memcoreOnly, err := sub("memcore-only")
	if err != nil {
		return nil, err
	}
	retrieveOpenAI, err := sub("retrieve-openai")
	if err != nil {
		return nil, err
	}
	return []consumercheck.Consumer{
		{
			Name:     "memcore-only",
			Files:    memcoreOnly,
			Requires: []string{repo + "memcore"},
			Forbid: []string{
				repo + "providers/...",
				"github.com/sashabaranov/go-openai/...",
				"google.golang.org/genai/...",
			},
		},
		{
			Name:     "retrieve-openai",
			Files:    retrieveOpenAI,
			Requires: []string{repo + "memcore", repo + "memretrieve", repo + "providers/openai"},
			Forbid: []string{
				repo + "providers/gemini/...",
				"google.golang.org/genai/...",
			},
		},
	}, nil
}

// commands are the published commands, installed with go install.
var commands = []consumercheck.Command{{
	Package: repo + "cmd/forgemem",
	Runs:    [][]string{{"demo"}, {"--version"}},
	Forbid: []string{
		repo + "tools/...",
		repo + "conformance/...",
		"github.com/philippgille/chromem-go/...",
		"github.com/mmcloughlin/avo/...",
		"golang.org/x/mod/...",
	},
}}

// unpublished are the workspace modules that are neither published nor
// tagged: the development tools.
var unpublished = []string{repo + "tools"}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "consumercheck:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("consumercheck", flag.ContinueOnError)
	fset.SetOutput(stderr)
	verbose := fset.Bool("v", false, "print every consumer's build list")
	keep := fset.String("keep", "", "make the proxy, module cache and consumers in this folder and leave them there")
	fallback := fset.String("fallback", "", "proxies tried after ours, as in GOPROXY (default: the local module cache's download folder, then https://proxy.golang.org)")
	publish := fset.String("publish", "", "only publish the modules into a module proxy in this folder and print its GOPROXY entry")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (usage: consumercheck [-v] [-keep DIR] [-fallback PROXIES] | -publish DIR)", fset.Args())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := findRoot(wd)
	if err != nil {
		return err
	}
	if *publish != "" {
		dir, err := filepath.Abs(*publish)
		if err != nil {
			return err
		}
		pub, err := consumercheck.Publish(root, dir, unpublished)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "file://%s\n", filepath.ToSlash(pub.Dir))
		return err
	}
	if *fallback == "" {
		*fallback, err = defaultFallback(ctx)
		if err != nil {
			return err
		}
	}
	cs, err := consumers()
	if err != nil {
		return err
	}
	start := time.Now()
	_, err = consumercheck.Run(ctx, consumercheck.Config{
		Root:        root,
		Unpublished: unpublished,
		Consumers:   cs,
		Commands:    commands,
		Fallback:    *fallback,
		Log:         stdout,
		Verbose:     *verbose,
		KeepDir:     *keep,
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "consumers of the published modules: ok (%s)\n", time.Since(start).Round(100*time.Millisecond))
	return err
}

// findRoot returns the nearest folder at or above dir that holds go.work.
func findRoot(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.work in %s or above: run consumercheck inside the forgemem repository", dir)
		}
		d = parent
	}
}

// defaultFallback is where third-party modules come from: the download
// folder of the local module cache (a valid file proxy: offline, and what
// the repository's own builds already verified), then the public proxy.
func defaultFallback(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	proxies := []string{"https://proxy.golang.org"}
	if cache := strings.TrimSpace(string(out)); cache != "" {
		proxies = append([]string{"file://" + filepath.ToSlash(filepath.Join(cache, "cache", "download"))}, proxies...)
	}
	return strings.Join(proxies, ","), nil
}
