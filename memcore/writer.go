package memcore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rs/zerolog"
)

// DefaultMaxConflicts is how many conflicts a [Writer] resolves for one
// memory by default ([WriterConfig].MaxConflicts).
const DefaultMaxConflicts = 3

// WriterConfig holds the settings of a [Writer], given to [NewWriter]. A
// zero field means its default, so WriterConfig{} is [DefaultWriterConfig].
type WriterConfig struct {
	// Review decides which new memories [Writer.Write] holds for a
	// person's review (memory.review; see [Screen]); "" means
	// [ReviewUntrusted].
	Review ReviewMode
	// MaxConflicts is how many times one write is built again on a newer
	// head after a conflict (another writer superseded the same version
	// first) before it gives up with a [*TooManyConflictsError]: at least
	// 1; 0 means [DefaultMaxConflicts].
	MaxConflicts int
	// Logger receives a line for every conflict resolved. Its zero value
	// logs nothing (the default).
	Logger zerolog.Logger
}

// DefaultWriterConfig returns the defaults of a [Writer]: the quarantined
// memories wait for review ([ReviewUntrusted]), up to
// [DefaultMaxConflicts] conflicts resolved per write, and no logging.
func DefaultWriterConfig() WriterConfig {
	return WriterConfig{Review: ReviewUntrusted, MaxConflicts: DefaultMaxConflicts}
}

// Validate reports every field of c out of range at once, in a
// *[ConfigError] (which matches [ErrInvalidConfig]), or returns nil.
func (c WriterConfig) Validate() error {
	var bad FieldErrors
	c.check(&bad)
	return bad.Err("memcore", "")
}

// check records every field of c out of range in bad.
func (c WriterConfig) check(bad *FieldErrors) {
	bad.Check(c.Review == "" || c.Review.Valid(), "Review", string(c.Review), "untrusted, all or off (\"\" means untrusted)")
	bad.Check(c.MaxConflicts >= 0, "MaxConflicts", c.MaxConflicts, fmt.Sprintf("at least 1 (0 means %d)", DefaultMaxConflicts))
}

// Writer writes memories the one way every write path of forgemem does —
// capture, a person's remember and forget, an agent's remember: a new
// memory is screened for review ([Screen]) and held as pending when a
// quarantine rule says so; a new version of a chain is written after the
// head another writer stored first, with that writer's edges, and a memory
// that then says what that head says is not written at all.
// [Graph.Duplicate] is the check the callers make before they write.
// [Writer.Approve] and [Writer.Reject] are a person's review of a pending
// memory; [Writer.Revise] is a tool's mechanical revision of one.
//
// A Writer is safe for concurrent use; the store makes writes exclusive
// (see [MemoryStore].Write).
type Writer struct {
	store        MemoryStore
	review       ReviewMode
	maxConflicts int
	log          zerolog.Logger
}

// NewWriter returns a Writer that writes to store, configured by cfg. A
// nil store, or a field of cfg out of range, is a *[ConfigError] naming
// each of them.
func NewWriter(store MemoryStore, cfg WriterConfig) (*Writer, error) {
	var bad FieldErrors
	bad.Check(store != nil, "NewWriter's store", Description("nil"), "a memcore.MemoryStore")
	cfg.check(&bad)
	if err := bad.Err("memcore", ""); err != nil {
		return nil, err
	}
	n := cfg.MaxConflicts
	if n == 0 {
		n = DefaultMaxConflicts
	}
	review := cfg.Review
	if review == "" {
		review = ReviewUntrusted
	}
	return &Writer{store: store, review: review, maxConflicts: n, log: cfg.Logger}, nil
}

// WriteResult says what a [Writer] did with one memory.
type WriteResult struct {
	// Memory is the version written — the caller's memory, changed in
	// place when it was built on a newer head — or nil when nothing was
	// written (Duplicate is then set).
	Memory *MemoryFile
	// Duplicate is the head another writer stored first that already does
	// what the memory would have done — says the same, or forgets the
	// chain — so nothing was written.
	Duplicate *MemoryFile
	// Raced lists, oldest first, the heads other writers stored first
	// that the memory was built on in turn: one per conflict resolved.
	Raced []*MemoryFile
	// Held is why the memory waits for review (its status_reason), ""
	// when it is in force.
	Held string
	// Restored is, for [Writer.Reject], the version in force the chain
	// went back to; nil when the rejection retired the chain.
	Restored *MemoryFile
}

// ErrTooManyConflicts: a [Writer] met more conflicts writing one memory
// than its MaxConflicts allows; nothing was written. The error is a
// [*TooManyConflictsError], which also matches [ErrConflict].
var ErrTooManyConflicts = errors.New("too many conflicts")

// TooManyConflictsError is the error of a write a [Writer] gave up on:
// other writers kept superseding the chain's head first. It matches
// [ErrTooManyConflicts] and [ErrConflict], and errors.As reaches the last
// [*ConflictError], naming the chain's head.
type TooManyConflictsError struct {
	// Conflicts is how many conflicts the write met, the last one
	// included.
	Conflicts int
	// Last is the conflict the writer gave up at.
	Last *ConflictError
}

func (e *TooManyConflictsError) Error() string {
	return fmt.Sprintf("%v: gave up after %d conflicts, another writer kept changing the memory first (the last: %v); write it again later",
		ErrTooManyConflicts, e.Conflicts, e.Last)
}

// Unwrap returns [ErrTooManyConflicts] and the last *ConflictError (which
// matches [ErrConflict]).
func (e *TooManyConflictsError) Unwrap() []error { return []error{ErrTooManyConflicts, e.Last} }

// Write stores m, first held for review when [Screen] says so under the
// writer's review mode: a memory that is not retired and has no status is
// given [StatusPending] and the rule's status_reason (WriteResult.Held); one
// that is pending already keeps its status. When m supersedes a version that another writer
// superseded first (the store's [*ConflictError]), m is built again on the
// chain's head now and written after it, up to MaxConflicts times: it
// then supersedes that head with version head + 1, and keeps what m
// changed of the version it was built on while taking what the other
// writer changed — the head's edges, plus the edges m added, less the
// edges m removed (none to m or the head), and the head's content and
// category where m kept those it was built on (a version that forgets a
// chain, say, forgets the text the other writer wrote). Its retirement,
// status, source and evidence are m's. If m, built on the head, repeats
// it (the same text, ignoring case and white space, category, status and
// retirement: the other writer did what m does), nothing is written and
// WriteResult.Duplicate is the head.
//
// m is changed in place (Supersedes, Version, Related, Category,
// Content), so that on every return its fields are those of its last try.
// Errors: the store's, one wrapping the store's error when the head cannot
// be read, and a [*TooManyConflictsError] when the conflicts outnumber
// MaxConflicts.
func (w *Writer) Write(ctx context.Context, m *MemoryFile) (*WriteResult, error) {
	res := &WriteResult{}
	w.screen(m)
	res.Held = m.Meta.StatusReason
	var base *MemoryFile // the version m was built on, read on the first conflict
	for {
		err := w.store.Write(ctx, m)
		if err == nil {
			res.Memory = m
			return res, nil
		}
		head, herr := w.conflict(ctx, err, m, len(res.Raced))
		if head == nil {
			return res, herr
		}
		if base == nil {
			base = w.readBase(ctx, m)
		}
		rebase(m, base, head)
		res.Raced = append(res.Raced, head)
		base = head
		w.log.Info().Str("id", m.Meta.ID).Str("head", head.Meta.ID).Int("version", m.Meta.Version).
			Msg("memcore: another writer changed the memory first; writing after its version")
		if repeats(m, head) {
			res.Duplicate = head
			return res, nil
		}
	}
}

// screen holds m for review when Screen says so under the writer's mode.
func (w *Writer) screen(m *MemoryFile) {
	if m.Meta.Status != StatusActive {
		if m.Meta.Status == StatusPending && m.Meta.StatusReason == "" {
			m.Meta.StatusReason = "pending: held by its writer"
		}
		return
	}
	if reason := Screen(m, w.review); reason != "" {
		m.Meta.Status, m.Meta.StatusReason = StatusPending, reason
	}
}

// ErrNotPending: a memory given to [Writer.Approve] or [Writer.Reject]
// does not wait for review.
var ErrNotPending = errors.New("the memory does not wait for review")

// Approve puts pending, the head of a chain that waits for review, in
// force: it writes its next version with no status, trigger manual and
// sessionID — pending's text, source, evidence and anchors, or, when
// content is not empty and says something else (a person's edit), content
// with source user and no evidence. It is a person's decision, so it is not
// screened. When another writer changed the chain since pending was read,
// nothing is written and the error is the store's *[ConflictError] naming
// the chain's head: the person reviews that one. pending not pending is
// [ErrNotPending].
func (w *Writer) Approve(ctx context.Context, pending *MemoryFile, content, sessionID string) (*WriteResult, error) {
	if pending.Meta.Status != StatusPending {
		return nil, fmt.Errorf("memcore: approve %s: %w", pending.Meta.ID, ErrNotPending)
	}
	m := NewVersion(pending, sessionID, TriggerManual)
	m.Content = pending.Content
	m.Meta.Source, m.Meta.Evidence, m.Meta.Anchors = pending.Meta.Source, cloneEvidence(pending.Meta.Evidence), slices.Clone(pending.Meta.Anchors)
	if strings.TrimSpace(content) != "" && !SameContent(content, pending.Content) {
		m.Content, m.Meta.Source, m.Meta.Evidence = content, SourceUser, nil
	}
	if err := w.store.Write(ctx, m); err != nil {
		return nil, fmt.Errorf("memcore: approve %s: %w", pending.Meta.ID, err)
	}
	return &WriteResult{Memory: m}, nil
}

// Reject takes pending, the head of a chain that waits for review, out of
// the review queue for good, without putting it in force: when a version
// in force precedes the pending ones (a pending change of a memory), the
// chain goes back to it — a new version with its text, category, edges,
// source, evidence and anchors (WriteResult.Restored is it), and reason as
// its RejectionReason — and otherwise the chain is retired with reason, as
// a forgotten memory is.
// Trigger manual and sessionID are recorded. Conflicts are returned as
// [Writer.Approve] returns them; pending not pending is [ErrNotPending].
func (w *Writer) Reject(ctx context.Context, pending *MemoryFile, reason, sessionID string) (*WriteResult, error) {
	if pending.Meta.Status != StatusPending {
		return nil, fmt.Errorf("memcore: reject %s: %w", pending.Meta.ID, ErrNotPending)
	}
	chain, err := VersionChain(ctx, w.store, pending.Meta.ID, 0)
	if err != nil && len(chain) == 0 {
		return nil, fmt.Errorf("memcore: reject %s: %w", pending.Meta.ID, err)
	}
	var prev *MemoryFile
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].Meta.Status != StatusPending {
			prev = chain[i]
			break
		}
	}
	m := NewVersion(pending, sessionID, TriggerManual)
	res := &WriteResult{Memory: m}
	if prev != nil && !prev.Meta.Retired {
		m.Content, m.Meta.Category = prev.Content, prev.Meta.Category
		m.Meta.Related = slices.Clone(prev.Meta.Related)
		m.Meta.Source, m.Meta.Evidence, m.Meta.Anchors = prev.Meta.Source, cloneEvidence(prev.Meta.Evidence), slices.Clone(prev.Meta.Anchors)
		m.Meta.RejectionReason = reason
		res.Restored = prev
	} else {
		m.Content, m.Meta.Retired, m.Meta.RetiredReason = pending.Content, true, reason
	}
	if err := w.store.Write(ctx, m); err != nil {
		return nil, fmt.Errorf("memcore: reject %s: %w", pending.Meta.ID, err)
	}
	return res, nil
}

// Revise writes m, a mechanical revision of pred made by a tool — an
// anchor's path fixed after a rename, say — with pred's source, evidence,
// status and status_reason: a revision changes neither who stated a memory
// nor whether it waits for review, so it is not screened. m must
// supersede pred. It is not built on a newer head either: when another
// writer changed the chain since pred was read, nothing is written and the
// error is the store's *[ConflictError], for the revision to be made again
// from the chain's head.
func (w *Writer) Revise(ctx context.Context, pred, m *MemoryFile) (*WriteResult, error) {
	if m.Meta.Supersedes == nil || *m.Meta.Supersedes != pred.Meta.ID {
		return nil, fmt.Errorf("memcore: revise %s: %w: it does not supersede %s", m.Meta.ID, ErrInvalidMemory, pred.Meta.ID)
	}
	m.Meta.Source, m.Meta.Evidence = pred.Meta.Source, cloneEvidence(pred.Meta.Evidence)
	m.Meta.Status, m.Meta.StatusReason = pred.Meta.Status, pred.Meta.StatusReason
	if err := w.store.Write(ctx, m); err != nil {
		return nil, fmt.Errorf("memcore: revise %s: %w", pred.Meta.ID, err)
	}
	return &WriteResult{Memory: m, Held: m.Meta.StatusReason}, nil
}

func cloneEvidence(e *Evidence) *Evidence {
	if e == nil {
		return nil
	}
	c := *e
	return &c
}

// conflict returns the head to build on after err, the error of writing
// m with n conflicts resolved before: nil and err itself when err is no
// conflict, and nil and a *TooManyConflictsError when the writer gives up.
func (w *Writer) conflict(ctx context.Context, err error, m *MemoryFile, n int) (*MemoryFile, error) {
	if !errors.Is(err, ErrConflict) {
		return nil, err
	}
	var ce *ConflictError
	if !errors.As(err, &ce) {
		ce = &ConflictError{ID: m.Meta.ID}
		if m.Meta.Supersedes != nil {
			ce.Predecessor = *m.Meta.Supersedes
		}
	}
	if n >= w.maxConflicts {
		return nil, &TooManyConflictsError{Conflicts: n + 1, Last: ce}
	}
	if ce.Head != nil {
		return ce.Head, nil
	}
	// A store that does not name the head: the one it lists now.
	if m.Meta.Supersedes == nil {
		return nil, err
	}
	id, lerr := LatestVersion(ctx, w.store, *m.Meta.Supersedes)
	if lerr != nil {
		return nil, fmt.Errorf("%w (and the chain's head cannot be read: %w)", err, lerr)
	}
	head, rerr := w.store.Read(ctx, id)
	if rerr != nil {
		return nil, fmt.Errorf("%w (and the chain's head cannot be read: %w)", err, rerr)
	}
	return head, nil
}

// readBase reads the version m supersedes, or returns nil when it cannot
// (m is then merged as though it had changed everything it holds).
func (w *Writer) readBase(ctx context.Context, m *MemoryFile) *MemoryFile {
	if m.Meta.Supersedes == nil {
		return nil
	}
	base, err := w.store.Read(ctx, *m.Meta.Supersedes)
	if err != nil {
		return nil
	}
	return base
}

// rebase makes m, built on base (nil when unknown), the next version of
// head: superseding head, version head + 1, with head's edges plus those
// m added to base's less those it removed (none to m or head), and head's
// content and category where m kept base's.
func rebase(m, base, head *MemoryFile) {
	id := head.Meta.ID
	m.Meta.Supersedes = &id
	m.Meta.Version = head.Meta.Version + 1
	var baseEdges []RelatedMemory
	if base != nil {
		baseEdges = base.Meta.Related
		if m.Meta.Category == base.Meta.Category {
			m.Meta.Category = head.Meta.Category
		}
		if m.Content == base.Content {
			m.Content = head.Content
		}
	}
	var related []RelatedMemory
	keep := func(e RelatedMemory) {
		if e.ID != m.Meta.ID && e.ID != id && !slices.Contains(related, e) {
			related = append(related, e)
		}
	}
	for _, e := range head.Meta.Related {
		if !slices.Contains(baseEdges, e) || slices.Contains(m.Meta.Related, e) {
			keep(e) // the other writer's, or kept by m
		}
	}
	for _, e := range m.Meta.Related {
		if !slices.Contains(baseEdges, e) {
			keep(e) // added by m
		}
	}
	m.Meta.Related = related
}

// repeats reports whether m, a new version of head's chain, changes
// nothing of head that a reader sees: the same text (see [SameContent]),
// category, status and retirement.
func repeats(m, head *MemoryFile) bool {
	return SameContent(m.Content, head.Content) && m.Meta.Category == head.Meta.Category &&
		m.Meta.Status == head.Meta.Status && m.Meta.Retired == head.Meta.Retired
}
