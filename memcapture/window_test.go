package memcapture

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// checkGrowth appends msgs to a conversation one at a time and checks
// capInSteps at each length: the window fits the budget and is the newest
// whole messages (or the newest message alone, capped); while the
// conversation grows the window keeps its first message, except when it
// steps forward, which happens only once per half budget of growth and
// leaves at most about half the budget.
func checkGrowth(t *testing.T, msgs []memcore.Message, budget int) {
	t.Helper()
	step := max(budget/2, 1)
	prevStart, steps := 0, 0
	for n := 1; n <= len(msgs); n++ {
		conv := msgs[:n]
		w := capInSteps(conv, budget)
		if got := memcore.WindowTokens(w); got > budget {
			t.Fatalf("n=%d: window of %d tokens, budget %d", n, got, budget)
		}
		if len(w) == 0 {
			// A budget below one message's overhead and one token holds
			// nothing (memcore.CapWindow's rule): the pass is skipped.
			if budget >= 3 {
				t.Fatalf("n=%d: empty window", n)
			}
			continue
		}
		start := n - len(w)
		whole := slices.Equal(w, conv[start:])
		if !whole {
			// Only the newest message, cut to the budget, keeping its end.
			last := conv[n-1]
			if len(w) != 1 || w[0].Role != last.Role || !strings.HasSuffix(last.Content, w[0].Content) {
				t.Fatalf("n=%d: the window is neither whole newest messages nor the newest message cut", n)
			}
			prevStart = n - 1
			continue
		}
		if start < prevStart {
			t.Fatalf("n=%d: the window starts at message %d, before the previous window's %d", n, start, prevStart)
		}
		if start > prevStart {
			steps++
			// A step leaves about half the budget: at most half, plus what
			// the message straddling the cut and the newest one add.
			if got := memcore.WindowTokens(w); got > step+maxCost(conv) {
				t.Fatalf("n=%d: a step left %d tokens, want at most about %d", n, got, step)
			}
		}
		prevStart = start
	}
	total := memcore.WindowTokens(msgs)
	if limit := total/step + 1; steps > limit {
		t.Fatalf("%d steps over %d tokens, want at most %d (one per half budget)", steps, total, limit)
	}
}

func maxCost(msgs []memcore.Message) int {
	m := 0
	for i := range msgs {
		m = max(m, memcore.WindowTokens(msgs[i:i+1]))
	}
	return 2 * m
}

func TestCapInSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	msgs := func(n, maxRunes int) []memcore.Message {
		out := make([]memcore.Message, n)
		for i := range out {
			out[i] = memcore.Message{Role: memcore.RoleUser, Content: strings.Repeat("ü", 1+r.IntN(maxRunes))}
			if i%2 == 1 {
				out[i].Role = memcore.RoleAssistant
			}
		}
		return out
	}
	for _, tc := range []struct {
		n, maxRunes, budget int
	}{
		{10, 10, 1000}, // always within the budget
		{300, 400, 2000},
		{300, 40, 100},
		{50, 4000, 600}, // messages larger than the budget
		{40, 30, 1},
	} {
		checkGrowth(t, msgs(tc.n, tc.maxRunes), tc.budget)
	}
	// Within the budget the window is the conversation itself.
	short := msgs(5, 10)
	if got := capInSteps(short, 1000); !slices.Equal(got, short) {
		t.Errorf("a short conversation was cut: %d of %d messages", len(got), len(short))
	}
	if got := capInSteps(nil, 10); len(got) != 0 {
		t.Errorf("an empty conversation gave %d messages", len(got))
	}
}

func FuzzCapInSteps(f *testing.F) {
	f.Add([]byte{10, 200, 3, 90, 7}, uint16(100))
	f.Add([]byte{255, 255, 255}, uint16(1))
	f.Fuzz(func(t *testing.T, sizes []byte, budget uint16) {
		if budget == 0 || len(sizes) > 500 {
			return
		}
		msgs := make([]memcore.Message, len(sizes))
		for i, s := range sizes {
			msgs[i] = memcore.Message{Role: memcore.RoleUser, Content: strings.Repeat("ab", int(s))}
		}
		checkGrowth(t, msgs, int(budget))
	})
}
