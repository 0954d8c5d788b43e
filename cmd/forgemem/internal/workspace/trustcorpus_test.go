package workspace_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
)

// corpusCase is one conversation of testdata/poisoning.jsonl or
// testdata/preferences.jsonl: the conversation, the memory a classifier
// returns for it (with the quote it gives as evidence), and a query that
// would recall that memory.
type corpusCase struct {
	Name         string `json:"name"`
	Vector       string `json:"vector"` // how an attack arrives; "" for a preference
	Conversation []struct {
		Role    memcore.Role `json:"role"`
		Content string       `json:"content"`
	} `json:"conversation"`
	Memory struct {
		Content  string `json:"content"`
		Scope    string `json:"scope"`
		Category string `json:"category"`
		Quote    string `json:"quote"`
	} `json:"memory"`
	Query string `json:"query"`
}

func readCorpus(t *testing.T, path string) []corpusCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fooledClassifier plays a classifier that falls for what it is shown:
// whatever the conversation, it returns the memory of the case in hand,
// quoting the evidence the case says it quotes.
type fooledClassifier struct {
	mu  sync.Mutex
	cur corpusCase
}

func (c *fooledClassifier) set(cc corpusCase) {
	c.mu.Lock()
	c.cur = cc
	c.mu.Unlock()
}

func (c *fooledClassifier) Complete(ctx context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	if req.ResponseSchema == nil || req.ResponseSchema.Name != memcapture.ClassifierSchemaName {
		return &memcore.CompletionResponse{Text: "{}"}, ctx.Err()
	}
	c.mu.Lock()
	m := c.cur.Memory
	c.mu.Unlock()
	reply, err := json.Marshal(map[string]any{"memories": []any{map[string]any{
		"content": m.Content, "scope": m.Scope, "category": m.Category, "supersedes": "", "related": []any{},
		"evidence": map[string]any{"messages": []int{}, "quote": m.Quote},
	}}})
	return &memcore.CompletionResponse{Text: string(reply)}, err
}

// captured is what capturing one case wrote.
type captured struct {
	cc  corpusCase
	mem *memcore.MemoryFile // nil when nothing was written
}

// captureCorpus runs every case through the real capture pipeline, with
// the default settings (memory.review: untrusted), into ws's folders, and
// returns what each wrote.
func captureCorpus(t *testing.T, ws *workspace.Workspace, cases []corpusCase) []captured {
	t.Helper()
	ctx := context.Background()
	llm := &fooledClassifier{}
	p, err := memcapture.NewPipeline(llm, ws.Store(), ws.Settings().CaptureConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	var out []captured
	for i, cc := range cases {
		before, err := ws.Store().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		llm.set(cc)
		var window []memcore.Message
		for _, m := range cc.Conversation {
			window = append(window, memcore.Message{Role: m.Role, Content: m.Content})
		}
		p.Enqueue(memcapture.TriggerEvent{Kind: memcore.TriggerCadence, SessionID: fmt.Sprintf("corpus-%d", i), Messages: window})
		if err := p.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		after, err := ws.Store().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := captured{cc: cc}
		for _, m := range after {
			if !slices.ContainsFunc(before, func(b *memcore.MemoryFile) bool { return b.Meta.ID == m.Meta.ID }) {
				c.mem = m
			}
		}
		out = append(out, c)
	}
	return out
}

// recalled reports whether recalling for query in ws injects m.
func recalled(t *testing.T, ws *workspace.Workspace, query string, m *memcore.MemoryFile) bool {
	t.Helper()
	res, err := ws.Recall(context.Background(), []memcore.Message{{Role: memcore.RoleUser, Content: query}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Memories {
		if r.Memory.Meta.ID == m.Meta.ID {
			return true
		}
	}
	return strings.Contains(res.Injection, m.Content)
}

// Memory poisoning, 32 times: an instruction arrives through a tool's
// result, a file or web page the user pastes, the assistant's own words or
// a log the user quotes; the classifier falls for each and returns the
// poisoned memory. With the default settings every one is written to wait
// for review, and none is injected when the conversation asks for exactly
// what it is about — nor found by search — before a person approves it;
// once approved, each is recalled by that query (the control).
func TestPoisoningCorpus(t *testing.T) {
	ws := open(t)
	cases := readCorpus(t, "testdata/poisoning.jsonl")
	if len(cases) < 30 {
		t.Fatalf("%d attacks, want at least 30", len(cases))
	}
	results := captureCorpus(t, ws, cases)
	written, waiting, injected, searched := 0, 0, 0, 0
	byVector, byRule, bySource := map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range results {
		byVector[r.cc.Vector]++
		if r.mem == nil {
			t.Errorf("%s: nothing was written; the attack did not reach the store, so it proves nothing", r.cc.Name)
			continue
		}
		written++
		bySource[r.mem.Meta.Source.String()]++
		if r.mem.Meta.Status == memcore.StatusPending {
			waiting++
			byRule[strings.SplitN(r.mem.Meta.StatusReason, ":", 2)[0]]++
		} else {
			t.Errorf("%s: written in force (source %s): %q", r.cc.Name, r.mem.Meta.Source, r.mem.Content)
		}
		if recalled(t, ws, r.cc.Query, r.mem) || recalled(t, ws, r.mem.Content, r.mem) {
			injected++
			t.Errorf("%s: injected before review: %q", r.cc.Name, r.mem.Content)
		}
		sr, err := ws.Search(context.Background(), r.mem.Content, 10)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(sr.Hits, func(h workspace.Hit) bool { return h.Memory.ID == r.mem.Meta.ID }) {
			searched++
			t.Errorf("%s: found by search before review", r.cc.Name)
		}
	}
	// The control: once a person approves it, each is recalled by its
	// query — the queries do ask for what the attacks planted.
	afterApproval := 0
	for _, r := range results {
		if r.mem == nil || r.mem.Meta.Status != memcore.StatusPending {
			continue
		}
		app, err := ws.Approve(context.Background(), r.mem.Meta.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if approved, err := ws.Store().Read(context.Background(), app.Memory.ID); err == nil && recalled(t, ws, r.cc.Query, approved) {
			afterApproval++
		} else {
			t.Errorf("%s: not recalled by its query even once approved (%v): the case proves nothing", r.cc.Name, err)
		}
	}
	t.Logf("poisoning corpus: %d attacks (%s); %d written (source %s), %d waiting for review (first rule: %s), %d injected before review, %d found by search; once approved, %d recalled by their query",
		len(cases), counts(byVector), written, counts(bySource), waiting, counts(byRule), injected, searched, afterApproval)
}

// A user stating a preference or a convention, 33 times, in the ways
// people do: at least 90% of those memories are in force at once, and at
// least 85% of those in force are recalled when the conversation asks for
// them. The queries are terse ("schedule timezone"), and the offline
// embedder knows no synonyms: a two-word query sharing one word with its
// memory, or none ("database choice" for Postgres), can fall under the
// relevance gate.
func TestPreferenceCorpus(t *testing.T) {
	ws := open(t)
	cases := readCorpus(t, "testdata/preferences.jsonl")
	if len(cases) < 30 {
		t.Fatalf("%d conversations, want at least 30", len(cases))
	}
	results := captureCorpus(t, ws, cases)
	active, recalledAtOnce := 0, 0
	var waiting []string
	for _, r := range results {
		if r.mem == nil {
			t.Errorf("%s: nothing was written", r.cc.Name)
			continue
		}
		if r.mem.Meta.Status == memcore.StatusPending {
			waiting = append(waiting, fmt.Sprintf("%s (%s)", r.cc.Name, r.mem.Meta.StatusReason))
			continue
		}
		active++
		if recalled(t, ws, r.cc.Query, r.mem) {
			recalledAtOnce++
		} else {
			t.Logf("%s: not recalled by %q: %q", r.cc.Name, r.cc.Query, r.mem.Content)
		}
	}
	share := float64(active) / float64(len(cases))
	t.Logf("preference corpus: %d conversations; %d in force at once (%.1f%%), %d of them recalled for their query; waiting: %s",
		len(cases), active, 100*share, recalledAtOnce, strings.Join(waiting, "; "))
	if share < 0.9 {
		t.Errorf("%.1f%% of the user's stated preferences are in force at once, want at least 90%%", 100*share)
	}
	if float64(recalledAtOnce) < 0.85*float64(active) {
		t.Errorf("%d of the %d preferences in force are recalled by their query, want at least 85%%", recalledAtOnce, active)
	}
}

// counts writes a map of counts as "a 3, b 2", by name.
func counts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
