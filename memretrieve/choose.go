package memretrieve

import (
	"cmp"
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

// choose turns the turn's ranking (see fuse) into its memories: each
// ranked head with its score, related neighbours within HopDepth added
// (mapped to their heads), all ordered by score and capped at MaxMemories,
// each with its history.
func (e *Engine) choose(snap *snapshot, ranked []Candidate) []Recalled {
	best := make(map[string]*Recalled, len(ranked))
	for _, c := range ranked {
		head, ok := snap.graph.Memory(c.ID)
		if !ok {
			continue
		}
		best[c.ID] = &Recalled{Memory: head, Score: c.Score, Via: Via{Matched: c.Matched}}
	}
	if e.cfg.HopDepth > 0 {
		e.expand(snap.graph, best)
	}
	return e.ranked(snap.graph, best)
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

// ranked returns the memories of best ordered by score, at most
// MaxMemories of them, each with its history.
func (e *Engine) ranked(g *memcore.Graph, best map[string]*Recalled) []Recalled {
	out := make([]Recalled, 0, len(best))
	for _, r := range best {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Recalled) int { return compareRecalled(&a, &b) })
	if len(out) > e.cfg.MaxMemories {
		out = out[:e.cfg.MaxMemories]
	}
	for i := range out {
		out[i].History = history(g, out[i].Memory.Meta.ID)
	}
	return out
}

// compareRecalled orders memories best first: higher score, then fewer hops
// (so a neighbour follows the memory it was reached from), then id.
func compareRecalled(a, b *Recalled) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Via.Hops, b.Via.Hops); c != 0 {
		return c
	}
	return cmp.Compare(a.Memory.Meta.ID, b.Memory.Meta.ID)
}

// history returns the versions of the chain headed by headID other than
// the head, oldest first: the line that led to it and the versions of any
// fork branch the chain did not continue from (memcore.Graph.History), so
// that a change made on a merged branch is shown, not lost. A version that
// waited for review and was superseded without being approved is left
// out: its text was never in force.
func history(g *memcore.Graph, headID string) []*memcore.MemoryFile {
	var out []*memcore.MemoryFile
	for _, v := range g.History(headID) {
		if v.Memory.Meta.Status != memcore.StatusPending {
			out = append(out, v.Memory)
		}
	}
	return out
}
