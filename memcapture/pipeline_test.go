package memcapture

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

func TestLatestTurnWins(t *testing.T) {
	llm := newLLM(t, always(nothing))
	p := newPipeline(t, llm, memcore.NewMemStore(), Config{})
	for i := 1; i <= 5; i++ {
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win(fmt.Sprintf("window %d", i)), SessionID: "s"})
	}
	must(0, p.Start(context.Background()))
	s := passes(t, p, 1)
	if s.Coalesced != 4 || s.Triggers != 5 {
		t.Errorf("Coalesced = %d, Triggers = %d; want 4 and 5", s.Coalesced, s.Triggers)
	}
	reqs := llm.Requests()
	if len(reqs) != 1 || !strings.Contains(userText(reqs[0]), "window 5") || strings.Contains(userText(reqs[0]), "window 4") {
		t.Fatalf("want one call with the latest window, got %d calls", len(reqs))
	}
}

func TestCompactionsFirstAndNotCoalesced(t *testing.T) {
	llm := newLLM(t, always(nothing))
	p := newPipeline(t, llm, memcore.NewMemStore(), Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("turn A")})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win("arc B")})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("turn C")})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win("arc D")})
	must(0, p.Start(context.Background()))
	passes(t, p, 3)
	var order []string
	for _, r := range llm.Requests() {
		for _, w := range []string{"turn A", "arc B", "turn C", "arc D"} {
			if strings.Contains(userText(r), w) {
				order = append(order, w)
			}
		}
	}
	if got := strings.Join(order, ", "); got != "arc B, arc D, turn C" {
		t.Errorf("processing order = %s; want arc B, arc D, turn C", got)
	}
}

func TestCompactionQueueBound(t *testing.T) {
	p := newPipeline(t, newLLM(t, fake.LLMConfig{}), memcore.NewMemStore(), Config{MaxPendingCompactions: 2})
	for i := range 5 {
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win(fmt.Sprint(i))})
	}
	if s := p.Stats(); s.Triggers != 2 || s.Dropped != 3 {
		t.Errorf("Triggers = %d, Dropped = %d; want 2 and 3", s.Triggers, s.Dropped)
	}
}

// Only cadence and compaction triggers start passes; any other kind is
// dropped and counted.
func TestUnknownKindDropped(t *testing.T) {
	p := newPipeline(t, newLLM(t, fake.LLMConfig{}), memcore.NewMemStore(), Config{})
	for _, kind := range []memcore.Trigger{memcore.TriggerManual, "", "turn", "Cadence"} {
		p.Enqueue(TriggerEvent{Kind: kind, Messages: win("x")})
	}
	if s := p.Stats(); s.Triggers != 0 || s.Dropped != 4 {
		t.Errorf("Triggers = %d, Dropped = %d; want 0 and 4", s.Triggers, s.Dropped)
	}
}

func TestIdenticalWindowSkipped(t *testing.T) {
	llm := newLLM(t, always(nothing))
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
	w := win("we use tabs", "noted")
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: w})
	passes(t, p, 1)
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: w})
	passes(t, p, 2)
	// Differing only in tool content, which the classifier never sees.
	withTool := append(win("we use tabs", "noted <tool_call>ls</tool_call>"), memcore.Message{Role: memcore.RoleTool, Content: "a.go"})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: withTool})
	s := passes(t, p, 3)
	if s.SkippedUnchanged != 2 || llm.Calls() != 1 {
		t.Errorf("SkippedUnchanged = %d, calls = %d; want 2 and 1", s.SkippedUnchanged, llm.Calls())
	}
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: append(w, memcore.Message{Role: memcore.RoleUser, Content: "more"})})
	passes(t, p, 4)
	if llm.Calls() != 2 {
		t.Errorf("a changed window was not classified: calls = %d", llm.Calls())
	}
}

func TestFailedPassIsNotRememberedAsClassified(t *testing.T) {
	llm := newLLM(t, always(nothing))
	failNext(t, llm, 1, memcore.ErrInvalidRequest)
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
	w := win("same window")
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: w})
	passes(t, p, 1)
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: w})
	s := passes(t, p, 2)
	if llm.Calls() != 2 || s.SkippedUnchanged != 0 {
		t.Errorf("calls = %d, SkippedUnchanged = %d; the window whose pass failed must be classified again", llm.Calls(), s.SkippedUnchanged)
	}
}

func TestEmptyWindowSkipped(t *testing.T) {
	llm := newLLM(t, always(nothing))
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: []memcore.Message{{Role: memcore.RoleTool, Content: "output"}}})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction})
	s := passes(t, p, 2)
	if s.SkippedEmpty != 2 || llm.Calls() != 0 {
		t.Errorf("SkippedEmpty = %d, calls = %d; want 2 and 0", s.SkippedEmpty, llm.Calls())
	}
}

func TestWindowCappedOnRuneBoundaries(t *testing.T) {
	const budget = 60
	llm := newLLM(t, always(nothing))
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{WindowTokens: budget})
	var msgs []memcore.Message
	for i := range 40 {
		msgs = append(msgs, win(fmt.Sprintf("OLD%02d 日本語のテキスト🙂🙂 ümlaut", i))...)
	}
	msgs = append(msgs, memcore.Message{Role: memcore.RoleAssistant, Content: "NEWEST 最後のメッセージ"})

	got, _ := p.window(msgs)
	if n := memcore.WindowTokens(got); n > budget {
		t.Errorf("window costs %d tokens, budget %d", n, budget)
	}
	if got[len(got)-1].Content != "NEWEST 最後のメッセージ" || len(got) >= len(msgs) {
		t.Errorf("the newest text must be kept and the oldest dropped; got %d of %d messages", len(got), len(msgs))
	}
	for _, m := range got {
		if !utf8.ValidString(m.Content) {
			t.Errorf("message cut inside a rune: %q", m.Content)
		}
	}

	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: msgs})
	passes(t, p, 1)
	text := userText(llm.Requests()[0])
	if !utf8.ValidString(text) || !strings.Contains(text, "NEWEST") || strings.Contains(text, "OLD00") {
		t.Errorf("prompt does not hold the capped window:\n%s", text)
	}
}

func TestNoToolContentReachesTheClassifier(t *testing.T) {
	const leak = "TOOL-SECRET-OUTPUT"
	llm := newLLM(t, always(nothing))
	llm.Enqueue("not json at all") // so the retry request is recorded too
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
	msgs := []memcore.Message{
		{Role: memcore.RoleSystem, Content: "system " + leak},
		{Role: memcore.RoleUser, Content: "please list the files"},
		{Role: memcore.RoleAssistant, Content: "Sure. <tool_call name=\"ls\">" + leak + "</tool_call> Done."},
		{Role: memcore.RoleTool, Content: leak},
		{Role: memcore.RoleUser, Content: "<tool_result>" + leak + "</tool_result>thanks, always use tabs"},
		{Role: memcore.RoleAssistant, Content: "<TOOL>" + leak + "</TOOL>"},
		{Role: memcore.RoleAssistant, Content: "ok <tool>unclosed " + leak},
	}
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: msgs})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: msgs})
	passes(t, p, 2)
	reqs := llm.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests recorded, want at least 2", len(reqs))
	}
	for i, r := range reqs {
		all := r.System
		for _, m := range r.Messages {
			all += string(m.Role) + m.Content
		}
		if strings.Contains(all, leak) {
			t.Errorf("request %d holds tool content:\n%s", i, all)
		}
		if !strings.Contains(all, "always use tabs") {
			t.Errorf("request %d lost the user's text", i)
		}
	}
}

func TestEnqueueBeforeStartWaits(t *testing.T) {
	llm := newLLM(t, always(nothing))
	p := newPipeline(t, llm, memcore.NewMemStore(), Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win("early")})
	if llm.Calls() != 0 {
		t.Fatal("classifier called before Start")
	}
	must(0, p.Start(context.Background()))
	passes(t, p, 1)
	if llm.Calls() != 1 {
		t.Errorf("calls = %d, want 1", llm.Calls())
	}
}

func TestStartTwiceAndAfterClose(t *testing.T) {
	p := newPipeline(t, newLLM(t, fake.LLMConfig{}), memcore.NewMemStore(), Config{})
	must(0, p.Start(context.Background()))
	if err := p.Start(context.Background()); !errors.Is(err, ErrAlreadyStarted) {
		t.Errorf("second Start: err = %v, want ErrAlreadyStarted", err)
	}
	must(0, p.Close(context.Background()))
	if err := p.Start(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: err = %v, want ErrClosed", err)
	}
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("late")})
	if s := p.Stats(); s.Dropped != 1 || s.Triggers != 0 {
		t.Errorf("Enqueue after Close: Dropped = %d, Triggers = %d; want 1 and 0", s.Dropped, s.Triggers)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCloseDrains(t *testing.T) {
	eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
		llm, entered, release := blockingLLM(t, reply(mem{"content": "Prefers tabs.", "scope": "user", "category": "coding-preferences"}))
		p := startPipeline(t, llm, store, Config{})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("first")})
		<-entered
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win("arc 1")})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win("arc 2")})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("latest turn")})

		closed := make(chan error, 1)
		go func() { closed <- p.Close(context.Background()) }()
		close(release)
		if err := <-closed; err != nil {
			t.Fatalf("Close: %v", err)
		}
		s := p.Stats()
		if s.Passes != 4 || llm.Calls() != 4 || s.Dropped != 0 {
			t.Errorf("after Close: Passes = %d, calls = %d, Dropped = %d; want 4, 4, 0", s.Passes, llm.Calls(), s.Dropped)
		}
		// Four passes all answered "Prefers tabs.": the first is written, the
		// rest are duplicates of it.
		if n := len(listAll(t, store)); n != 1 || s.Duplicates != 3 {
			t.Errorf("stored %d memories, Duplicates = %d; want 1 and 3", n, s.Duplicates)
		}
	})
}

func TestCloseGivesUpWhenItsContextEnds(t *testing.T) {
	llm, entered, _ := blockingLLM(t, nothing) // never released
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("stuck")})
	<-entered
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win("waiting")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: err = %v, want context.Canceled", err)
	}
	// The stuck call is cancelled and the waiting trigger dropped.
	s := waitStats(t, p, func(s Stats) bool { return s.Passes == 1 && s.Dropped == 1 })
	if s.LLMErrors != 1 {
		t.Errorf("LLMErrors = %d, want 1 (the cancelled call)", s.LLMErrors)
	}
}

func TestCloseBeforeStartDropsWaiting(t *testing.T) {
	p := newPipeline(t, newLLM(t, fake.LLMConfig{}), memcore.NewMemStore(), Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("a")})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win("b")})
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Dropped != 2 {
		t.Errorf("Dropped = %d, want 2", s.Dropped)
	}
}

func TestStartContextStopsThePipeline(t *testing.T) {
	llm, entered, _ := blockingLLM(t, nothing)
	p := newPipeline(t, llm, memcore.NewMemStore(), Config{})
	ctx, cancel := context.WithCancel(context.Background())
	must(0, p.Start(ctx))
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("x")})
	<-entered
	cancel()
	waitStats(t, p, func(s Stats) bool { return s.Passes == 1 })
	must(0, p.Close(context.Background()))
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("y")})
	if s := p.Stats(); s.Dropped != 1 {
		t.Errorf("Dropped = %d after the pipeline stopped, want 1", s.Dropped)
	}
}

func TestRebuildOncePerWritingPass(t *testing.T) {
	eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
		var rebuilds atomic.Int32
		llm := newLLM(t, fake.LLMConfig{Replies: []string{reply(mem{"content": "Uses tabs.", "scope": "repo", "category": "project-conventions"},
			mem{"content": "Prefers table-driven tests.", "scope": "user", "category": "coding-preferences"}), nothing}})
		p := startPipeline(t, llm, store, Config{Rebuild: func() { rebuilds.Add(1) }})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("one")})
		passes(t, p, 1)
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("two")})
		s := passes(t, p, 2)
		if rebuilds.Load() != 1 || s.Rebuilds != 1 || s.MemoriesWritten != 2 {
			t.Errorf("rebuilds = %d (Stats %d), written = %d; want 1, 1, 2", rebuilds.Load(), s.Rebuilds, s.MemoriesWritten)
		}
	})
}

func TestPanickingRebuildDoesNotStopThePipeline(t *testing.T) {
	llm := newLLM(t, fake.LLMConfig{ReplyFunc: func(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		content := "Memory of the first window."
		if strings.Contains(userText(req), "second") {
			content = "Memory of the second window."
		}
		return &memcore.CompletionResponse{Text: reply(mem{"content": content, "scope": "repo", "category": "patterns"})}, nil
	}})
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{Rebuild: func() { panic("rebuild exploded") }})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("first")})
	passes(t, p, 1)
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("second")})
	s := passes(t, p, 2)
	if s.Panics != 2 || s.MemoriesWritten != 2 {
		t.Errorf("Panics = %d, written = %d; want 2 and 2", s.Panics, s.MemoriesWritten)
	}
}

func TestPanickingProviderDoesNotStopThePipeline(t *testing.T) {
	var calls atomic.Int32
	llm := newLLM(t, fake.LLMConfig{ReplyFunc: func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		if calls.Add(1) == 1 {
			panic("provider bug")
		}
		return &memcore.CompletionResponse{Text: nothing}, nil
	}})
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("a")})
	passes(t, p, 1)
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("b")})
	if s := passes(t, p, 2); s.Panics != 1 || calls.Load() != 2 {
		t.Errorf("Panics = %d, calls = %d; want 1 and 2", s.Panics, calls.Load())
	}
}

func TestClassifierErrors(t *testing.T) {
	ok := reply(mem{"content": "Prefers errors.As.", "scope": "user", "category": "coding-preferences"})
	cases := []struct {
		name        string
		fails       int
		err         error
		wantCalls   int
		wantWritten uint64
		wantErrors  uint64
	}{
		{"transient then success", 2, memcore.ErrRateLimited, 3, 1, 0},
		{"unavailable then success", 1, memcore.ErrUnavailable, 2, 1, 0},
		{"transient until attempts run out", 3, memcore.ErrUnavailable, 3, 0, 1},
		{"permanent", 1, memcore.ErrUnauthenticated, 1, 0, 1},
		{"input too large", 1, memcore.ErrInputTooLarge, 1, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
				cfg := always(ok)
				cfg.FailNext, cfg.FailWith = c.fails, c.err
				llm := newLLM(t, cfg)
				var rebuilds atomic.Int32
				p := startPipeline(t, llm, store, Config{Rebuild: func() { rebuilds.Add(1) }})
				p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("x")})
				s := passes(t, p, 1)
				if llm.Calls() != c.wantCalls || s.MemoriesWritten != c.wantWritten || s.LLMErrors != c.wantErrors {
					t.Errorf("calls = %d, written = %d, LLMErrors = %d; want %d, %d, %d",
						llm.Calls(), s.MemoriesWritten, s.LLMErrors, c.wantCalls, c.wantWritten, c.wantErrors)
				}
				if got := len(listAll(t, store)); uint64(got) != c.wantWritten || int32(got) != rebuilds.Load() {
					t.Errorf("stored %d, rebuilds %d; want %d", got, rebuilds.Load(), c.wantWritten)
				}
			})
		})
	}
}

func TestPassDeadline(t *testing.T) {
	llm, _, _ := blockingLLM(t, nothing) // answers only when its context ends
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{PassTimeout: 20 * time.Millisecond})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("a")})
	s := passes(t, p, 1)
	if s.LLMErrors != 1 {
		t.Errorf("LLMErrors = %d, want 1", s.LLMErrors)
	}
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("b")})
	passes(t, p, 2) // the pipeline carries on
}

// failingStore fails writes of memories whose content contains "FAIL" and,
// when listFails is set, every List.
type failingStore struct {
	memcore.MemoryStore
	listFails bool
}

var errDisk = errors.New("disk full")

func (s failingStore) Write(ctx context.Context, m *memcore.MemoryFile) error {
	if strings.Contains(m.Content, "FAIL") {
		return errDisk
	}
	return s.MemoryStore.Write(ctx, m)
}

func (s failingStore) List(ctx context.Context) ([]*memcore.MemoryFile, error) {
	if s.listFails {
		return nil, errDisk
	}
	return s.MemoryStore.List(ctx)
}

func TestStoreFailures(t *testing.T) {
	eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
		head := seed(t, store, "Uses spaces.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
		var rebuilds atomic.Int32
		llm := newLLM(t, always(reply(
			mem{"content": "Uses tabs. FAIL", "scope": "repo", "category": "project-conventions", "supersedes": head.Meta.ID},
			mem{"content": "Uses tabs, width 4.", "scope": "repo", "category": "project-conventions", "supersedes": head.Meta.ID},
			mem{"content": "Prefers short names.", "scope": "user", "category": "coding-preferences"},
		)))
		p := startPipeline(t, llm, failingStore{MemoryStore: store}, Config{Rebuild: func() { rebuilds.Add(1) }})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("x")})
		s := passes(t, p, 1)
		if s.StoreErrors != 1 || s.MemoriesWritten != 2 || rebuilds.Load() != 1 {
			t.Errorf("StoreErrors = %d, written = %d, rebuilds = %d; want 1, 2, 1", s.StoreErrors, s.MemoriesWritten, rebuilds.Load())
		}
		// The second item was chained onto the first, which failed: it must
		// supersede the stored head instead, as version 2.
		for _, m := range newMemories(t, store, head) {
			if m.Meta.Scope == memcore.ScopeRepo && (m.Meta.Supersedes == nil || *m.Meta.Supersedes != head.Meta.ID || m.Meta.Version != 2) {
				t.Errorf("memory %q: supersedes %v version %d; want %s version 2", m.Content, m.Meta.Supersedes, m.Meta.Version, head.Meta.ID)
			}
		}

		p2 := startPipeline(t, llm, failingStore{MemoryStore: store, listFails: true}, Config{})
		p2.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("y")})
		if s := passes(t, p2, 1); s.StoreErrors != 1 || s.MemoriesWritten != 0 {
			t.Errorf("list failure: StoreErrors = %d, written = %d; want 1 and 0", s.StoreErrors, s.MemoriesWritten)
		}
	})
}

func TestStatsCountTokens(t *testing.T) {
	// Every call reports a usage of its own, unlike any other call's, so
	// the total tells which calls were counted.
	var calls atomic.Int64
	var want atomic.Uint64
	llm := newLLM(t, fake.LLMConfig{ReplyFunc: func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		n := int(calls.Add(1))
		text := nothing
		if n == 1 {
			text = "garbage" // one retry: two calls in the first pass
		}
		usage := memcore.Usage{InputTokens: 100 * n, OutputTokens: n}
		want.Add(uint64(usage.Total()))
		return &memcore.CompletionResponse{Text: text, Usage: usage}, nil
	}})
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("a")})
	passes(t, p, 1)
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("b")})
	s := passes(t, p, 2)
	if n := calls.Load(); n != 3 {
		t.Fatalf("%d classifier calls, want 3 (a retry in the first pass)", n)
	}
	if s.TokensUsed != want.Load() {
		t.Errorf("TokensUsed = %d, want %d (101 + 202 + 303, every call's usage)", s.TokensUsed, want.Load())
	}
}
