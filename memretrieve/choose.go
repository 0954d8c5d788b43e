package memretrieve

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"

	"github.com/forgemem/forgemem/memcore"
)

// hopDecay is the factor a score loses per related edge followed.
const hopDecay = 0.9

// derivedScore is the score of a memory reached hops edges away from a
// search hit scoring s: s × 0.9^hops for s ≥ 0, and for a negative s (only
// possible with MinScore below 0) a value further below it, so that a
// neighbour never outranks the memory it was reached from.
func derivedScore(s float64, hops int) float64 {
	d := math.Pow(hopDecay, float64(hops))
	if s >= 0 {
		return s * d
	}
	return s * (2 - d)
}

// inject turns the turn's ranking (see fuse) into its Result: the memories
// chosen (see choose), not held for review (see checkHold) and not dropped
// as outdated (see checkStale), the
// block that presents them within the budget, the ranking, and every ranked
// memory left out with why.
func (e *Engine) inject(ctx context.Context, snap *snapshot, ranked []Candidate) *Result {
	recs, dropped := e.choose(snap, ranked)
	recs, held := e.checkHold(recs)
	for _, r := range held {
		if r.Via.Search() {
			dropped = append(dropped, Dropped{ID: r.Memory.Meta.ID, Score: r.Score, Evidence: r.Evidence, Reason: DropHeld})
		}
	}
	recs, stale := e.checkStale(ctx, recs)
	for _, r := range stale {
		if r.Via.Search() {
			dropped = append(dropped, Dropped{ID: r.Memory.Meta.ID, Score: r.Score, Evidence: r.Evidence, Reason: DropStale})
		}
	}
	res := e.render(snap.graph, recs)
	res.StaleDropped, res.HeldDropped = len(stale), len(held)
	for _, r := range recs[len(res.Memories):] {
		if r.Via.Search() {
			dropped = append(dropped, Dropped{ID: r.Memory.Meta.ID, Score: r.Score, Evidence: r.Evidence, Reason: DropBudget})
		}
	}
	res.Ranked, res.Dropped = ranked, inRankingOrder(dropped, ranked)
	return res
}

// inRankingOrder sorts dropped in the order of ranked, where each of them
// is, and returns it.
func inRankingOrder(dropped []Dropped, ranked []Candidate) []Dropped {
	place := make(map[string]int, len(ranked))
	for i, c := range ranked {
		place[c.ID] = i
	}
	slices.SortStableFunc(dropped, func(a, b Dropped) int { return cmp.Compare(place[a.ID], place[b.ID]) })
	return dropped
}

// choose turns the turn's ranking into its memories: each ranked head the
// relevance gate admitted (see admit), with its score, and related
// neighbours within HopDepth of those (mapped to their heads), all ordered
// by score, at most MaxMemories, each with its history. It also returns
// the ranked memories left out, with why.
func (e *Engine) choose(snap *snapshot, ranked []Candidate) ([]Recalled, []Dropped) {
	cut := make(map[string]DropReason)
	best := make(map[string]*Recalled, len(ranked))
	for _, c := range ranked {
		head, ok := snap.graph.Memory(c.ID)
		if !ok || !c.Evidence.Strong() {
			continue
		}
		best[c.ID] = &Recalled{Memory: head, Score: c.Score, Via: Via{Matched: c.Matched}, Evidence: c.Evidence}
	}
	turnPassed := len(best) > 0
	if e.cfg.HopDepth > 0 {
		e.expand(snap.graph, best)
	}
	recs := sortedRecalled(best)
	kept := e.limit(recs, cut)
	for i := range kept {
		kept[i].History = history(snap.graph, kept[i].Memory.Meta.ID)
	}
	in := make(map[string]bool, len(kept))
	for _, r := range kept {
		in[r.Memory.Meta.ID] = true
	}
	var dropped []Dropped
	for i, c := range ranked {
		if in[c.ID] {
			continue
		}
		reason, ok := cut[c.ID]
		if !ok {
			reason = e.leftOut(c, i, turnPassed)
		}
		dropped = append(dropped, Dropped{ID: c.ID, Score: c.Score, Evidence: c.Evidence, Reason: reason})
	}
	return kept, dropped
}

// leftOut says why the gate left out c, ranked at place i (from 0), in a
// turn that passed the gate or not: the turn failed, or c's evidence was
// no better than chance (below the gate); c came after MaxMemories better
// ranked memories (over the limit); its evidence stood too far under the
// best hit's (the cliff).
func (e *Engine) leftOut(c Candidate, i int, turnPassed bool) DropReason {
	ev := c.Evidence
	switch {
	case !turnPassed || !e.gateOn() && !ev.Strong():
		return DropBelowGate
	case i >= e.cfg.MaxMemories:
		return DropLimit
	case max(ev.zVector, ev.zLexical) < 0:
		return DropBelowGate
	}
	return DropCliff
}

// limit returns the first MaxMemories memories of recs (ordered best
// first), recording in cut that the others were left out for it.
func (e *Engine) limit(recs []Recalled, cut map[string]DropReason) []Recalled {
	if len(recs) <= e.cfg.MaxMemories {
		return recs
	}
	for _, r := range recs[e.cfg.MaxMemories:] {
		cut[r.Memory.Meta.ID] = DropLimit
	}
	return recs[:e.cfg.MaxMemories]
}

// expand adds to best, by head id, the memories within HopDepth related
// edges of each search hit in it, mapped to their heads and scored below
// the hit they were reached from. A search hit keeps its own score and
// reason; a memory reached from several hits keeps the best score, then
// the fewest hops.
func (e *Engine) expand(g *memcore.Graph, best map[string]*Recalled) {
	// Best hit first, so that equal claims are settled the same way every
	// time.
	found := slices.SortedFunc(maps.Values(best), compareRecalled)
	for _, src := range found {
		srcID := src.Memory.Meta.ID
		for _, nb := range g.Neighbors(srcID, e.cfg.HopDepth) {
			head, ok := g.Head(nb.Memory.Meta.ID)
			if !ok || head.Meta.ID == srcID {
				continue
			}
			from := nb.From
			if fh, ok := g.Head(from); ok {
				from = fh.Meta.ID
			}
			c := Recalled{Memory: head, Score: derivedScore(src.Score, nb.Hops), Via: Via{
				Hops: nb.Hops, Relationship: nb.Relationship, From: from, Incoming: nb.Incoming, Source: srcID,
			}}
			cur := best[head.Meta.ID]
			switch {
			case cur == nil:
				best[head.Meta.ID] = &c
			case cur.Via.Search():
				// A search hit keeps its own score and reason.
			case c.Score > cur.Score || (c.Score == cur.Score && c.Via.Hops < cur.Via.Hops):
				*cur = c
			}
		}
	}
}

// sortedRecalled returns the memories of best ordered by score, best
// first (see compareRecalled).
func sortedRecalled(best map[string]*Recalled) []Recalled {
	out := make([]Recalled, 0, len(best))
	for _, r := range best {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Recalled) int { return compareRecalled(&a, &b) })
	return out
}

// compareRecalled orders memories best first: higher score, then fewer hops
// (so a neighbour follows the memory it was reached from), then stronger
// evidence (see compareEvidence), then id.
func compareRecalled(a, b *Recalled) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Via.Hops, b.Via.Hops); c != 0 {
		return c
	}
	if c := compareEvidence(a.Evidence, b.Evidence); c != 0 {
		return c
	}
	return cmp.Compare(a.Memory.Meta.ID, b.Memory.Meta.ID)
}

// compareEvidence orders the evidence of two memories the fusion scored
// alike — common, since ranks 1 and 3 fuse to the same score as 3 and 1 —
// stronger first: the more standard deviations above chance on its better
// side, then the higher cosine similarity, then the more lexical evidence.
// Memory ids, the last resort, are random, so that two stores holding the
// same texts would otherwise order such a tie differently.
func compareEvidence(a, b Evidence) int {
	if c := cmp.Compare(max(b.zVector, b.zLexical), max(a.zVector, a.zLexical)); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Vector, a.Vector); c != 0 {
		return c
	}
	return cmp.Compare(b.Lexical, a.Lexical)
}

// history returns the versions of the chain headed by headID other than
// the head, oldest first: the line that led to it and the versions of any
// fork branch the chain did not continue from (memcore.Graph.History), so
// that a change made on a merged branch is shown, not lost. A version that
// waited for review and was superseded without being approved is left
// out: its text was never in force. So is a version of such a branch that
// made the head's very change (two teammates who approved one memory on
// their own branches, say): the current text includes it.
func history(g *memcore.Graph, headID string) []*memcore.MemoryFile {
	head, _ := g.Memory(headID)
	var out []*memcore.MemoryFile
	for _, v := range g.History(headID) {
		switch m := v.Memory; {
		case m.Meta.Status == memcore.StatusPending:
		case v.Lost && head != nil && m.Content == head.Content && m.Meta.Retired == head.Meta.Retired:
		default:
			out = append(out, m)
		}
	}
	return out
}
