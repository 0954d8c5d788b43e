package memretrieve

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memretrieve/internal/index"
)

// Found says which of a turn's rankings found a memory: the vector search,
// the lexical (BM25) search, or both.
type Found uint8

// The rankings; FoundBoth is FoundVector|FoundLexical.
const (
	FoundVector Found = 1 << iota
	FoundLexical
	FoundBoth = FoundVector | FoundLexical
)

// String returns "vector", "lexical", "both", or "none".
func (f Found) String() string {
	switch f {
	case FoundVector:
		return "vector"
	case FoundLexical:
		return "lexical"
	case FoundBoth:
		return "both"
	}
	return "none"
}

// MarshalText writes the String form, so that Found reads well in JSON.
func (f Found) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// Candidate is one memory of a turn's search ranking ([Result.Ranked]): a
// chain head found by the vector search, the lexical search or both, with
// its place in each.
type Candidate struct {
	// ID is the id of the head of the memory's chain.
	ID string
	// Score is the memory's score in the fused ranking (see
	// [Recalled.Score]).
	Score float64
	// VectorRank is the memory's 1-based place in the vector ranking (its
	// chain's best cosine similarity over the turn's queries), 0 when the
	// vector search did not find it.
	VectorRank int
	// VectorScore is that best cosine similarity; 0 when VectorRank is 0.
	VectorScore float64
	// LexicalRank is the memory's 1-based place in the lexical ranking,
	// 0 when the lexical search did not find it.
	LexicalRank int
	// LexicalScore is its BM25 score (the best of its chain's versions); 0
	// when LexicalRank is 0.
	LexicalScore float64
	// Matched is the id of the version that matched: the one with the best
	// vector score, or, for a memory only the lexical search found, the best
	// lexical one.
	Matched string
	// Evidence is what the memory's relevance to the turn rests on, and
	// whether the relevance gate let it in.
	Evidence Evidence
}

// Found says which rankings found the memory.
func (c Candidate) Found() Found {
	var f Found
	if c.VectorRank > 0 {
		f |= FoundVector
	}
	if c.LexicalRank > 0 {
		f |= FoundLexical
	}
	return f
}

// fuse turns the hits of the vector search (per query, rows of snap.idx)
// and of the lexical search (rows of snap.lex) into the turn's ranking of
// chain heads, best first, each with its evidence as g weighs it.
//
// Each side credits a hit on a superseded version to the head of its
// chain, keeps each head's best score (a vector hit below MinScore is
// dropped) and ranks the heads by it. With LexicalWeight 0 the ranking is
// the vector ranking and a memory's score is its cosine similarity.
// Otherwise the rankings are fused by reciprocal rank (Cormack, Clarke and
// Büttcher, SIGIR 2009): a memory ranked r by the vector search gains
// 1/(k+r), and ranked r by the lexical search LexicalWeight/(k+r), with k
// = FusionK; its score is the sum divided by the most any memory can get,
// (1+LexicalWeight)/(k+1), so that first place in both rankings scores 1.
// Ranks, unlike the raw scores, are comparable across the two searches
// whatever the embedding model or the length of the texts.
func (e *Engine) fuse(snap *snapshot, vhits [][]index.Hit, lhits []index.Hit, g *turnGate) []Candidate {
	f := fusion{snap: snap, gate: g, byHead: make(map[string]*Candidate),
		zVector: make(map[string]float64), lexHits: make(map[string][]int)}
	vec := f.creditVector(vhits, e.cfg.MinScore)
	lex := f.creditLexical(lhits)
	slices.SortFunc(vec, func(a, b *Candidate) int { return byScore(a.VectorScore, b.VectorScore, a.ID, b.ID) })
	for i, c := range vec {
		c.VectorRank = i + 1
	}
	slices.SortFunc(lex, func(a, b *Candidate) int { return byScore(a.LexicalScore, b.LexicalScore, a.ID, b.ID) })
	for i, c := range lex {
		c.LexicalRank = i + 1
	}
	out := make([]Candidate, 0, len(f.byHead))
	for _, c := range f.byHead {
		c.Score = e.fusedScore(c)
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Candidate) int { return byScore(a.Score, b.Score, a.ID, b.ID) })
	g.gateRanked(snap, out, f.lexHits, f.zVector, e.cfg.MaxMemories)
	return out
}

// fusion is the state of one turn's fusion: the candidates by head id,
// and what the gate needs of their hits.
type fusion struct {
	snap   *snapshot
	gate   *turnGate
	byHead map[string]*Candidate
	// zVector is each head's best vector standard deviations above the
	// gate's null mean; lexHits the lexical rows found of its chain.
	zVector map[string]float64
	lexHits map[string][]int
}

// candidate returns the candidate of head, made on first use.
func (f *fusion) candidate(head string) *Candidate {
	c := f.byHead[head]
	if c == nil {
		c = &Candidate{ID: head}
		f.byHead[head] = c
	}
	return c
}

// creditVector credits each vector hit at or above minScore to the head of
// its chain, keeping each head's best cosine similarity and the evidence of
// its best hit for the gate, and returns the heads found (not yet ranked).
func (f *fusion) creditVector(vhits [][]index.Hit, minScore float64) []*Candidate {
	var vec []*Candidate
	for q, hs := range vhits {
		for _, h := range hs {
			score := float64(h.Score)
			if score < minScore {
				continue
			}
			id := f.snap.idx.IDs[h.Row]
			head, ok := f.snap.graph.Head(id)
			if !ok {
				continue
			}
			c := f.candidate(head.Meta.ID)
			z, seen := f.zVector[c.ID]
			if !seen {
				z = math.Inf(-1)
			}
			f.gate.vectorEvidence(c, q, score, &z)
			f.zVector[c.ID] = z
			if c.VectorRank == 0 {
				c.VectorRank = -1 // found; ranked below
				vec = append(vec, c)
			} else if score <= c.VectorScore {
				continue
			}
			c.VectorScore, c.Matched = score, id
		}
	}
	return vec
}

// creditLexical credits each lexical hit to the head of its chain, keeping
// each head's best BM25 score and the rows found for the gate, and returns
// the heads found (not yet ranked).
func (f *fusion) creditLexical(lhits []index.Hit) []*Candidate {
	var lex []*Candidate
	for _, h := range lhits {
		id := f.snap.lex.IDs[h.Row]
		head, ok := f.snap.graph.Head(id)
		if !ok {
			continue
		}
		score := float64(h.Score)
		c := f.candidate(head.Meta.ID)
		if id != head.Meta.ID {
			f.lexHits[c.ID] = append(f.lexHits[c.ID], h.Row)
		}
		if c.LexicalRank == 0 {
			c.LexicalRank = -1
			lex = append(lex, c)
		} else if score <= c.LexicalScore {
			continue
		}
		c.LexicalScore = score
		if c.VectorRank == 0 {
			c.Matched = id
		}
	}
	return lex
}

// fusedScore is c's score in the fused ranking (see fuse).
func (e *Engine) fusedScore(c *Candidate) float64 {
	w, k := e.cfg.LexicalWeight, float64(e.cfg.FusionK)
	if w == 0 {
		return c.VectorScore
	}
	var s float64
	if c.VectorRank > 0 {
		s += 1 / (k + float64(c.VectorRank))
	}
	if c.LexicalRank > 0 {
		s += w / (k + float64(c.LexicalRank))
	}
	return s / ((1 + w) / (k + 1))
}

// byScore orders best first: the higher score, then the smaller id.
func byScore(sa, sb float64, ida, idb string) int {
	if c := cmp.Compare(sb, sa); c != 0 {
		return c
	}
	return strings.Compare(ida, idb)
}
