//go:build unix

package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/spool"
	"github.com/forgemem/forgemem/memcore"
)

// The hook's promises to the agent, played with the built binary: it
// never blocks (a FIFO, a stdin that never ends, SIGTERM, a hostile
// repository), its one line is bounded, and what it queues holds no
// secret.

// hookProc is a hook process the test drives.
type hookProc struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr bytes.Buffer
	start          time.Time
	exited         chan struct{}
	code           int
}

// startHook starts `forgemem hook claude-code` in dir with its stdin a
// pipe the test holds.
func (w *world) startHook(dir string) *hookProc {
	w.t.Helper()
	p := &hookProc{exited: make(chan struct{})}
	p.cmd = exec.Command(binary, "hook", "claude-code", "--worker-idle=50ms", "--server-idle=0") // resident_test.go tests the recall server
	p.cmd.Dir = dir
	p.cmd.Env = []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=sk-test-e2e-key"}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		w.t.Fatal(err)
	}
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			p.code = exit.ExitCode() // -1 when a signal ended it
		case err != nil:
			p.code = -2
		}
		close(p.exited)
	}()
	w.t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// wait waits for the hook to exit, and fails the test, killing it, if it
// has not after limit.
func (p *hookProc) wait(t *testing.T, limit time.Duration) time.Duration {
	t.Helper()
	select {
	case <-p.exited:
		return time.Since(p.start)
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Fatalf("the hook had not exited after %s; stderr %q", limit, p.stderr.String())
		return 0
	}
}

// runHookWithin runs the hook with stdin and fails the test if it has not
// exited after limit: a hook that blocks fails the test instead of
// hanging it.
func (w *world) runHookWithin(dir, stdin string, limit time.Duration) (stdout, stderr string, code int, took time.Duration) {
	w.t.Helper()
	p := w.startHook(dir)
	go func() {
		_, _ = io.WriteString(p.stdin, stdin)
		p.stdin.Close()
	}()
	took = p.wait(w.t, limit)
	return p.stdout.String(), p.stderr.String(), p.code, took
}

// oneLine checks that stderr is at most one line of the hook's, bounded.
func oneLine(t *testing.T, what, stderr string) {
	t.Helper()
	if stderr == "" {
		return
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "forgemem hook claude-code: ") || len(stderr) > 2200 {
		t.Errorf("%s: stderr is not one bounded line of the hook's (%d bytes): %q", what, len(stderr), stderr[:min(len(stderr), 300)])
	}
}

// mkfifo makes a FIFO at path.
func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	return path
}

// A FIFO as the transcript is never opened for reading, so nothing waits
// on a writer that never comes: the prompt is recalled for alone and the
// capture skipped, each with one line saying why.
func TestHookFIFOTranscriptNeverBlocks(t *testing.T) {
	w := newWorld(t)
	repo := w.repo("shop")
	fifo := mkfifo(t, filepath.Join(t.TempDir(), "session.jsonl"))
	for _, event := range []string{"user_prompt_submit", "stop", "pre_compact"} {
		out, errOut, code, _ := w.runHookWithin(repo, w.payload(event, repo, fifo), stuckAfter)
		oneLine(t, event, errOut)
		if code != 0 || !strings.Contains(errOut, "not a regular file") || event != "user_prompt_submit" && out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0 and a line saying the transcript is not a regular file", event, code, out, errOut)
		}
	}
}

// A hook whose stdin never ends (a reader stuck in a read system call)
// exits 0 at its deadline, before Claude Code's timeout. This is the test
// where time is the behaviour: the margin is Claude Code's 2 seconds.
func TestHookExitsAtItsDeadline(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	repo := w.repo("shop")
	p := w.startHook(repo)
	// Part of a payload, and then nothing: the hook waits for the rest.
	if _, err := io.WriteString(p.stdin, `{"hook_event_name":"UserPromptSubmit","prompt":"`); err != nil {
		t.Fatal(err)
	}
	took := p.wait(t, stuckAfter)
	if p.code != 0 || p.stdout.Len() != 0 || !strings.Contains(p.stderr.String(), "gave up at its 8s deadline while reading the hook's input") {
		t.Errorf("exit %d, stdout %q, stderr %q", p.code, p.stdout.String(), p.stderr.String())
	}
	oneLine(t, "at the deadline", p.stderr.String())
	if limit := claudecode.HookTimeout * time.Second; took >= limit {
		t.Errorf("the hook took %v, past Claude Code's %v timeout", took, limit)
	}
	t.Logf("the stuck hook exited after %v (deadline %v)", took, claudecode.HookDeadline)
}

// SIGTERM ends a stuck hook at once, with exit 0: it does not wait for
// its work, nor for its deadline.
func TestHookSIGTERMWhileStuck(t *testing.T) {
	w := newWorld(t)
	repo := w.repo("shop")
	p := w.startHook(repo)
	// More than a pipe holds: when the write returns, the hook is reading
	// its input (its signal handling is set up before), and it is stuck
	// there, since the payload never ends.
	partial := `{"hook_event_name":"UserPromptSubmit","prompt":"` + strings.Repeat("x", 1<<20)
	if _, err := io.WriteString(p.stdin, partial); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.wait(t, stuckAfter)
	// Not at the deadline: the line says the signal ended it.
	if p.code != 0 || p.stdout.Len() != 0 || !strings.Contains(p.stderr.String(), "stopped by a signal while reading the hook's input") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and a line saying a signal stopped it", p.code, p.stdout.String(), p.stderr.String())
	}
	oneLine(t, "after SIGTERM", p.stderr.String())
}

// A transcript line longer than the cap is skipped whole: no piece of it
// reaches the classifier as a message of its own.
func TestHookSkipsAnOversizedTranscriptLineWhole(t *testing.T) {
	w, g := gatedWorld(t, errorsRule)
	repo := w.repo("shop")
	transcript := filepath.Join(t.TempDir(), "session.jsonl")
	line := func(role, text string) string {
		b, _ := json.Marshal(map[string]any{"type": role, "message": map[string]any{"role": role, "content": text}})
		return string(b) + "\n"
	}
	// Leading spaces are JSON white space: any tail of this line parses.
	huge := strings.Repeat(" ", claudecode.MaxLineBytes+(1<<20)) + line("user", "TAIL-OF-AN-OVERSIZED-LINE")
	writeFile(t, transcript, line("user", "Please wrap errors with %w and a verb phrase.")+huge+line("assistant", "Done."))
	if _, errOut, code, _ := w.runHookWithin(repo, w.payload("stop", repo, transcript), stuckAfter); code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	req := g.next(t)
	contains(t, "the classifier request", req.Text(), "wrap errors with %w and a verb phrase", "Done.")
	if strings.Contains(req.Text(), "TAIL-OF-AN-OVERSIZED-LINE") {
		t.Error("the tail of the oversized line reached the classifier")
	}
	g.open()
	waitWorkerGone(t, repo)
}

// Claude Code runs the Stop hook before it writes the reply's line: the
// reply comes from the payload's last_assistant_message, and a
// correction keeps the answer it corrects.
func TestHookStopTakesTheReplyFromThePayload(t *testing.T) {
	w, g := gatedWorld(t)
	repo := w.repo("shop")
	transcript := filepath.Join(t.TempDir(), "session.jsonl")
	line := func(role, text string) string {
		b, _ := json.Marshal(map[string]any{"type": role, "message": map[string]any{"role": role, "content": text}})
		return string(b) + "\n"
	}
	writeFile(t, transcript, line("user", "How should user updates lock rows?")+
		line("assistant", "Use pessimistic locking: SELECT … FOR UPDATE in the update's transaction.")+
		line("user", "no, use optimistic locking with a version column"))
	var in map[string]any
	if err := json.Unmarshal([]byte(w.payload("stop", repo, transcript)), &in); err != nil {
		t.Fatal(err)
	}
	in["last_assistant_message"] = "Right: updates now check the version column and retry on a conflict."
	payload, _ := json.Marshal(in)
	if _, errOut, code, _ := w.runHookWithin(repo, string(payload), stuckAfter); code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	req := g.next(t)
	text := req.Text()
	wrong := strings.Index(text, "Use pessimistic locking: SELECT … FOR UPDATE")
	correction := strings.Index(text, "no, use optimistic locking with a version column")
	reply := strings.Index(text, "Right: updates now check the version column")
	if wrong < 0 || correction < wrong || reply < correction {
		t.Errorf("the classifier's conversation lacks the wrong answer, the correction or the reply, in that order:\n%s", text)
	}
	g.open()
	waitWorkerGone(t, repo)
}

// What waits in the queue holds no secret of the conversation.
func TestHookQueuedCaptureHoldsNoSecret(t *testing.T) {
	w, g := gatedWorld(t)
	repo := w.repo("shop")
	const key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
	transcript := filepath.Join(t.TempDir(), "session.jsonl")
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": "The staging key is " + key + "; wrap errors with %w and a verb phrase."}})
	writeFile(t, transcript, string(b)+"\n")
	if _, errOut, code, _ := w.runHookWithin(repo, w.payload("stop", repo, transcript), stuckAfter); code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	req := g.next(t) // the worker holds the entry while its pass waits
	if strings.Contains(req.Text(), key) {
		t.Error("the key reached the classifier")
	}
	items := entries(t, repo)
	if len(items) != 1 {
		t.Fatalf("queued %+v", items)
	}
	data, err := os.ReadFile(filepath.Join(spoolDir(repo), items[0].Name))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), key) || !strings.Contains(string(data), "[REDACTED]") || !strings.Contains(string(data), "wrap errors with %w") {
		t.Errorf("the queued entry:\n%s", data)
	}
	g.open()
	waitWorkerGone(t, repo)
}

// A full queue drops the capture, says so in the hook's line, and counts
// it in forgemem stats.
func TestHookFullQueueDropsAndCounts(t *testing.T) {
	w := newWorld(t)
	repo := w.repo("shop")
	sp, err := spool.Open(filepath.Join(repo, ".forge", "memory"), w.captureKey())
	if err != nil {
		t.Fatal(err)
	}
	for i := range spool.MaxEntries {
		if _, err := sp.Add(spool.Entry{Kind: memcore.TriggerCompaction, SessionID: "old",
			Messages: []spool.Message{{Role: memcore.RoleUser, Content: fmt.Sprint("arc ", i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	// A worker holds the queue (stuck on a provider, say): none is started.
	unlock, err := sp.TryLock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, errOut, code, _ := w.runHookWithin(repo, w.payload("stop", repo, w.transcript()), stuckAfter)
	oneLine(t, "a full queue", errOut)
	if code != 0 || !strings.Contains(errOut, "nothing captured") || !strings.Contains(errOut, "the capture queue is full") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if items := entries(t, repo); len(items) != spool.MaxEntries {
		t.Errorf("%d entries wait, want %d", len(items), spool.MaxEntries)
	}
	var st struct {
		Dropped int `json:"dropped_captures"`
	}
	if err := json.Unmarshal([]byte(w.ok(repo, "", "stats", "--json")), &st); err != nil || st.Dropped != 1 {
		t.Errorf("stats --json: %+v, %v; want 1 dropped", st, err)
	}
	contains(t, "stats", w.ok(repo, "", "stats"), "Captures dropped: 1")
}

// With the fake provider, the default, nothing can run a capture: thirty
// turns queue nothing, the first says why, and stats says it too.
func TestHookFakeProviderQueuesNothing(t *testing.T) {
	w := &world{t: t, home: t.TempDir()} // no settings: the fake provider
	repo := w.repo("shop")
	transcript := w.transcript()
	for i := range 30 {
		event := "stop"
		if i%10 == 9 {
			event = "pre_compact"
		}
		out, errOut, code, _ := w.runHookWithin(repo, w.payload(event, repo, transcript), stuckAfter)
		if code != 0 || out != "" {
			t.Fatalf("turn %d: exit %d, stdout %q", i+1, code, out)
		}
		if i == 0 {
			oneLine(t, "the first turn", errOut)
			contains(t, "the first turn's line", errOut, "nothing captured", "fake provider", "memory.provider")
		} else if errOut != "" {
			t.Fatalf("turn %d said %q; want it said once", i+1, errOut)
		}
	}
	if names, _ := filepath.Glob(filepath.Join(spoolDir(repo), "*.json")); len(names) != 0 {
		t.Errorf("queued %v", names)
	}
	contains(t, "stats", w.ok(repo, "", "stats"), "Capture: agent hooks queue no captures", "fake provider")
}

// A repository is someone else's input. One that commits a FIFO as the
// transcript, a link to /dev/zero, a sparse 20 GB transcript and
// oversized files in its memory folder and its queue still gets a hook
// that exits 0, with at most one bounded line, before Claude Code's
// timeout.
func TestHookInAHostileRepository(t *testing.T) {
	w := newWorld(t)
	repo := w.repo("hostile")
	traps := map[string]string{
		"the session's transcript":  w.transcript(),
		"a FIFO":                    mkfifo(t, filepath.Join(repo, "logs", "session.jsonl")),
		"a link to /dev/zero":       filepath.Join(repo, "logs", "zero.jsonl"),
		"a sparse 20 GB transcript": filepath.Join(repo, "logs", "huge.jsonl"),
	}
	if err := os.Symlink("/dev/zero", traps["a link to /dev/zero"]); err != nil {
		t.Fatal(err)
	}
	sparse(t, traps["a sparse 20 GB transcript"], 20<<30)
	memory := filepath.Join(repo, ".forge", "memory")
	// A sparse 20 GB memory file: the store skips it unread (over its
	// 1 MiB cap of a memory file), where it once made the hook run out of
	// memory and exit 2.
	sparse(t, filepath.Join(memory, "mem_11111111-2222-4333-8444-555555555555.md"), 20<<30)
	// A queue committed by force: a 20 GB entry, a FIFO entry, a FIFO log.
	sparse(t, filepath.Join(memory, spool.DirName, "c-00000000000000000001-0123456789abcdef-01234567.json"), 20<<30)
	mkfifo(t, filepath.Join(memory, spool.DirName, "t-00000000000000000002-0123456789abcdef-01234567.json"))
	mkfifo(t, filepath.Join(memory, spool.DirName, spool.LogName))

	for name, transcript := range traps {
		for _, event := range []string{"user_prompt_submit", "stop", "pre_compact"} {
			what := event + " with " + name
			hookWithinTheTimeout(t, w, what, repo, w.payload(event, repo, transcript))
		}
	}
	// The queue's traps are not followed by stats either.
	if _, errOut, code := w.run(repo, "", "stats"); code != 0 && !strings.Contains(errOut, "not a regular file") {
		t.Errorf("stats in the hostile repository: exit %d, %s", code, errOut)
	}
}

// A repository that commits settings naming its own server and provider
// never gets the user's key, nor a request: the user's settings (provider
// openai, its key in the environment) stay in force until the user
// trusts the file; and a repository whose settings file is a link to
// /dev/zero gets a hook that exits 0 in time.
func TestHookInARepositoryThatRedirectsTheKey(t *testing.T) {
	w := newWorld(t)
	var mu sync.Mutex
	var got []string
	attacker := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(rw, "no", http.StatusTeapot)
	}))
	t.Cleanup(attacker.Close)

	redirecting := w.repo("redirecting")
	writeFile(t, filepath.Join(redirecting, ".forge", "config.yaml"),
		"memory:\n  provider: openai\n  base_url: "+attacker.URL+"/v1\n  embedding_model: stolen\n")
	w.ok(redirecting, "", "remember", "The deploy script lives in scripts/deploy.sh.", "--scope", "user", "--category", "project-conventions")
	embedded := len(w.srv.Embedded())
	for _, event := range []string{"user_prompt_submit", "stop", "pre_compact"} {
		_, errOut, code, _ := w.runHookWithin(redirecting, w.payload(event, redirecting, w.transcript()), stuckAfter)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", event, code, errOut)
		}
		// The worker a capture hook starts runs with the user's settings
		// too. Until it takes the queue's lock, the lock is free: the next
		// hook would start another, and waitWorkerGone would not wait for
		// it. So each capture is waited for until a worker has run it.
		if event != "user_prompt_submit" {
			waitQueueRun(t, redirecting)
		}
	}
	waitWorkerGone(t, redirecting)
	// The user's own server, the one their settings name, did the work.
	if len(w.srv.Embedded()) == embedded {
		t.Error("the prompt hook embedded nothing with the user's own settings")
	}
	_, errOut, _ := w.run(redirecting, "", "search", "deploy")
	contains(t, "search's warning", errOut, "ignoring memory.base_url", "forgemem trust")
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Errorf("the repository's server got %d requests, the first %q", len(got), got[0])
	}

	zero := w.repo("zero")
	if err := os.MkdirAll(filepath.Join(zero, ".forge"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(zero, ".forge", "config.yaml")); err != nil {
		t.Fatal(err)
	}
	hookWithinTheTimeout(t, w, "settings linked to /dev/zero", zero, w.payload("user_prompt_submit", zero, w.transcript()))
}

// A settings file of 100,000 unknown keys, each an error naming the known
// ones, once made the hook run past Claude Code's timeout and print a
// 56 MB line: it exits 0 in time with one bounded line.
func TestHookWithAHundredThousandUnknownKeys(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	repo := w.repo("keys")
	var keys strings.Builder
	keys.WriteString("memory:\n")
	for i := range 100_000 {
		fmt.Fprintf(&keys, "  unknown_key_%d: 1\n", i)
	}
	writeFile(t, filepath.Join(repo, ".forge", "config.yaml"), keys.String())
	hookWithinTheTimeout(t, w, "100,000 unknown keys", repo, w.payload("user_prompt_submit", repo, w.transcript()))
}

// hookWithinTheTimeout runs the hook with payload in dir and checks that
// it exits 0 before Claude Code's timeout, with nothing but hook output on
// stdout and at most one bounded line on stderr.
func hookWithinTheTimeout(t *testing.T, w *world, what, dir, payload string) {
	t.Helper()
	out, errOut, code, took := w.runHookWithin(dir, payload, stuckAfter)
	oneLine(t, what, errOut)
	if code != 0 || out != "" && !json.Valid([]byte(out)) {
		t.Errorf("%s: exit %d, stdout %q", what, code, out)
	}
	if limit := claudecode.HookTimeout * time.Second; took >= limit {
		t.Errorf("%s: the hook took %v, past Claude Code's %v timeout", what, took, limit)
	}
	t.Logf("%s: exit %d in %v: %s", what, code, took, strings.TrimSpace(errOut[:min(len(errOut), 200)]))
}

// sparse makes a file of size bytes that takes no room on the disk.
func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}
