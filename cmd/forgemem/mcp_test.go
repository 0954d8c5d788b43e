package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/mcpserver/mcptest"
)

// hangGuard turns a server that stopped answering into a failure rather
// than a test that runs until go test's timeout; it is no measure of
// speed.
const hangGuard = 2 * time.Minute

// mcpProcess is a running forgemem mcp, spoken to line by line.
type mcpProcess struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// lines are the lines of its stdout, read as they come.
	lines  chan []byte
	stderr *bytes.Buffer
	next   int
}

// mcpAnswer is a line of forgemem mcp's stdout as the tests read it.
type mcpAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// startMCP starts forgemem mcp in a new repository and initializes a
// session.
func startMCP(t *testing.T) *mcpProcess {
	t.Helper()
	w := newWorld(t)
	return startMCPIn(t, w, w.repo("shop"))
}

// startMCPIn starts forgemem mcp in dir, in the world w (its environment
// only, as w.run has it), and initializes a session.
func startMCPIn(t *testing.T, w *world, dir string) *mcpProcess {
	t.Helper()
	cmd := exec.Command(binary, "mcp")
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=sk-test-e2e-key"}, w.env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &mcpProcess{t: t, cmd: cmd, stdin: stdin, lines: make(chan []byte, 1024), stderr: &bytes.Buffer{}, next: 1000}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			p.lines <- bytes.Clone(sc.Bytes())
		}
	}()
	p.send([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	if a := p.awaitID("1"); a.Error != nil {
		t.Fatalf("initialize: %s", a.Error.Message)
	}
	p.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return p
}

func (p *mcpProcess) send(frame []byte) {
	p.t.Helper()
	if _, err := p.stdin.Write(append(frame, '\n')); err != nil {
		p.t.Fatalf("writing to forgemem mcp: %v\n%s", err, p.stderr)
	}
}

// read returns the next answer; notifications are skipped.
func (p *mcpProcess) read() mcpAnswer {
	p.t.Helper()
	for {
		var line []byte
		var ok bool
		select {
		case line, ok = <-p.lines:
		case <-time.After(hangGuard):
			p.t.Fatalf("forgemem mcp answered nothing for %v\n%s", hangGuard, p.stderr)
		}
		if !ok {
			p.t.Fatalf("forgemem mcp's stdout ended\n%s", p.stderr)
		}
		var a mcpAnswer
		if err := json.Unmarshal(line, &a); err != nil || a.JSONRPC != "2.0" {
			p.t.Fatalf("a stdout line that is not JSON-RPC: %v: %.300s", err, line)
		}
		if a.Method == "" {
			return a
		}
	}
}

// awaitID returns the answer with id, failing on any other.
func (p *mcpProcess) awaitID(id string) mcpAnswer {
	p.t.Helper()
	a := p.read()
	if string(a.ID) != id {
		p.t.Fatalf("answer %s, want %s: %+v", a.ID, id, a.Error)
	}
	return a
}

// call calls the tool name with args and returns the text of its result,
// its structured content and whether it is an error result; a JSON-RPC
// error fails the test.
func (p *mcpProcess) call(name string, args map[string]any) (text string, structured map[string]any, isError bool) {
	p.t.Helper()
	p.next++
	id := strconv.Itoa(p.next)
	params, err := json.Marshal(map[string]any{"name": name, "arguments": args})
	if err != nil {
		p.t.Fatal(err)
	}
	p.send([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + string(params) + `}`))
	a := p.awaitID(id)
	if a.Error != nil {
		p.t.Fatalf("%s: JSON-RPC error %d: %s", name, a.Error.Code, a.Error.Message)
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	}
	if err := json.Unmarshal(a.Result, &res); err != nil {
		p.t.Fatalf("%s: %v: %.300s", name, err, a.Result)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String(), res.StructuredContent, res.IsError
}

// ping returns the answers read before the answer to a new ping: the
// server still serves.
func (p *mcpProcess) ping() []mcpAnswer {
	p.t.Helper()
	p.next++
	id := strconv.Itoa(p.next)
	p.send([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`))
	var before []mcpAnswer
	for {
		a := p.read()
		if string(a.ID) == id {
			return before
		}
		before = append(before, a)
	}
}

// The built binary answers every malformed frame with a JSON-RPC error and
// serves the next — truncated JSON, a bare number, a batch, an id that is
// an object, invalid UTF-8, an empty line, nesting 20,000 deep, and one
// line of 400 MB, which it reads without holding — then lists its
// memories, and exits 0 when its input ends.
func TestMCPSurvivesMalformedFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 400 MB through the binary")
	}
	p := startMCP(t)
	frames := append(mcptest.MalformedFrames(t, "internal/mcpserver/testdata/malformed_frames.txt"),
		mcptest.Frame{Name: "nesting 20,000 deep", Bytes: []byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000)), Code: -32700, ID: "null"},
		mcptest.Frame{Name: "a 5 MiB message", Bytes: []byte(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"` + strings.Repeat("x", 5<<20) + `"}}`), Code: -32600, ID: "null"})
	for _, f := range frames {
		p.send(f.Bytes)
		got := p.ping()
		if len(got) != 1 || got[0].Error == nil || got[0].Error.Code != f.Code || string(got[0].ID) != f.ID {
			t.Errorf("%s: answered %+v; want one error %d with id %s", f.Name, got, f.Code, f.ID)
		}
	}

	// A line of 400 MB, written as it is made: the server discards it as
	// it streams.
	const huge = 400 << 20
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for written := 0; written < huge; written += len(chunk) {
		if _, err := p.stdin.Write(chunk); err != nil {
			t.Fatalf("writing the 400 MB line: %v\n%s", err, p.stderr)
		}
	}
	p.send(nil) // its newline
	if got := p.ping(); len(got) != 1 || got[0].Error == nil || got[0].Error.Code != -32600 || string(got[0].ID) != "null" {
		t.Errorf("the 400 MB line: answered %+v; want one invalid request with id null", got)
	}
	if runtime.GOOS == "linux" {
		if peak := peakRSS(t, p.cmd.Process.Pid); peak > 200<<20 {
			t.Errorf("forgemem mcp peaked at %d MB of memory reading a 400 MB line", peak>>20)
		}
	}

	p.send([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_list","arguments":{}}}`))
	if a := p.awaitID("2"); a.Error != nil || !strings.Contains(string(a.Result), "No memories") {
		t.Errorf("memory_list after the malformed frames: %s %+v", a.Result, a.Error)
	}
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("forgemem mcp once its input ended: %v\n%s", err, p.stderr)
	}
	if strings.Contains(p.stderr.String(), "panic") {
		t.Errorf("stderr:\n%s", p.stderr)
	}
}

// The calls a client wrote before closing its end are all answered before
// forgemem mcp exits.
func TestMCPAnswersEveryCallBeforeItEnds(t *testing.T) {
	p := startMCP(t)
	const calls = 20
	for i := range calls {
		p.send([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_recall","arguments":{"query":"how do we deploy? %d"}}}`, 100+i, i)))
	}
	p.stdin.Close()
	answered := map[string]bool{}
	for line := range p.lines {
		var a mcpAnswer
		if err := json.Unmarshal(line, &a); err != nil {
			t.Fatalf("%v: %.300s", err, line)
		}
		if a.Method == "" {
			answered[string(a.ID)] = a.Error == nil
		}
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("forgemem mcp: %v\n%s", err, p.stderr)
	}
	for i := range calls {
		if id := strconv.Itoa(100 + i); !answered[id] {
			t.Errorf("call %s was not answered", id)
		}
	}
}

// peakRSS is the most memory the process pid has held (VmHWM).
func peakRSS(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}
