package memcapture

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// throughConversation is the prompt of req as a provider caches it (see
// promptText), up to the end of its conversation: what the next pass's
// prompt begins with when the window has not stepped forward.
func throughConversation(t *testing.T, req memcore.CompletionRequest) string {
	t.Helper()
	text := promptText(req)
	i := strings.Index(text, conversationHeading)
	if i < 0 {
		t.Fatalf("no conversation in the prompt:\n%s", text)
	}
	end := strings.Index(text[i:], "\n"+sinceHeading)
	if end < 0 {
		end = strings.LastIndex(text[i:], "\n"+replyReminder)
	}
	return text[:i+end]
}

// wantPrefix fails the test unless request next begins with request
// prev's prompt up to the end of its conversation.
func wantPrefix(t *testing.T, prev, next memcore.CompletionRequest) {
	t.Helper()
	if through := throughConversation(t, prev); !strings.HasPrefix(promptText(next), through) {
		t.Errorf("the prompt does not begin with the previous one up to its conversation's end:\nprevious:\n%s\n\nthis one:\n%s", through, promptText(next))
	}
}

// enqueue hands the pipeline a turn trigger of session with msgs and
// waits until it has finished pass n.
func enqueue(t *testing.T, p *Pipeline, n uint64, session string, msgs []memcore.Message) {
	t.Helper()
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: msgs, SessionID: session})
	passes(t, p, n)
}

// The prompt is laid out so that consecutive passes share the longest
// prefix: the pinned existing-memories list, then the conversation oldest
// first, then what changed since the list was pinned (the memories written
// since, newest first — by this pipeline or another session), then the
// closing line.
func TestPromptLayoutPinsTheList(t *testing.T) {
	eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
		a := seed(t, store, "Uses tabs for indentation.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
		b := seed(t, store, "Prefers errors.As over type assertions.", memcore.ScopeUser, memcore.CategoryCodingPreferences, t0.Add(time.Minute), nil)
		llm := newLLM(t, fake.LLMConfig{Replies: []string{reply(item("Formats Go code with gofumpt.", "scope", "user", "category", "coding-preferences")), nothing, nothing}})
		p := startPipeline(t, llm, store, Config{Clock: func() time.Time { return t0.Add(time.Hour) }})

		conv := win("From now on use gofumpt.", "Understood, gofumpt it is.")
		enqueue(t, p, 1, "s", conv)
		written := newMemories(t, store, a, b)
		if len(written) != 1 {
			t.Fatalf("the first pass wrote %d memories, want 1", len(written))
		}
		m1 := written[0]
		// Another session writes a memory, later than the pipeline's.
		other := seed(t, store, "Deploys happen on Tuesdays.", memcore.ScopeRepo, memcore.CategoryArchitecturalDecisions, t0.Add(2*time.Hour), nil)
		conv = append(conv, win("Also run the linter before committing.", "Will do.")...)
		enqueue(t, p, 2, "s", conv)
		conv = append(conv, win("And keep lines under 100 columns.", "Noted.")...)
		enqueue(t, p, 3, "s", conv)

		reqs := llm.Requests()
		if len(reqs) != 3 {
			t.Fatalf("%d classifier calls, want 3", len(reqs))
		}
		for i, req := range reqs {
			text := userText(req)
			if !strings.HasPrefix(text, existingHeading+"\n") {
				t.Errorf("pass %d: the prompt does not begin with the pinned list:\n%s", i+1, text)
			}
			if ids := listedIDs(req); !slices.Equal(ids, []string{b.Meta.ID, a.Meta.ID}) {
				t.Errorf("pass %d: pinned %v, want %v (the list of the first pass, newest first)", i+1, ids, []string{b.Meta.ID, a.Meta.ID})
			}
			if existingSection(req) != existingSection(reqs[0]) {
				t.Errorf("pass %d: the pinned list changed:\n%s\nwas:\n%s", i+1, existingSection(req), existingSection(reqs[0]))
			}
			if last := conv[2*i+1].Content; strings.Index(text, existingHeading) > strings.Index(text, conversationHeading) ||
				strings.Index(text, conversationHeading) > strings.Index(text, last) {
				t.Errorf("pass %d: want the pinned list, then the conversation:\n%s", i+1, text)
			}
			if !strings.HasSuffix(text, "\n\n"+replyReminder) {
				t.Errorf("pass %d: the prompt does not end with the reminder:\n%s", i+1, text)
			}
		}
		if s := sinceSection(reqs[0]); s != "" {
			t.Errorf("pass 1 lists memories added since:\n%s", s)
		}
		for i, req := range reqs[1:] {
			text := userText(req)
			if ids, want := sinceIDs(req), []string{other.Meta.ID, m1.Meta.ID}; !slices.Equal(ids, want) {
				t.Errorf("pass %d: added since %v, want %v (newest first)", i+2, ids, want)
			}
			if strings.Index(text, sinceHeading) < strings.Index(text, conv[2*i+3].Content) {
				t.Errorf("pass %d: the memories added since come before the conversation's end:\n%s", i+2, text)
			}
			if line, _ := headLine(m1, ""); strings.Count(text, line+"\n") != 1 || !strings.Contains(sinceSection(req), line+"\n") {
				t.Errorf("pass %d: the memory written since is not listed once, after the conversation:\n%s", i+2, text)
			}
			wantPrefix(t, reqs[i], req)
		}
	})
}

// A new window step and a new session choose their list anew: it then
// holds the memories written since, and nothing is listed as added since.
// A session's pin outlives another session's passes.
func TestListRepinnedOnStepAndSession(t *testing.T) {
	store := memcore.NewMemStore()
	a := seed(t, store, "Uses tabs for indentation.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
	llm := newLLM(t, fake.LLMConfig{Replies: []string{reply(item("Runs the linter before every commit.")), nothing, nothing, nothing, nothing}})
	const budget = 100
	p := startPipeline(t, llm, store, Config{WindowTokens: budget, Clock: func() time.Time { return t0.Add(time.Hour) }})

	var conv []memcore.Message
	for i := range 40 {
		conv = append(conv, win(fmt.Sprintf("Question %d about the build and its cache.", i), fmt.Sprintf("Answer %d: clear the cache.", i))...)
	}
	firstWindow, _ := p.window(conv[:2])
	first := firstWindow[0]
	// grown is the longest conversation whose window still begins with
	// the first message; stepped the shortest whose window does not.
	grown, stepped := 2, 0
	for n := 4; n <= len(conv); n += 2 {
		if w, _ := p.window(conv[:n]); w[0] != first {
			stepped = n
			break
		}
		grown = n
	}
	if grown < 4 || stepped == 0 {
		t.Fatalf("the conversation does not step forward within %d messages (grown %d)", len(conv), grown)
	}

	enqueue(t, p, 1, "a", conv[:2]) // pins [a]; writes m1
	m1 := newMemories(t, store, a)[0]
	// Session b's window begins with the same message.
	enqueue(t, p, 2, "b", append(slices.Clone(conv[:1]), memcore.Message{Role: memcore.RoleAssistant, Content: "Another answer."}))
	enqueue(t, p, 3, "a", conv[:grown])
	enqueue(t, p, 4, "a", conv[:stepped])
	enqueue(t, p, 5, "a", conv[:stepped+2])

	reqs := llm.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d classifier calls, want 5", len(reqs))
	}
	for _, c := range []struct {
		pass          int
		pinned, since []string
	}{
		{1, []string{a.Meta.ID}, nil},
		{2, []string{m1.Meta.ID, a.Meta.ID}, nil}, // a new session: chosen anew
		{3, []string{a.Meta.ID}, []string{m1.Meta.ID}},
		{4, []string{m1.Meta.ID, a.Meta.ID}, nil}, // a window step: chosen anew
		{5, []string{m1.Meta.ID, a.Meta.ID}, nil},
	} {
		req := reqs[c.pass-1]
		if got := listedIDs(req); !slices.Equal(got, c.pinned) {
			t.Errorf("pass %d: pinned %v, want %v", c.pass, got, c.pinned)
		}
		if got := sinceIDs(req); !slices.Equal(got, c.since) {
			t.Errorf("pass %d: added since %v, want %v", c.pass, got, c.since)
		}
	}
	wantPrefix(t, reqs[0], reqs[2]) // session a, across session b's pass
	wantPrefix(t, reqs[3], reqs[4])
	if strings.HasPrefix(promptText(reqs[3]), throughConversation(t, reqs[2])) {
		t.Error("the window stepped forward, yet the prompt begins with the previous one's conversation")
	}
}

// A pinned line whose memory was superseded or forgotten after the list
// was pinned stays as it was, so the prefix does not change; the new
// version is listed as added since. A reply naming the pinned, outdated id
// supersedes the chain's head, and a link to the forgotten chain is
// dropped.
func TestStalePinnedIDs(t *testing.T) {
	eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
		x := seed(t, store, "Deploys happen on Tuesdays.", memcore.ScopeRepo, memcore.CategoryArchitecturalDecisions, t0, nil)
		gone := seed(t, store, "Uses SQLite for local development.", memcore.ScopeRepo, memcore.CategoryArchitecturalDecisions, t0.Add(time.Minute), nil)
		v1 := seed(t, store, "Indent YAML with tabs.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0.Add(2*time.Minute), nil,
			edge(x.Meta.ID, memcore.RelationshipRelatesTo))

		var second string
		llm := newLLM(t, fake.LLMConfig{Replies: []string{nothing}, ReplyFunc: func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
			return &memcore.CompletionResponse{Text: second}, nil
		}})
		p := startPipeline(t, llm, store, Config{Clock: func() time.Time { return t0.Add(time.Hour) }})
		conv := win("How do we indent YAML?", "With tabs.")
		enqueue(t, p, 1, "s", conv)

		// Another session changes the chain and forgets gone.
		v2 := seed(t, store, "Indent YAML with two spaces.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0.Add(3*time.Minute), v1)
		retired := memcore.NewVersion(gone, "forget", memcore.TriggerManual)
		retired.Content, retired.Meta.Retired, retired.Meta.RetiredReason = gone.Content, true, "moved to Postgres"
		if err := store.Write(context.Background(), retired); err != nil {
			t.Fatal(err)
		}
		// The classifier names the ids of the pinned list.
		second = reply(item("Indent YAML with four spaces.", "supersedes", v1.Meta.ID,
			"related", []any{rel(gone.Meta.ID, "relates-to"), rel(x.Meta.ID, "refines")}))
		conv = append(conv, win("No: four spaces, and we use Postgres now.", "Four spaces it is.")...)
		enqueue(t, p, 2, "s", conv)

		reqs := llm.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d classifier calls, want 2", len(reqs))
		}
		if want := []string{v1.Meta.ID, gone.Meta.ID, x.Meta.ID}; !slices.Equal(listedIDs(reqs[0]), want) {
			t.Fatalf("pass 1 pinned %v, want %v", listedIDs(reqs[0]), want)
		}
		if existingSection(reqs[1]) != existingSection(reqs[0]) {
			t.Errorf("the pinned list changed after its memories did:\n%s\nwas:\n%s", existingSection(reqs[1]), existingSection(reqs[0]))
		}
		wantPrefix(t, reqs[0], reqs[1])
		if got := sinceIDs(reqs[1]); !slices.Equal(got, []string{v2.Meta.ID}) {
			t.Errorf("added since %v, want the new version %s only (a forgotten chain is not listed)", got, v2.Meta.ID)
		}

		s := p.Stats()
		written := newMemories(t, store, x, gone, v1, v2, retired)
		if s.MemoriesWritten != 1 || len(written) != 1 {
			t.Fatalf("written %d (stored %d), want 1", s.MemoriesWritten, len(written))
		}
		m := written[0]
		wantVersion(t, m, v2, 3)
		wantRelated(t, m, edge(x.Meta.ID, memcore.RelationshipRelatesTo), edge(x.Meta.ID, memcore.RelationshipRefines))
		if s.EdgesDropped != 1 {
			t.Errorf("EdgesDropped = %d, want 1 (the link to the forgotten chain)", s.EdgesDropped)
		}
		if forks := memcore.NewGraph(listAll(t, store)).Forks(); len(forks) != 0 {
			t.Errorf("the chain forked: %+v", forks)
		}
	})
}

// When the memories written since the list was pinned no longer fit the
// budget, the list is chosen anew rather than leaving some out; each list
// stays within the budget.
func TestAddedSinceOverflowRepins(t *testing.T) {
	const budget = 50 // two list lines of 99 runes
	store := memcore.NewMemStore()
	var all []*memcore.MemoryFile
	add := func(n int) {
		for range n {
			i := len(all)
			all = append(all, seed(t, store, fmt.Sprintf("Convention %d of the build.", i), memcore.ScopeRepo, memcore.CategoryProjectConventions,
				t0.Add(time.Duration(i)*time.Minute), nil))
		}
	}
	ids := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, all[i].Meta.ID)
		}
		return out
	}
	add(3)
	llm := newLLM(t, always(nothing))
	p := startPipeline(t, llm, store, Config{ExistingTokens: budget})
	conv := win("Which conventions does the build follow?", "Several.")
	enqueue(t, p, 1, "s", conv)
	add(1)
	conv = append(conv, win("Go on.", "Convention 3 too.")...)
	enqueue(t, p, 2, "s", conv)
	add(2)
	conv = append(conv, win("More?", "Conventions 4 and 5.")...)
	enqueue(t, p, 3, "s", conv)
	add(1)
	conv = append(conv, win("And?", "Convention 6.")...)
	enqueue(t, p, 4, "s", conv)

	reqs := llm.Requests()
	for _, c := range []struct {
		pass          int
		pinned, since []string
	}{
		{1, ids(2, 1), nil},
		{2, ids(2, 1), ids(3)},
		{3, ids(5, 4), nil}, // three added since do not fit: chosen anew
		{4, ids(5, 4), ids(6)},
	} {
		req := reqs[c.pass-1]
		if got := listedIDs(req); !slices.Equal(got, c.pinned) {
			t.Errorf("pass %d: pinned %v, want %v", c.pass, got, c.pinned)
		}
		if got := sinceIDs(req); !slices.Equal(got, c.since) {
			t.Errorf("pass %d: added since %v, want %v", c.pass, got, c.since)
		}
		for _, list := range []string{existingSection(req), sinceSection(req)} {
			if cost := memcore.EstimateTokens(list); cost > budget {
				t.Errorf("pass %d: a list of %d tokens, budget %d", c.pass, cost, budget)
			}
		}
	}
	wantPrefix(t, reqs[0], reqs[1])
	wantPrefix(t, reqs[2], reqs[3])
}

// A pipeline keeps at most maxPins lists; the least recently used is
// forgotten, and that session's next pass chooses its list anew.
func TestPinsBounded(t *testing.T) {
	store := memcore.NewMemStore()
	a := seed(t, store, "Uses tabs for indentation.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
	llm := newLLM(t, always(nothing))
	p := newPipeline(t, llm, store, Config{}) // passes run here, one after another
	ctx := context.Background()
	conv := func(session, n int) []memcore.Message {
		var out []memcore.Message
		for i := range n {
			out = append(out, win(fmt.Sprintf("Session %d, question %d.", session, i), "An answer.")...)
		}
		return out
	}
	for s := range maxPins + 1 {
		if s == 1 {
			// Sessions 1 and later pin a list that holds b; session 0's
			// was pinned before it was written.
			seed(t, store, "Prefers table-driven tests.", memcore.ScopeUser, memcore.CategoryCodingPreferences, t0.Add(time.Minute), nil)
		}
		p.process(ctx, TriggerEvent{Kind: memcore.TriggerCadence, Messages: conv(s, 1), SessionID: fmt.Sprint("session-", s)})
		if len(p.pins) > maxPins {
			t.Fatalf("%d pins kept, at most %d allowed", len(p.pins), maxPins)
		}
	}
	last := fmt.Sprint("session-", maxPins)
	p.process(ctx, TriggerEvent{Kind: memcore.TriggerCadence, Messages: conv(maxPins, 2), SessionID: last})
	p.process(ctx, TriggerEvent{Kind: memcore.TriggerCadence, Messages: conv(0, 2), SessionID: "session-0"})

	reqs := llm.Requests()
	if len(reqs) != maxPins+3 {
		t.Fatalf("%d classifier calls, want %d", len(reqs), maxPins+3)
	}
	if got := listedIDs(reqs[0]); !slices.Equal(got, []string{a.Meta.ID}) {
		t.Errorf("session 0 first pinned %v, want only %s", got, a.Meta.ID)
	}
	wantPrefix(t, reqs[maxPins], reqs[maxPins+1]) // the most recent session kept its pin
	// Session 0's pin was forgotten: its list is chosen anew.
	if got := listedIDs(reqs[maxPins+2]); len(got) != 2 || sinceSection(reqs[maxPins+2]) != "" {
		t.Errorf("session 0 after its pin was forgotten: pinned %v, added since %q; want both memories pinned", got, sinceSection(reqs[maxPins+2]))
	}
	if len(p.pins) != maxPins {
		t.Errorf("%d pins kept, want %d", len(p.pins), maxPins)
	}
}
