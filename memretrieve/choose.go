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

// choose turns the search hits of every query into the turn's memories:
// hits below MinScore dropped, each hit credited to the head of its chain
// with the best score over all queries, related neighbours within HopDepth
// added (mapped to their heads), all ordered by score and capped at
// MaxMemories, each with its history.
func (e *Engine) choose(snap *snapshot, hits [][]hit) []Recalled {
	best := e.searchHits(snap, hits)
	if e.cfg.HopDepth > 0 {
		e.expand(snap.graph, best)
	}
	return e.ranked(snap.graph, best)
}

// searchHits credits each search hit scoring at least MinScore to the head
// of its chain, keeping for each head the best score over all queries, and
// returns them by head id.
func (e *Engine) searchHits(snap *snapshot, hits [][]hit) map[string]*Recalled {
	best := make(map[string]*Recalled)
	for _, hs := range hits {
		for _, h := range hs {
			score := float64(h.score)
			if score < e.cfg.MinScore {
				continue
			}
			id := snap.idx.ids[h.row]
			head, ok := snap.graph.Head(id)
			if !ok {
				continue
			}
			if cur := best[head.Meta.ID]; cur == nil || score > cur.Score {
				best[head.Meta.ID] = &Recalled{Memory: head, Score: score, Via: Via{Matched: id}}
			}
		}
	}
	return best
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
// that a change made on a merged branch is shown, not lost.
func history(g *memcore.Graph, headID string) []*memcore.MemoryFile {
	past := g.History(headID)
	if len(past) == 0 {
		return nil
	}
	out := make([]*memcore.MemoryFile, len(past))
	for i, v := range past {
		out[i] = v.Memory
	}
	return out
}
