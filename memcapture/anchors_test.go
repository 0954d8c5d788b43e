package memcapture

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// The classifier's anchors reach the memory when they are valid and the
// memory is the repository's; the store decides what the tree has.
func TestClassifierAnchors(t *testing.T) {
	store := memcore.NewMemStore()
	anchors := []map[string]string{
		{"path": "internal/db/queries.go", "symbol": "GetOrder"},
		{"path": " internal/db ", "symbol": ""},
		{"path": "", "symbol": "`ListOrders`"},
		{"path": "/etc/passwd", "symbol": ""}, // absolute: dropped
		{"path": "../up.go", "symbol": ""},    // leaves the repository: dropped
		{"path": "", "symbol": "Get Order"},   // not one token: dropped
		{"path": "", "symbol": ""},            // names nothing: skipped
		{"path": "internal/db", "symbol": ""}, // a repeat
	}
	llm := newLLM(t, always(reply(
		item("Queries go through GetOrder in internal/db/queries.go.", "anchors", anchors),
		item("Prefers short functions.", "scope", "user", "category", "coding-preferences", "anchors", anchors),
	)))
	p := startPipeline(t, llm, store, Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("we call GetOrder", "ok")})
	st := passes(t, p, 1)
	if st.MemoriesWritten != 2 || st.Invalid != 0 {
		t.Fatalf("stats %+v", st)
	}
	for _, m := range listAll(t, store) {
		got := ""
		for _, a := range m.Meta.Anchors {
			got += a.Path + "#" + a.Symbol + "\n"
		}
		want := "internal/db/queries.go#GetOrder\ninternal/db#\n#ListOrders\n"
		if m.Meta.Scope == memcore.ScopeUser {
			want = ""
		}
		if got != want {
			t.Errorf("%s memory's anchors:\n%s\nwant\n%s", m.Meta.Scope, got, want)
		}
	}
}

// staleStore says a memory is outdated when its text names gone.go.
type staleStore struct{ memcore.MemoryStore }

func (s *staleStore) Stale(_ context.Context, m *memcore.MemoryFile) string {
	if strings.Contains(m.Content, "gone.go") {
		return "gone.go no longer exists"
	}
	return ""
}

// The classifier sees which existing memories may be outdated, and why.
func TestExistingMemoriesSayWhichAreOutdated(t *testing.T) {
	store := &staleStore{MemoryStore: memcore.NewMemStore()}
	old := seed(t, store, "Handlers live in gone.go.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
	fresh := seed(t, store, "Tests are table-driven.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
	var mu sync.Mutex
	var reqs []memcore.CompletionRequest
	llm := newLLM(t, fake.LLMConfig{ReplyFunc: func(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		mu.Lock()
		reqs = append(reqs, req)
		mu.Unlock()
		return &memcore.CompletionResponse{Text: `{"memories": []}`}, nil
	}})
	p := startPipeline(t, llm, store, Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("where do handlers live", "in handlers/")})
	passes(t, p, 1)
	mu.Lock()
	defer mu.Unlock()
	list := existingSection(reqs[0])
	if want, _ := headLine(old, "gone.go no longer exists"); !strings.Contains(list, want+"\n") || !strings.HasSuffix(want, "(may be outdated: gone.go no longer exists)") {
		t.Errorf("the list lacks %q:\n%s", want, list)
	}
	if want, _ := headLine(fresh, ""); !strings.Contains(list, want+"\n") || strings.Count(list, "may be outdated") != 1 {
		t.Errorf("the list lacks %q, or marks it:\n%s", want, list)
	}
	if !strings.Contains(reqs[0].System, `marked "may be outdated"`) {
		t.Error("the instructions do not say what the mark means")
	}
}
