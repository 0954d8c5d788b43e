package memretrieve

import (
	"github.com/forgemem/forgemem/memcore"
)

// Result is what [Engine.Retrieve] found for a turn. A turn without
// memories has an empty Result: no Memories, an empty Injection.
//
// The memories are shared with the engine and with other results of the
// same turn: treat them as read-only.
type Result struct {
	// Memories are the memories in the injection, most relevant first.
	Memories []Recalled
	// Injection is the block to place in the agent's context (see the
	// package documentation for its format), or "" when there is nothing
	// to inject.
	Injection string
	// Omitted counts the memories that were found but left out of the
	// injection (and of Memories) to fit Config.InjectionTokenBudget.
	Omitted int
	// Ranked is the turn's search ranking, best first: every chain head the
	// vector or the lexical search found, with its place in each, before
	// graph expansion, the MaxMemories cap and the injection budget. A host
	// or an evaluation reads the ranking here without rendering the block.
	Ranked []Candidate
	// VectorSkipped says why the vector ranking took no part in the turn
	// — the embedder or the hypothesis model failed or ran out of time, no
	// memory has a vector yet, the embedder's dimension changed — when the
	// turn went on with the lexical ranking alone; "" when the vector
	// search ran (or when the lexical index is off, since a turn then ends
	// with nothing).
	VectorSkipped string
}

// Recalled is one memory of a [Result].
type Recalled struct {
	// Memory is the head of the memory's version chain: its current text.
	Memory *memcore.MemoryFile
	// Score is, for a search hit, the memory's score in the fused ranking:
	// its reciprocal-rank fusion of the vector and lexical rankings scaled
	// so that first place in both scores 1 (see Config.LexicalWeight), or,
	// with the lexical index off, the cosine similarity of the best query
	// with the memory (or with an earlier version of it). For a memory
	// reached through a related edge it is derived from the memory it was
	// reached from: that score times 0.9 per hop for a positive score,
	// never higher.
	Score float64
	// Via says how the memory was reached.
	Via Via
	// History holds the other versions of Memory's chain, oldest first (by
	// created_at): the versions it replaced and, should the chain have
	// forked (two branches merged in git, each of which changed the memory),
	// the versions of the branch it did not continue from, which the
	// injection marks as parallel changes (see memcore.Graph.History).
	// Empty for a memory that was never changed.
	History []*memcore.MemoryFile
}

// Via says how a recalled memory was reached: by the search (Hops 0;
// [Result.Ranked] says which ranking found it) or through related edges
// from a memory the search found.
type Via struct {
	// Hops is 0 for a search hit, else the number of related edges
	// followed (1 to Config.HopDepth).
	Hops int
	// Matched is, for a search hit, the id of the version whose vector
	// matched best (or, for a hit of the lexical search alone, whose text
	// did): the head's own id, or an earlier version's.
	Matched string
	// Relationship is the type of the last edge followed.
	Relationship memcore.Relationship
	// From is the id of the memory one hop closer to the search hit (the
	// search hit itself when Hops is 1), mapped to the head of its chain.
	From string
	// Incoming is false when the edge is recorded on From ("From refines
	// this memory") and true when it is recorded on this memory ("this
	// memory refines From").
	Incoming bool
	// Source is the id of the search hit the expansion started from.
	Source string
}

// Search reports whether the memory was found by the search itself.
func (v Via) Search() bool { return v.Hops == 0 }
