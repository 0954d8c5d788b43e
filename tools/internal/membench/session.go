package membench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// SessionFigures are the prompt sizes of a scripted capture session: a
// pass after every turn (cadence 1) through the real pipeline, whose
// scripted classifier records every request. Tokens are
// memcore.EstimateTokens of the request as a provider caches it: the
// system prompt, then the messages in order.
type SessionFigures struct {
	Turns  int `json:"turns"`
	Passes int `json:"passes"`
	// StoreMemories is how many memories the store held before the
	// session.
	StoreMemories int `json:"store_memories"`
	// ConversationTokens is the whole session's conversation
	// (memcore.WindowTokens).
	ConversationTokens int `json:"conversation_tokens"`
	// PromptTokensPerPass and SharedTokensPerPass are averages per pass:
	// the whole prompt, and its longest common prefix with the previous
	// pass's prompt (0 for the first pass).
	PromptTokensPerPass float64 `json:"prompt_tokens_per_pass"`
	SharedTokensPerPass float64 `json:"shared_tokens_per_pass"`
	// NewTokensPerTurn is the prompt tokens not shared with the previous
	// prompt, summed over the passes, per turn.
	NewTokensPerTurn float64 `json:"new_tokens_per_turn"`
	// SharedRatio is the shared tokens over the prompt tokens, summed over
	// the session.
	SharedRatio float64 `json:"shared_ratio"`
	// ListTokensPerPass is the average size of the lists of existing
	// memories: the one pinned before the conversation and the memories
	// added since it was pinned, after it. AddedSinceTokensPerPass is the
	// average size of the second alone.
	ListTokensPerPass       float64 `json:"list_tokens_per_pass"`
	AddedSinceTokensPerPass float64 `json:"added_since_tokens_per_pass"`
	// WindowSteps counts the passes whose conversation does not extend the
	// previous pass's (the window's start moved).
	WindowSteps int `json:"window_steps"`
	// ListChanges counts the passes whose pinned list differs from the
	// previous pass's (the pipeline chose it anew).
	ListChanges int `json:"list_changes"`
	// MemoriesWritten is what the scripted classifier had the pipeline
	// write during the session.
	MemoriesWritten int `json:"memories_written"`
}

// measureSession plays the scripted session twice: over a store of
// cfg.Memories memories (the existing-memories list full at every pass),
// which gives the report's capture figures, and over a store that starts
// empty.
func measureSession(ctx context.Context, cfg Config, r *Report) error {
	full := memcore.NewMemStore()
	rng := newRand(3)
	var ids []string
	for i := range cfg.Memories {
		m := memory(rng, i, ids)
		if err := full.Write(ctx, m); err != nil {
			return err
		}
		ids = append(ids, m.Meta.ID)
	}
	var err error
	if r.Session, err = runSession(ctx, full, cfg.Memories, cfg.SessionTurns); err != nil {
		return err
	}
	r.CaptureNewTokensPerTurn, r.CapturePrefixSharedRatio = r.Session.NewTokensPerTurn, r.Session.SharedRatio
	r.SessionFreshStore, err = runSession(ctx, memcore.NewMemStore(), 0, cfg.SessionTurns)
	return err
}

// sessionTurns returns a scripted session of n turns: a user message of
// 20–80 words of the vocabulary and an assistant reply of 40–200. Every
// ninth user message states a preference, which the scripted classifier
// remembers.
func sessionTurns(n int) []memcore.Message {
	rng := rand.New(rand.NewPCG(21, 22))
	text := func(n int) string {
		var b strings.Builder
		for w := range n {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	msgs := make([]memcore.Message, 0, 2*n)
	for turn := range n {
		user := text(20 + rng.IntN(61))
		if turn%9 == 4 {
			user += fmt.Sprintf(" From now on always use convention number %d in this repository.", turn)
		}
		msgs = append(msgs,
			memcore.Message{Role: memcore.RoleUser, Content: user},
			memcore.Message{Role: memcore.RoleAssistant, Content: text(40 + rng.IntN(161))})
	}
	return msgs
}

// sessionClassifier remembers the newest preference stated in the
// conversation it is shown, if the existing memories do not list it.
func sessionClassifier() (*fake.LLM, error) {
	return fake.NewLLM(fake.LLMConfig{ReplyFunc: func(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		items := []map[string]any{}
		if len(req.Messages) > 0 {
			pinned, conv, since := promptSections(req.Messages[0].Content)
			existing := pinned + since
			if i := strings.LastIndex(conv, "convention number "); i >= 0 {
				n := strings.Fields(conv[i+len("convention number "):])[0]
				content := "Always use convention number " + n + " in this repository."
				if !strings.Contains(existing, content) {
					items = append(items, map[string]any{"content": content, "scope": "repo", "category": "project-conventions", "supersedes": "", "related": []any{},
						"evidence": map[string]any{"messages": []int{}, "quote": "convention number " + n}})
				}
			}
		}
		text, err := json.Marshal(map[string]any{"memories": items})
		return &memcore.CompletionResponse{Text: string(text)}, err
	}})
}

// runSession plays the scripted session of turns turns over store (which
// holds seeded memories), one pass per turn, and measures its prompts.
func runSession(ctx context.Context, store memcore.MemoryStore, seeded, turns int) (SessionFigures, error) {
	f := SessionFigures{Turns: turns, StoreMemories: seeded}
	msgs := sessionTurns(turns)
	f.ConversationTokens = memcore.WindowTokens(msgs)
	llm, err := sessionClassifier()
	if err != nil {
		return f, err
	}
	p, err := memcapture.NewPipeline(llm, store, memcapture.Config{})
	if err != nil {
		return f, err
	}
	if err := p.Start(ctx); err != nil {
		return f, err
	}
	for turn := range turns {
		p.Enqueue(memcapture.TriggerEvent{Kind: memcore.TriggerCadence, Messages: msgs[:2*turn+2], SessionID: "membench"})
		// One pass per turn, as an agent waiting a turn's length would see.
		deadline := time.Now().Add(time.Minute)
		for p.Stats().Passes < uint64(turn+1) {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return f, fmt.Errorf("pass %d did not finish", turn+1)
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	closeCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := p.Close(closeCtx); err != nil {
		return f, err
	}
	reqs := llm.Requests()
	f.Passes = len(reqs)
	f.MemoriesWritten = int(p.Stats().MemoriesWritten)
	if f.Passes == 0 {
		return f, fmt.Errorf("no classifier call")
	}
	var prompt, shared, list, added int
	prev, prevConv, prevPinned := "", "", ""
	for i, req := range reqs {
		text := promptText(req)
		prompt += memcore.EstimateTokens(text)
		pinned, conv, since := promptSections(req.Messages[0].Content)
		list += memcore.EstimateTokens(pinned + since)
		added += memcore.EstimateTokens(since)
		if i > 0 {
			shared += memcore.EstimateTokens(commonPrefix(prev, text))
			if !strings.HasPrefix(conv, prevConv) {
				f.WindowSteps++
			}
			if pinned != prevPinned {
				f.ListChanges++
			}
		}
		prev, prevConv, prevPinned = text, conv, pinned
	}
	f.PromptTokensPerPass = float64(prompt) / float64(f.Passes)
	f.SharedTokensPerPass = float64(shared) / float64(f.Passes)
	f.NewTokensPerTurn = float64(prompt-shared) / float64(turns)
	f.SharedRatio = float64(shared) / float64(prompt)
	f.ListTokensPerPass = float64(list) / float64(f.Passes)
	f.AddedSinceTokensPerPass = float64(added) / float64(f.Passes)
	return f, nil
}

// promptSections splits the classifier's user message into its sections
// (see memcapture's README): the existing-memories list pinned before the
// conversation, the conversation, and the memories added since the list
// was pinned, after it; "" for a section that is not there.
func promptSections(content string) (pinned, conv, since string) {
	pinned, rest, ok := strings.Cut(content, "CONVERSATION (oldest first):\n")
	if !ok {
		return "", "", ""
	}
	conv, since, ok = strings.Cut(rest, "\nMEMORIES ADDED SINCE")
	if !ok {
		conv = strings.TrimSuffix(rest, "\nReply with the JSON object.")
	}
	return pinned, conv, since
}

// promptText is a request as a provider caches it: the instructions first,
// then the messages in order.
func promptText(req memcore.CompletionRequest) string {
	var b strings.Builder
	b.WriteString(req.System)
	for _, m := range req.Messages {
		b.WriteString("\n\n")
		b.WriteString(string(m.Role))
		b.WriteString(": ")
		b.WriteString(m.Content)
	}
	return b.String()
}

// commonPrefix is the longest common prefix of a and b, cut at a rune
// boundary.
func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	for i > 0 && i < len(a) && a[i]&0xC0 == 0x80 {
		i--
	}
	return a[:i]
}
