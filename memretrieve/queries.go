package memretrieve

import (
	"context"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// focusedQueries returns the texts a turn searches with besides any
// hypotheses, each at most limit tokens (newest text kept), distinct, in
// this order:
//
//  1. the latest user message — what the turn is about;
//  2. the latest exchange: the message before it and everything after it;
//  3. the whole window, for the topic of the conversation.
//
// One query of the whole window would let an old topic drown the current
// one, and overflow an embedder's input limit. In ModeIdentity these are
// the turn's vector queries; in both modes they are its lexical queries.
func focusedQueries(win []memcore.Message, limit int) []string {
	if len(win) == 0 {
		return nil
	}
	last := len(win) - 1
	for i := len(win) - 1; i >= 0; i-- {
		if win[i].Role == memcore.RoleUser {
			last = i
			break
		}
	}
	parts := [][]memcore.Message{win[last : last+1], win[max(0, last-1):], win}
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		q := windowText(memcore.CapWindow(p, limit))
		if q != "" && (len(out) == 0 || out[len(out)-1] != q) {
			out = append(out, q)
		}
	}
	return out
}

// capText returns the end of s that fits in limit tokens
// (memcore.EstimateTokens).
func capText(s string, limit int) string {
	if memcore.EstimateTokens(s) <= limit {
		return s
	}
	capped := memcore.CapWindow([]memcore.Message{{Role: memcore.RoleUser, Content: s}}, limit)
	if len(capped) == 0 {
		return ""
	}
	return capped[0].Content
}

// maxLexicalReserve bounds the time a turn keeps for the lexical ranking.
const maxLexicalReserve = 200 * time.Millisecond

// modelContext returns the context of a turn's model calls (the hypothesis
// model and the query embedding) and of a turn's wait for the first build
// (see snapshotWithin). With the lexical index on, its deadline
// comes a tenth of the turn's remaining time (at most 200ms) before the
// turn's, so that a model that does not answer in time still leaves the
// turn time to answer from the lexical index.
func (e *Engine) modelContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if e.cfg.LexicalWeight == 0 || !ok {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, deadline.Add(-min(time.Until(deadline)/10, maxLexicalReserve)))
}
