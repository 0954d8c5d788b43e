// Command embedserver runs tools/embedserver, the repository's offline
// OpenAI-compatible embeddings server (the Universal Sentence Encoder lite
// model on Node.js), for evaluations and benchmarks that need a real neural
// embedder without the network.
//
// Usage:
//
//	go run ./tools/cmd/embedserver                    serve until interrupted
//	go run ./tools/cmd/embedserver -- COMMAND [ARG…]  run COMMAND against it
//
// Alone, it starts the server, prints the forgemem settings that use it
// (FORGEMEM_PROVIDER, FORGEMEM_BASE_URL, FORGEMEM_EMBEDDING_MODEL, one
// export line each) and serves until interrupted. With a command after
// "--", it runs the command with those variables in its environment and
// stops the server when the command ends, exiting with the command's exit
// status; for example, the USE-lite rows of docs/EVALUATION.md:
//
//	go run ./tools/cmd/embedserver -- forgemem eval --dataset madial.jsonl --json
//
// It needs Node.js 20 or newer and the server's npm packages (npm ci in
// tools/embedserver, which scripts/test runs), and runs inside a forgemem
// checkout.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/forgemem/forgemem/tools/internal/embedserver"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usage is printed for -h, --help and a wrong argument.
const usage = `usage: go run ./tools/cmd/embedserver [-- COMMAND [ARG...]]
Starts tools/embedserver (the Universal Sentence Encoder lite, offline) and,
with a command, runs it with FORGEMEM_PROVIDER, FORGEMEM_BASE_URL and
FORGEMEM_EMBEDDING_MODEL set to use the server; alone, prints those settings
and serves until interrupted.
`

func run(args []string, stdout, stderr io.Writer) int {
	var command []string
	switch {
	case len(args) == 0:
	case args[0] == "--" && len(args) > 1:
		command = args[1:]
	case args[0] == "-h" || args[0] == "--help" || args[0] == "-help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "embedserver: unexpected argument %q: put the command after --\n%s", args[0], usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The default limit of 256 texts per request is below what
	// providers/openai sends in one batch (2,048); the server takes them.
	baseURL, stopServer, err := embedserver.Start(ctx, embedserver.Options{Args: []string{"--max-inputs", "2048"}, Log: io.Discard})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer stopServer()
	vars := Env(baseURL)
	if command == nil {
		for _, v := range vars {
			fmt.Fprintf(stdout, "export %s\n", v)
		}
		fmt.Fprintln(stderr, "embedserver: serving until interrupted")
		<-ctx.Done()
		return 0
	}
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Env = append(os.Environ(), vars...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			return exit.ExitCode()
		}
		fmt.Fprintf(stderr, "embedserver: %s: %v\n", command[0], err)
		return 1
	}
	return 0
}

// Env returns the forgemem settings, as environment variables, that embed
// with the server at baseURL.
func Env(baseURL string) []string {
	return []string{
		"FORGEMEM_PROVIDER=openai",
		"FORGEMEM_BASE_URL=" + baseURL,
		"FORGEMEM_EMBEDDING_MODEL=" + embedserver.Model,
	}
}
