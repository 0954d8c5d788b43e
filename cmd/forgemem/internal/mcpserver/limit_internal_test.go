package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/settings"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The limit lets maxRunning calls run, maxWaiting wait, and refuses the
// others at once; a waiting call runs when a place is given back, or
// leaves when its context ends.
func TestCallLimit(t *testing.T) {
	l := newCallLimit(2, 1)
	waits := make(chan struct{}, 2)
	l.onWait = func() { waits <- struct{}{} }
	ctx := context.Background()
	r1, err1 := l.acquire(ctx)
	r2, err2 := l.acquire(ctx)
	if err1 != nil || err2 != nil {
		t.Fatalf("the first two calls: %v, %v", err1, err2)
	}
	waited := make(chan error, 1)
	go func() {
		release, err := l.acquire(ctx)
		if err == nil {
			release()
		}
		waited <- err
	}()
	<-waits // the third call waits; a fourth finds no place
	if _, err := l.acquire(ctx); !errors.Is(err, errBusy) {
		t.Errorf("a fourth call: %v, want errBusy", err)
	}
	r1()
	if err := <-waited; err != nil {
		t.Errorf("the waiting call, once a place was free: %v", err)
	}
	// A waiting call whose context ends leaves the queue.
	r3, err := l.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		<-waits
		cancel()
	}()
	if _, err := l.acquire(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled waiting call: %v", err)
	}
	if n := l.waiting.Load(); n != 0 {
		t.Errorf("%d calls still counted as waiting", n)
	}
	r2()
	r3()
}

// listMemories is how many memories the bound tests write: about 1.9 MB.
const listMemories = 600

// 300 memory_list calls at once over 1.9 MB of memories: at most
// maxRunning run at once, maxWaiting wait, and the others are refused as
// busy at once; every result is capped. The test holds the running calls
// until every refusal has arrived, so the counts are exact, and times
// nothing.
func TestConcurrentCallsAreBounded(t *testing.T) {
	ws, dir := openWorkspace(t)
	writeMemories(t, dir, listMemories)
	server, srv := build(ws, Options{Version: "test"})
	var running, peak atomic.Int64
	gate := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open)
	srv.onRun = func(string) func() {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if n <= maxRunning {
			<-gate // held until the refusals are in
		}
		return func() { running.Add(-1) }
	}
	session := connect(t, server)

	const calls = 300
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	results := make(chan outcome, calls)
	for range calls {
		go func() {
			res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_list", Arguments: map[string]any{}})
			results <- outcome{res, err}
		}()
	}
	text := func(o outcome) string {
		if o.err != nil {
			return "a protocol error: " + o.err.Error()
		}
		return o.res.Content[0].(*mcp.TextContent).Text
	}
	refused := calls - maxRunning - maxWaiting
	for i := range refused {
		o := <-results
		if o.err != nil || !o.res.IsError || !strings.Contains(text(o), "forgemem is busy") {
			open()
			t.Fatalf("answer %d while %d calls were held running: %q; want a busy tool error", i+1, maxRunning, clip(text(o), 300))
		}
	}
	open()
	for range maxRunning + maxWaiting {
		o := <-results
		if o.err != nil || o.res.IsError {
			t.Fatalf("a call given a place: %q", clip(text(o), 300))
		}
		if got := text(o); len(got) > maxResultBytes+1<<10 || !strings.Contains(got, "call memory_list with offset") {
			t.Errorf("a result of %d bytes, want at most %d with a note on the next page", len(got), maxResultBytes+1<<10)
		}
	}
	if p := peak.Load(); p != maxRunning {
		t.Errorf("%d calls ran at once, want %d", p, maxRunning)
	}
}

// openWorkspace opens a workspace over a new repository and home folder,
// and returns it with the repository's memory folder.
func openWorkspace(t *testing.T) (*workspace.Workspace, string) {
	t.Helper()
	root := t.TempDir()
	repo, home := filepath.Join(root, "repo"), filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(repo, ".git"), home} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	s, err := settings.Load(settings.Options{WorkDir: repo, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(s, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close(context.Background()) })
	return ws, s.Paths.RepoDir
}

// writeMemories writes n memories of about 3 KB into dir, each with a
// first line of 250 characters, as files (a FileStore's fsync per file is
// not what these tests are about).
func writeMemories(t *testing.T, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		title := fmt.Sprintf("Memory %d: ", i) + strings.Repeat("we deploy on Fridays ", 12)
		m := &memcore.MemoryFile{Meta: memcore.MemoryMeta{ID: memcore.NewMemoryID(), CreatedAt: created.Add(time.Duration(i) * time.Minute),
			Version: 1, Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions, Trigger: memcore.TriggerManual},
			Content: title + "\n\n" + strings.Repeat("More about deploying. ", 130)}
		data, err := memcore.Serialize(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, m.Meta.ID+".md"), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// connect connects a client to server over in-memory transports.
func connect(t *testing.T, server *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	serverT, clientT := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- server.Run(ctx, serverT) }()
	session, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = session.Close()
		cancel()
		<-served
	})
	return session
}
