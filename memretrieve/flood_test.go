package memretrieve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// floodLLM answers every call at once with the same, huge reply.
type floodLLM struct{ reply string }

func (l floodLLM) Complete(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	return &memcore.CompletionResponse{Text: l.reply}, nil
}

// TestFloodedHypothesisReplyKeepsTheBudget: a hypothesis reply of tens of
// megabytes, arriving at once, is read only up to maxReplyBytes (see
// TestCapReply), so the turn is not timed out by it — and a flood that
// starts with usable hypotheses still finds the memory by its vector. The
// window shares words with the memory, so the lexical ranking finds it
// whatever the reply. The timeout is generous, so that a loaded machine
// does not fail the test: what is checked is the outcome, not the time.
func TestFloodedHypothesisReplyKeepsTheBudget(t *testing.T) {
	const size = 40 << 20
	const timeout = 5 * time.Second
	hyp := `"Prefers optimistic locking with retry for concurrent writes.",`
	repeat := func(s string) string { return strings.Repeat(s, size/len(s)+1) }
	tests := []struct {
		name  string
		reply string
		found bool // the vector search finds the memory from the reply's first part
	}{
		{"unterminated JSON array", "[" + repeat(hyp), true},
		{"JSON object", `{"hypotheses": [` + repeat(hyp) + `"x"]}`, true},
		{"one hypothesis per line", repeat("Prefers optimistic locking with retry for concurrent writes.\n"), true},
		{"JSON starts in a long string", repeat(`{"k": "` + strings.Repeat("x", 1<<20)), false},
		{"one long line", repeat("word "), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memcore.NewMemStore()
			write(t, store, threeMemories()...)
			cfg := DefaultConfig()
			cfg.Timeout = timeout
			cfg.HopDepth = 0
			e := newEngine(t, store, newEmbedder(t), floodLLM{reply: tt.reply}, cfg)
			rebuild(t, e)
			res, err := e.Retrieve(context.Background(), "", userWindow("how do we handle concurrent writes?"))
			if err != nil {
				t.Fatalf("Retrieve: %v", err)
			}
			if res.Skipped == SkipTimeout || res.VectorSkipped == SkipTimeout {
				t.Errorf("a %d MB reply timed the turn out (%v)", len(tt.reply)>>20, res.Err)
			}
			c, _ := candidate(res, locking.Meta.ID)
			// Found: first, and by similarity, not as the first of a tie
			// at 0 (a reply with no usable hypothesis shares nothing with
			// any memory).
			if found := c.VectorRank == 1 && c.VectorScore > 0; found != tt.found {
				t.Errorf("the vector search found the memory first: %v, want %v (ranked %+v)", found, tt.found, res.Ranked)
			}
			if len(res.Memories) == 0 || res.Memories[0].Memory.Meta.ID != locking.Meta.ID || c.LexicalRank != 1 {
				t.Errorf("memories %v (ranked %+v), want %s first, found by the lexical search too", ids(res), res.Ranked, locking.Meta.ID)
			}
		})
	}
}

// TestCapReply: a reply is cut to maxReplyBytes on a rune boundary.
func TestCapReply(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"short", "abc", 3},
		{"exactly the cap", strings.Repeat("a", maxReplyBytes), maxReplyBytes},
		{"longer", strings.Repeat("a", maxReplyBytes+10), maxReplyBytes},
		{"cut inside a rune", strings.Repeat("a", maxReplyBytes-1) + "é" + "z", maxReplyBytes - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := capReply(tt.in); len(got) != tt.want || !strings.HasPrefix(tt.in, got) {
				t.Errorf("capReply: %d bytes, want the first %d", len(got), tt.want)
			}
		})
	}
}
