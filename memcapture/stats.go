package memcapture

import (
	"sync/atomic"
	"time"
)

// Stats are the pipeline's counters since it was made (see [Pipeline.Stats]).
type Stats struct {
	// Triggers is the number of trigger events accepted by Enqueue.
	Triggers uint64
	// Coalesced is the number of waiting turn triggers replaced by a newer
	// one (latest wins: the newer window contains the older one).
	Coalesced uint64
	// Dropped is the number of triggers that will never be processed: a
	// compaction trigger beyond the queue bound, an event whose kind is
	// neither memcore.TriggerCadence nor memcore.TriggerCompaction,
	// an event enqueued after Close (or after the Start context ended), and
	// triggers still waiting when the pipeline stopped without draining.
	Dropped uint64
	// Passes is the number of triggers the pipeline has finished
	// processing, whatever the outcome.
	Passes uint64
	// SkippedUnchanged is the number of passes skipped, without an LLM
	// call, because the window equalled the last classified window.
	SkippedUnchanged uint64
	// SkippedEmpty is the number of passes skipped because nothing was left
	// of the window once tool content was stripped.
	SkippedEmpty uint64
	// LLMErrors is the number of passes abandoned because the classifier
	// call failed with a permanent error, or with transient errors until
	// the attempts or the pass deadline ran out.
	LLMErrors uint64
	// ParseFailures is the number of passes abandoned because the
	// classifier's reply could not be read, twice (the reply is asked for
	// once more after the first failure).
	ParseFailures uint64
	// StoreErrors counts failed store operations: a pass abandoned because
	// the store could not be listed, and each memory whose write failed.
	StoreErrors uint64
	// MemoriesWritten is the number of memories written to the store.
	MemoriesWritten uint64
	// HeldForReview is the number of the memories written that wait for a
	// person's review (status pending: a quarantine rule held them, see
	// [Config].Review).
	HeldForReview uint64
	// EvidenceNotFound is the number of memories whose evidence — the
	// quote the classifier gave — is not in the conversation; they are
	// written with source mixed, so they wait for review unless review is
	// off. Many of them mean a classifier that does not quote.
	EvidenceNotFound uint64
	// Duplicates is the number of items skipped because their content
	// equals (ignoring case and white space) an existing head in the same
	// scope, or an earlier item of the same reply, or, after a conflict
	// (see Conflicts), the version another writer stored first.
	Duplicates uint64
	// Conflicts is the number of writes the store refused because another
	// writer — a session in this or another process — had superseded the
	// same version first (memcore.ErrConflict). Each time the memory is
	// re-pointed to the chain's new head (a new version of it, with its
	// edges carried forward) and written after it, or skipped as a duplicate
	// if its content equals the head's; after three conflicts for one
	// memory the write counts as a store error.
	Conflicts uint64
	// Invalid is the number of items skipped as unusable: unknown scope or
	// category, empty or oversized content, content holding a character
	// memcore.CheckText refuses (a control, bidirectional or tag
	// character; the invisible ones, a zero-width space, are dropped and
	// the memory kept), not an object, beyond the per-pass limit, or
	// failing memcore's validation.
	Invalid uint64
	// EdgesDropped is the number of links removed from items: related edges
	// with an unknown relationship, to the memory itself or to ids that do
	// not exist, and supersedes links to ids that do not exist.
	EdgesDropped uint64
	// Redactions is the number of secrets replaced by "[REDACTED]" in
	// memories before they were written (see redact.Text in
	// github.com/forgemem/forgemem/memcore/redact).
	Redactions uint64
	// RequestRedactions is the number of secrets replaced by "[REDACTED]"
	// in what passes sent to providers: the conversation window of each
	// classifier request (see memcore.RedactWindow), the lines of the
	// existing-memories list when they are chosen, and the texts embedded
	// to rank the existing memories. A secret that stays in the window is
	// counted at every pass that sends it.
	RequestRedactions uint64
	// Rebuilds is the number of times the rebuild callback was called.
	Rebuilds uint64
	// Panics is the number of panics recovered on the pipeline goroutine:
	// in a provider, the store or the rebuild callback. Each is logged with
	// its stack; the pass is skipped and the pipeline carries on.
	Panics uint64
	// TokensUsed is the sum of the token usage the classifier reported.
	TokensUsed uint64
	// StalledCalls is the number of provider calls (the classifier, or
	// the embedder ranking existing memories) abandoned because they had
	// not returned when their pass's deadline passed: the provider ignores
	// its context. Whatever such a call returns later is dropped.
	StalledCalls uint64
	// LastFailure is the latest failure of a pass — why passes fail — or
	// the zero Failure when none has failed.
	LastFailure Failure
}

// FailureKind says which step of a capture pass failed.
type FailureKind string

// The kinds of failure a pass reports in [Stats.LastFailure].
const (
	// FailureStore: listing the store, or writing a memory, failed.
	FailureStore FailureKind = "store"
	// FailureClassifier: the classifier call failed, ran out of time, or
	// was abandoned because it ignored its context (ErrStalled).
	FailureClassifier FailureKind = "classifier"
	// FailureUnreadableReply: the classifier's reply could not be read,
	// twice.
	FailureUnreadableReply FailureKind = "unreadable-reply"
	// FailureEmbedder: ranking the existing memories with the embedder
	// failed; the pass listed them newest first instead.
	FailureEmbedder FailureKind = "embedder"
	// FailurePanic: a provider, the store or the rebuild callback
	// panicked.
	FailurePanic FailureKind = "panic"
)

// Failure is one failure of a capture pass.
type Failure struct {
	// Kind is the step that failed; "" for no failure.
	Kind FailureKind
	// Err is the error. Its message is redacted (secrets replaced, see
	// github.com/forgemem/forgemem/memcore/redact), and it wraps the cause:
	// errors.Is matches memcore's provider taxonomy (memcore.ErrRateLimited,
	// memcore.ErrUnauthenticated, …), context.DeadlineExceeded and
	// [ErrStalled].
	Err error
	// At is when it happened, by the pipeline's clock (see Config.Clock).
	At time.Time
}

// counters is the live form of Stats.
type counters struct {
	triggers, coalesced, dropped, passes, skippedUnchanged, skippedEmpty,
	llmErrors, parseFailures, storeErrors, written, duplicates, conflicts, invalid,
	edgesDropped, redactions, requestRedactions, rebuilds, panics, tokens, stalled,
	held, evidenceNotFound atomic.Uint64
	lastFailure atomic.Pointer[Failure]
}

func (c *counters) snapshot() Stats {
	var last Failure
	if f := c.lastFailure.Load(); f != nil {
		last = *f
	}
	return Stats{
		Triggers:          c.triggers.Load(),
		Coalesced:         c.coalesced.Load(),
		Dropped:           c.dropped.Load(),
		Passes:            c.passes.Load(),
		SkippedUnchanged:  c.skippedUnchanged.Load(),
		SkippedEmpty:      c.skippedEmpty.Load(),
		LLMErrors:         c.llmErrors.Load(),
		ParseFailures:     c.parseFailures.Load(),
		StoreErrors:       c.storeErrors.Load(),
		MemoriesWritten:   c.written.Load(),
		Duplicates:        c.duplicates.Load(),
		Conflicts:         c.conflicts.Load(),
		Invalid:           c.invalid.Load(),
		EdgesDropped:      c.edgesDropped.Load(),
		Redactions:        c.redactions.Load(),
		RequestRedactions: c.requestRedactions.Load(),
		Rebuilds:          c.rebuilds.Load(),
		Panics:            c.panics.Load(),
		TokensUsed:        c.tokens.Load(),
		StalledCalls:      c.stalled.Load(),
		HeldForReview:     c.held.Load(),
		EvidenceNotFound:  c.evidenceNotFound.Load(),
		LastFailure:       last,
	}
}
