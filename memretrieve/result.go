package memretrieve

import (
	"fmt"

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
	// StaleDropped counts the memories left out because Config.StaleCheck
	// found them outdated, with Config.Stale StaleDrop.
	StaleDropped int
	// HeldDropped counts the memories left out because Config.HoldCheck
	// held them for review.
	HeldDropped int
	// Redactions counts the secrets replaced by "[REDACTED]" in what the
	// turn sent to its providers: the conversation window (see
	// memcore.RedactWindow), which the hypothesis model reads and the
	// queries are cut from, and the hypotheses, before they were embedded.
	// The search finds the memories all the same.
	Redactions int
	// Dropped lists every memory of Ranked that is not in the injection,
	// in ranking order, with its evidence, the relevance gate's thresholds
	// and why it was left out: below the gate, below the score cliff, over
	// MaxMemories, over the token budget, outdated (StaleDrop) or held for
	// review (Config.HoldCheck).
	Dropped []Dropped
	// Ranked is the turn's search ranking, best first: every chain head the
	// vector or the lexical search found, with its place in each and its
	// evidence (Candidate.Evidence), before the relevance gate, graph
	// expansion, the cut-off and the injection budget. A host or an
	// evaluation reads the ranking here without rendering the block.
	Ranked []Candidate
	// Skipped says why the turn got nothing, or is SkipNone when the turn
	// ran (it may still have found nothing relevant). The host decides
	// what, if anything, to show; the engine never prints.
	Skipped SkipReason
	// VectorSkipped says why the vector ranking took no part in a turn that
	// went on with the lexical ranking alone (Config.LexicalWeight above
	// 0): SkipHypothesisError or SkipEmbedderError for a failed model call,
	// SkipTimeout for one that did not answer by the model calls' deadline,
	// SkipNoIndex when no memory has a vector yet (the first build is still
	// embedding, or could not). SkipNone when the vector search ran, and
	// when the lexical index is off (a failed step then skips the turn).
	// Should the lexical ranking find nothing either, Skipped is the same
	// reason: the turn got nothing.
	VectorSkipped SkipReason
	// Err is the cause of a skip, of the turn or of its vector ranking,
	// when there is one: the provider's error (errors.Is matches memcore's
	// taxonomy: memcore.ErrRateLimited, memcore.ErrUnauthenticated,
	// memcore.ErrUnavailable, memcore.ErrInvalidResponse, …),
	// context.DeadlineExceeded for a step that ran out of time, the
	// caller's context error, or the error of the failed index build. Nil
	// when the turn ran in full.
	Err error
}

// SkipReason says why a turn got no memories (see [Result.Skipped]), or
// why its vector ranking is missing (see [Result.VectorSkipped]).
type SkipReason int

// The reasons a turn gets no memories.
const (
	// SkipNone: the turn ran.
	SkipNone SkipReason = iota
	// SkipDisabled: retrieval is off — the engine is a nil *Engine (a host
	// turns retrieval off by not building one).
	SkipDisabled
	// SkipEmptyWindow: nothing was left of the window once tool content
	// was stripped.
	SkipEmptyWindow
	// SkipNoIndex: there is no index yet: Start was not called, the first
	// build is still running (a later turn gets what it has published so
	// far), or it failed (Err is the build's error). As a VectorSkipped:
	// the index holds the lexical side only, no memory has a vector yet.
	SkipNoIndex
	// SkipTimeout: Config.Timeout ran out — as a VectorSkipped, the model
	// calls' share of it; Err wraps context.DeadlineExceeded and says
	// which step was running.
	SkipTimeout
	// SkipCancelled: the caller's context ended; Retrieve returns its
	// error too.
	SkipCancelled
	// SkipHypothesisError: the hypothesis model failed, or its reply held
	// no hypotheses (Err wraps memcore.ErrInvalidResponse).
	SkipHypothesisError
	// SkipEmbedderError: the embedder failed, returned no usable vectors,
	// or changed its vectors' dimension (a rebuild is under way).
	SkipEmbedderError
)

// String returns the reason's name, "" for SkipNone.
func (r SkipReason) String() string {
	switch r {
	case SkipNone:
		return ""
	case SkipDisabled:
		return "disabled"
	case SkipEmptyWindow:
		return "empty window"
	case SkipNoIndex:
		return "no index yet"
	case SkipTimeout:
		return "timeout"
	case SkipCancelled:
		return "cancelled"
	case SkipHypothesisError:
		return "hypothesis model error"
	case SkipEmbedderError:
		return "embedder error"
	}
	return fmt.Sprintf("SkipReason(%d)", int(r))
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
	// Evidence is, for a search hit, what its relevance to the turn rests
	// on and how it passed the relevance gate; zero for a memory reached
	// through a related edge, which comes along with the hit it was
	// reached from (Via.Source).
	Evidence Evidence
	// History holds the other versions of Memory's chain, oldest first (by
	// created_at): the versions it replaced and, should the chain have
	// forked (two branches merged in git, each of which changed the memory),
	// the versions of the branch it did not continue from, which the
	// injection marks as parallel changes (see memcore.Graph.History) — but
	// for one that made Memory's very change, which Memory's text includes.
	// A version that waited for review and was superseded unapproved is
	// left out too: its text was never in force. Empty for a memory that
	// was never changed.
	History []*memcore.MemoryFile
	// Stale says why the memory may be outdated, as Config.StaleCheck
	// said it; the injection shows it as a note. "" when nothing says so,
	// or nothing was checked.
	Stale string
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
