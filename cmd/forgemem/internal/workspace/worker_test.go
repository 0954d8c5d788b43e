package workspace_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/fakeopenai"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/spool"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
)

// classifier plays the capture classifier: a conversation that holds a
// rule's phrase gives its memory. It records the windows it was asked
// about, in order.
type classifier struct {
	mu      sync.Mutex
	windows []string
}

// rules map a phrase of the conversation to the memory it gives.
var rules = map[string]string{
	"wrap errors":  "Errors are wrapped with %w; callers check them with errors.Is.",
	"migrations":   "Migrations live in db/migrations, one numbered file per change.",
	"tabs":         "Prefers tabs for indentation.",
	"release note": "Release notes go in CHANGELOG.md under Unreleased.",
}

func (c *classifier) reply(req fakeopenai.ChatRequest) string {
	if req.SchemaName != memcapture.ClassifierSchemaName {
		return "{}"
	}
	conv, _, _ := strings.Cut(req.Messages[len(req.Messages)-1].Content, "\nEXISTING MEMORIES")
	c.mu.Lock()
	c.windows = append(c.windows, conv)
	c.mu.Unlock()
	items := []map[string]any{}
	for phrase, content := range rules {
		if strings.Contains(conv, phrase) {
			items = append(items, map[string]any{"content": content, "scope": "repo", "category": "project-conventions", "supersedes": "", "related": []any{},
				"evidence": map[string]any{"messages": []int{}, "quote": quoteOf(conv, phrase)}})
		}
	}
	b, _ := json.Marshal(map[string]any{"memories": items})
	return string(b)
}

// quoteOf is what a classifier quotes as the evidence of a memory it
// found by phrase: the text of the user's message that holds it.
func quoteOf(conv, phrase string) string {
	for _, line := range strings.Split(conv, "\n") {
		if _, text, ok := strings.Cut(line, "] User: "); ok && strings.Contains(text, phrase) {
			return text
		}
	}
	return phrase
}

func (c *classifier) asked() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.windows...)
}

// withClassifier opens a workspace whose provider is a scripted OpenAI
// server.
func withClassifier(t *testing.T) (*workspace.Workspace, *fakeopenai.Server, *classifier) {
	t.Helper()
	c := &classifier{}
	srv, err := fakeopenai.Start(c.reply)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ws := open(t, "FORGEMEM_PROVIDER=openai", "FORGEMEM_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=sk-test",
		"FORGEMEM_CLASSIFIER_MODEL=classifier", "FORGEMEM_EMBEDDING_MODEL=embedder")
	return ws, srv, c
}

func queue(t *testing.T, ws *workspace.Workspace, kind memcore.Trigger, session string, texts ...string) string {
	t.Helper()
	var msgs []spool.Message
	for i, s := range texts {
		role := memcore.RoleUser
		if i%2 == 1 {
			role = memcore.RoleAssistant
		}
		msgs = append(msgs, spool.Message{Role: role, Content: s})
	}
	name, err := ws.QueueCapture(spool.Entry{Kind: kind, SessionID: session, Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func pending(t *testing.T, ws *workspace.Workspace) workspace.PendingCaptures {
	t.Helper()
	p, err := ws.Pending()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func contents(t *testing.T, ws *workspace.Workspace) []string {
	t.Helper()
	res, err := ws.List(context.Background(), workspace.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range res.Memories {
		out = append(out, m.Content)
	}
	return out
}

// The worker runs compactions first, then the newest turn of each session,
// which stands for the session's older turns; the queue is empty after.
func TestWorkerOrderAndCoalescing(t *testing.T) {
	ws, _, c := withClassifier(t)
	queue(t, ws, memcore.TriggerCadence, "s1", "turn 1 of s1")
	queue(t, ws, memcore.TriggerCadence, "s2", "please wrap errors")
	queue(t, ws, memcore.TriggerCompaction, "s1", "arc of s1: migrations")
	queue(t, ws, memcore.TriggerCadence, "s1", "turn 1 of s1", "ok", "turn 2 of s1: tabs")
	queue(t, ws, memcore.TriggerCompaction, "s2", "arc of s2")
	// The second turn of s1 replaced the first: its window holds it.
	if p := pending(t, ws); p.Count != 4 || !strings.Contains(p.Reason, "no capture worker is running") {
		t.Errorf("Pending = %+v", p)
	}

	res, err := ws.RunWorker(context.Background(), workspace.WorkerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, w := range c.asked() {
		for _, key := range []string{"arc of s1", "arc of s2", "turn 2 of s1", "wrap errors", "turn 1 of s1"} {
			if strings.Contains(w, key) {
				order = append(order, key)
				break
			}
		}
	}
	if got := strings.Join(order, ", "); got != "arc of s1, arc of s2, wrap errors, turn 2 of s1" {
		t.Errorf("passes in the order %s", got)
	}
	if len(res.Entries) != 4 || res.Written != 3 || res.Failed != 0 {
		t.Errorf("RunWorker = %+v", res)
	}
	if p := pending(t, ws); p.Count != 0 || p.Reason != "" {
		t.Errorf("Pending after the worker = %+v", p)
	}
	if got := contents(t, ws); len(got) != 3 {
		t.Errorf("memories %q, want migrations, errors and tabs", got)
	}
}

// A pass that fails leaves its entry, with the failure, for the next
// worker; stats says why it waits. The next worker, with the provider
// back, runs it.
func TestWorkerLeavesFailedEntries(t *testing.T) {
	ws, srv, _ := withClassifier(t)
	name := queue(t, ws, memcore.TriggerCompaction, "s1", "we keep migrations in db/migrations")
	srv.FailWith(http.StatusUnauthorized)
	res, err := ws.RunWorker(context.Background(), workspace.WorkerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 1 || len(res.Entries) != 1 || !strings.Contains(res.Entries[0].Err, "the classifier call failed") {
		t.Fatalf("RunWorker = %+v", res)
	}
	sp, err := ws.Spool()
	if err != nil {
		t.Fatal(err)
	}
	e, err := sp.Read(name)
	if err != nil {
		t.Fatalf("the failed entry is gone: %v", err)
	}
	if e.Attempts != 1 || !strings.Contains(e.LastError, "401") {
		t.Errorf("entry after the failure: attempts %d, last error %q", e.Attempts, e.LastError)
	}
	if p := pending(t, ws); p.Count != 1 || !strings.Contains(p.Reason, "a pass failed once") || !strings.Contains(p.Reason, "401") {
		t.Errorf("Pending = %+v", p)
	}
	srv.FailWith(0)
	if res, err = ws.RunWorker(context.Background(), workspace.WorkerOptions{}); err != nil || res.Written != 1 {
		t.Fatalf("the next worker: %+v, %v", res, err)
	}
	if p := pending(t, ws); p.Count != 0 {
		t.Errorf("Pending = %+v", p)
	}
}

// An entry whose pass ran to its write before the worker died — so it is
// run again — writes nothing twice: capture skips what the store already
// says.
func TestWorkerRerunWritesNothingTwice(t *testing.T) {
	ws, _, _ := withClassifier(t)
	name := queue(t, ws, memcore.TriggerCadence, "s1", "remember: wrap errors")
	sp, _ := ws.Spool()
	data, err := os.ReadFile(filepath.Join(sp.Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 2; run++ {
		if run == 2 { // the entry is back, as if the worker died before removing it
			if err := os.WriteFile(filepath.Join(sp.Dir(), name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ws.RunWorker(context.Background(), workspace.WorkerOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := contents(t, ws); len(got) != 1 {
			t.Errorf("after run %d: memories %q, want one", run, got)
		}
	}
}

// With no classifier (the fake provider) nothing is queued: an entry
// would wait for good. Entries queued before (by an earlier version, or
// with another provider) wait, and stats says why.
func TestWorkerWithoutClassifier(t *testing.T) {
	ws := open(t)
	_, err := ws.QueueCapture(spool.Entry{Kind: memcore.TriggerCadence, SessionID: "s1", Messages: []spool.Message{{Role: memcore.RoleUser, Content: "wrap errors"}}})
	if !errors.Is(err, workspace.ErrNeedsModel) || !strings.Contains(err.Error(), "memory.provider") {
		t.Errorf("QueueCapture = %v, want ErrNeedsModel saying what to set", err)
	}
	if p := pending(t, ws); p.Count != 0 {
		t.Errorf("queued with the fake provider: %+v", p)
	}
	// Nothing waits: a worker run by hand has nothing to refuse.
	if res, err := ws.RunWorker(context.Background(), workspace.WorkerOptions{}); err != nil || len(res.Entries) != 0 {
		t.Errorf("RunWorker of an empty queue = %+v, %v; want no entries and no error", res, err)
	}
	sp, err := ws.Spool()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Add(spool.Entry{Kind: memcore.TriggerCadence, SessionID: "s1", Messages: []spool.Message{{Role: memcore.RoleUser, Content: "wrap errors"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.RunWorker(context.Background(), workspace.WorkerOptions{}); !errors.Is(err, workspace.ErrNeedsModel) {
		t.Errorf("RunWorker = %v, want ErrNeedsModel", err)
	}
	if p := pending(t, ws); p.Count != 1 || !strings.Contains(p.Reason, "fake provider") {
		t.Errorf("Pending = %+v", p)
	}
	st, err := ws.Stats(context.Background())
	if err != nil || st.PendingCaptures != 1 || !strings.Contains(st.PendingReason, "memory.provider") ||
		!strings.Contains(st.CaptureOff, "agent hooks queue no captures") || !strings.Contains(st.CaptureOff, "fake provider") {
		t.Errorf("Stats = %+v, %v", st, err)
	}
}

// Captures a full queue dropped are counted by Pending and Stats.
func TestStatsCountDroppedCaptures(t *testing.T) {
	ws, _, _ := withClassifier(t)
	for i := range spool.MaxEntries + 2 {
		_, err := ws.QueueCapture(spool.Entry{Kind: memcore.TriggerCompaction, SessionID: "s1",
			Messages: []spool.Message{{Role: memcore.RoleUser, Content: fmt.Sprint("arc ", i)}}})
		if i < spool.MaxEntries && err != nil || i >= spool.MaxEntries && !errors.Is(err, spool.ErrFull) {
			t.Fatalf("QueueCapture %d = %v", i, err)
		}
	}
	if p := pending(t, ws); p.Count != spool.MaxEntries || p.Dropped.Count != 2 {
		t.Errorf("Pending = %+v", p)
	}
	st, err := ws.Stats(context.Background())
	if err != nil || st.DroppedCaptures != 2 || st.LastDropped == nil || st.CaptureOff != "" {
		t.Errorf("Stats = %+v, %v", st, err)
	}
}

func TestQueueCaptureRefuses(t *testing.T) {
	if _, err := open(t).QueueCapture(spool.Entry{Kind: memcore.TriggerCadence}); !errors.Is(err, workspace.ErrInvalidInput) {
		t.Errorf("an entry without messages: %v, want ErrInvalidInput", err)
	}
	off := open(t, "FORGEMEM_ENABLED=false")
	_, err := off.QueueCapture(spool.Entry{Kind: memcore.TriggerCadence, Messages: []spool.Message{{Role: memcore.RoleUser, Content: "x"}}})
	if !errors.Is(err, workspace.ErrDisabled) {
		t.Errorf("with memory off: %v, want ErrDisabled", err)
	}
}

// One worker per folder: a second one finds the lock held and does
// nothing.
func TestSecondWorkerIsBusy(t *testing.T) {
	ws, _, c := withClassifier(t)
	queue(t, ws, memcore.TriggerCadence, "s1", "wrap errors")
	sp, _ := ws.Spool()
	unlock, err := sp.TryLock()
	if err != nil {
		t.Fatal(err)
	}
	res, err := ws.RunWorker(context.Background(), workspace.WorkerOptions{})
	unlock()
	if err != nil || !res.Busy || len(c.asked()) != 0 {
		t.Errorf("RunWorker while another holds the lock = %+v, %v; %d passes", res, err, len(c.asked()))
	}
	if pending(t, ws).Count != 1 {
		t.Error("the entry was touched")
	}
}

// A worker waiting for more work runs an entry queued meanwhile at once:
// it waits on the folder, not until its idle time ends.
func TestIdleWorkerRunsNewEntries(t *testing.T) {
	ws, _, _ := withClassifier(t)
	queue(t, ws, memcore.TriggerCadence, "s1", "wrap errors")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan workspace.WorkerEntry, 2)
	done := make(chan error, 1)
	go func() {
		_, err := ws.RunWorker(ctx, workspace.WorkerOptions{Idle: time.Hour, OnEntry: func(e workspace.WorkerEntry) { ran <- e }})
		done <- err
	}()
	<-ran
	queue(t, ws, memcore.TriggerCompaction, "s2", "a release note rule")
	if e := <-ran; e.Kind != memcore.TriggerCompaction || e.Written != 1 {
		t.Errorf("the second pass: %+v", e)
	}
	if p := pending(t, ws); p.Count != 0 || p.WorkerPID != os.Getpid() {
		t.Errorf("Pending while the worker waits = %+v", p)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("RunWorker = %v, want context.Canceled", err)
	}
}

// An entry that cannot be read — not an entry at all, or one signed with
// another key than the user's (a repository committed it) — is set aside
// as <name>.bad, out of the queue: the run says so apart from the passes
// that failed, whose entries wait, and nothing waits for it.
func TestWorkerSetsAsideUnreadableEntries(t *testing.T) {
	foreign := func(t *testing.T) []byte {
		other, err := spool.Open(filepath.Join(t.TempDir(), "memory"), spool.Key{0xba, 0xd})
		if err != nil {
			t.Fatal(err)
		}
		name, err := other.Add(spool.Entry{Kind: memcore.TriggerCadence, SessionID: "s",
			Messages: []spool.Message{{Role: memcore.RoleUser, Content: "please wrap errors"}}})
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(other.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	tests := []struct {
		name string
		data func(*testing.T) []byte
	}{
		{"not an entry", func(*testing.T) []byte { return []byte("garbage\n") }},
		{"signed with another key", foreign},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, _, _ := withClassifier(t)
			sp, err := ws.Spool()
			if err != nil {
				t.Fatal(err)
			}
			const name = "c-00000000000000000001-0123456789abcdef-01234567.json"
			if err := os.WriteFile(filepath.Join(sp.Dir(), name), tt.data(t), 0o600); err != nil {
				t.Fatal(err)
			}
			queue(t, ws, memcore.TriggerCadence, "s1", "remember: wrap errors")
			res, err := ws.RunWorker(context.Background(), workspace.WorkerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.SetAside != 1 || res.Failed != 0 || res.Written != 1 || len(res.Entries) != 2 ||
				!res.Entries[0].SetAside || res.Entries[0].Name != name || res.Entries[0].Err == "" || res.Entries[1].SetAside {
				t.Errorf("RunWorker = %+v", res)
			}
			if _, err := os.Stat(filepath.Join(sp.Dir(), name+".bad")); err != nil {
				t.Errorf("the entry was not set aside: %v", err)
			}
			if p := pending(t, ws); p.Count != 0 || p.SetAside != 1 {
				t.Errorf("Pending = %+v, want nothing waiting, one set aside", p)
			}
		})
	}
}
