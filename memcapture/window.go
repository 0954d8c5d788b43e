package memcapture

import "github.com/forgemem/forgemem/memcore"

// capInSteps returns the part of msgs a capture pass sends the classifier
// when its window budget is budget tokens (as memcore.WindowTokens counts
// them), chosen so that consecutive passes over a growing conversation
// send the same beginning, which a provider's prompt cache then serves:
//
//   - a conversation within the budget is sent whole;
//   - beyond it, whole messages are dropped from the front in steps of half
//     the budget: with T tokens in all, every message that starts before
//     the first multiple P of budget/2 with T − P ≤ budget is left out.
//     Message start positions do not move as messages are appended, so the
//     window keeps its first message until the conversation has grown by
//     another half budget; then it shrinks to about half the budget, and
//     grows again.
//
// Keeping the newest budget tokens instead (memcore.CapWindow) would move
// the window's start at every turn once the conversation is long, so
// consecutive prompts would share nothing after the instructions.
//
// When even the newest message alone is past the cut, it is sent capped
// to the budget, its end kept (memcore.CapWindow). The input is not
// modified.
func capInSteps(msgs []memcore.Message, budget int) []memcore.Message {
	total := memcore.WindowTokens(msgs)
	if total <= budget {
		return msgs
	}
	step := max(budget/2, 1)
	cut := (total - budget + step - 1) / step * step // the smallest multiple of step with total − cut ≤ budget
	start := 0
	for i := range msgs {
		if start >= cut {
			return msgs[i:]
		}
		start += memcore.WindowTokens(msgs[i : i+1])
	}
	return memcore.CapWindow(msgs[len(msgs)-1:], budget)
}
