package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
)

// ReviewItem is a memory that waits for a person's review.
type ReviewItem struct {
	// Memory is the version that waits: the head of its chain, with its
	// status_reason (the quarantine rule that held it), source and
	// evidence.
	Memory Memory `json:"memory"`
	// InForce is the version of its chain in force, which approving
	// Memory changes and rejecting it keeps; nil for a new memory.
	InForce *Memory `json:"in_force,omitempty"`
	// Rule is the quarantine rule that held it ("instruction", "source",
	// …), the first word of Memory.StatusReason.
	Rule string `json:"rule"`
	// Held is set for a repository memory that is in force in its file
	// but reads like an instruction, which recall holds until you approve
	// it (a file a repository commits can claim any status): approving it
	// records your approval and writes nothing; rejecting it forgets it.
	// Memory.StatusReason then says so.
	Held bool `json:"held,omitempty"`
}

// heldNote ends the status_reason shown for a held memory (ReviewItem.Held).
const heldNote = " (a repository's memory in force in its file; recall holds it until you approve it)"

// ReviewQueue lists the memories that wait for review, one per chain
// (its head), oldest first.
func (w *Workspace) ReviewQueue(ctx context.Context) ([]ReviewItem, error) {
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	settled := memcore.NewGraph(snap.g.Settled())
	items := []ReviewItem{}
	for _, h := range snap.g.Heads() {
		if held := w.heldBy(h); held != "" {
			it := ReviewItem{Memory: view(w.store, snap.g, h), Rule: ruleOf(held), Held: true}
			it.Memory.StatusReason = held + heldNote
			items = append(items, it)
			continue
		}
		if h.Meta.Status != memcore.StatusPending {
			continue
		}
		it := ReviewItem{Memory: view(w.store, snap.g, h), Rule: ruleOf(h.Meta.StatusReason)}
		if f := inForce(snap.g, settled, h); f != nil {
			v := view(w.store, settled, f)
			it.InForce = &v
		}
		items = append(items, it)
	}
	slices.SortStableFunc(items, func(a, b ReviewItem) int {
		return cmp.Or(a.Memory.CreatedAt.Compare(b.Memory.CreatedAt), cmp.Compare(a.Memory.ID, b.Memory.ID))
	})
	return items, nil
}

// inForce returns the version of head's chain that is in force (settled is
// the graph of the settled memories), or nil when none is.
func inForce(g, settled *memcore.Graph, head *memcore.MemoryFile) *memcore.MemoryFile {
	for _, v := range slices.Backward(g.Chain(head.Meta.ID)) {
		if h, ok := settled.Head(v.Meta.ID); ok {
			return h
		}
	}
	return nil
}

// ruleOf is the rule a status_reason names: its text before the colon.
func ruleOf(reason string) string {
	rule, _, _ := strings.Cut(reason, ":")
	return strings.TrimSpace(rule)
}

// ReviewResult says what [Workspace.Approve] or [Workspace.Reject] wrote.
type ReviewResult struct {
	// Memory is the version written: in force (approved, or the chain
	// taken back to its version in force), or retired (a new memory
	// rejected).
	Memory Memory `json:"memory"`
	// Reviewed is the id of the version that waited.
	Reviewed string `json:"reviewed"`
	// Restored is the id of the version in force the chain went back to
	// when a change was rejected; "" otherwise.
	Restored string `json:"restored,omitempty"`
	// Edited is true when the memory was approved with a person's text.
	Edited bool `json:"edited,omitempty"`
	// Redactions counts the secrets replaced in that text.
	Redactions int `json:"redactions,omitempty"`
}

// Approve puts in force the memory ref names (its id, or a unique prefix
// of at least MinPrefixDigits digits; any version of its chain), which
// must wait for review: a new version without the pending status, with
// its text, or with content when not empty — a person's edit, redacted
// and checked as Remember checks its text, recorded as the user's words. A
// memory that does not wait is [ErrNotWaiting] (and [ErrInvalidInput]);
// one changed meanwhile by another session is an error wrapping
// memcore.ErrConflict, saying to review it again.
func (w *Workspace) Approve(ctx context.Context, ref, content string) (*ReviewResult, error) {
	snap, head, held, err := w.waiting(ctx, ref, "approve")
	if err != nil {
		return nil, err
	}
	res := &ReviewResult{Reviewed: head.Meta.ID}
	if held { // nothing is written: the memory is as it was read
		if strings.TrimSpace(content) != "" && !memcore.SameContent(content, head.Content) {
			return nil, invalidf("%s is in force in its file, held at recall: approve it as it is, or change it with forgemem remember --supersedes %s", head.Meta.ID, head.Meta.ID)
		}
		if err := w.approved().add(head.Content); err != nil {
			return nil, err
		}
		res.Memory = view(w.store, snap.g, head)
		return res, nil
	}
	var clean string
	if strings.TrimSpace(content) != "" {
		if clean, res.Redactions, err = rememberText(content); err != nil {
			return nil, err
		}
		res.Edited = !memcore.SameContent(clean, head.Content)
	}
	wr, err := w.writer.Approve(ctx, head, clean, "")
	if err != nil {
		return nil, reviewError(head, err)
	}
	if err := w.recordApproval(wr.Memory); err != nil {
		return nil, fmt.Errorf("%s is approved, but recall will hold it: %w", wr.Memory.Meta.ID, err)
	}
	return w.reviewed(ctx, res, wr)
}

// Reject takes the memory ref names, which must wait for review, out of
// the queue without putting it in force: a change of a memory in force
// goes back to that version; a new memory, or one recall holds, is
// retired with reason, as a forgotten one is. The reason is checked as
// Forget's — its length as the user typed it — and then redacted.
// Errors as for [Workspace.Approve].
func (w *Workspace) Reject(ctx context.Context, ref, reason string) (*ReviewResult, error) {
	reason, err := reasonText(reason)
	if err != nil {
		return nil, err
	}
	_, head, held, err := w.waiting(ctx, ref, "reject")
	if err != nil {
		return nil, err
	}
	if held {
		// forget redacts the reason, checked already: checking it again
		// once redacted would count the placeholders.
		fr, err := w.forget(ctx, head.Meta.ID, reason)
		if err != nil {
			return nil, err
		}
		return &ReviewResult{Memory: fr.Memory, Reviewed: head.Meta.ID}, nil
	}
	reason, _ = redact.Text(reason)
	wr, err := w.writer.Reject(ctx, head, reason, "")
	if err != nil {
		return nil, reviewError(head, err)
	}
	res := &ReviewResult{Reviewed: head.Meta.ID}
	if wr.Restored != nil {
		res.Restored = wr.Restored.Meta.ID
	}
	return w.reviewed(ctx, res, wr)
}

// waiting resolves ref (as forget does: at least MinPrefixDigits digits)
// in the folders as they are now (snap) to the head of its chain, which
// must wait for review: pending, or held at recall (held; see
// ReviewItem.Held).
func (w *Workspace) waiting(ctx context.Context, ref, verb string) (snap *snapshot, head *memcore.MemoryFile, held bool, err error) {
	if snap, err = w.load(ctx); err != nil {
		return nil, nil, false, err
	}
	m, err := w.resolveToChange(ctx, snap, ref, verb)
	if err != nil {
		return nil, nil, false, err
	}
	head, _ = snap.g.Head(m.Meta.ID)
	held = w.heldBy(head) != ""
	if head.Meta.Status != memcore.StatusPending && !held {
		return nil, nil, false, notWaitingError(notWaiting(m, head))
	}
	if err := w.requireScope(head.Meta.Scope); err != nil {
		return nil, nil, false, err
	}
	return snap, head, held, nil
}

// reviewError explains a failed approval or rejection of head: another
// session changed it meanwhile, or the write failed.
func reviewError(head *memcore.MemoryFile, err error) error {
	var ce *memcore.ConflictError
	if errors.As(err, &ce) && ce.Head != nil {
		return fmt.Errorf("%s changed while you reviewed it (its current version is %s); nothing was written — review it again: %w",
			head.Meta.ID, ce.Head.Meta.ID, err)
	}
	return fmt.Errorf("writing the reviewed version: %w", err)
}

// reviewed fills in res with the version wr wrote.
func (w *Workspace) reviewed(ctx context.Context, res *ReviewResult, wr *memcore.WriteResult) (*ReviewResult, error) {
	after, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	res.Memory = view(w.store, after.g, wr.Memory)
	return res, nil
}

// notWaitingError is the error of a memory that does not wait for review:
// its message says why (see notWaiting), and it wraps [ErrInvalidInput] and
// [ErrNotWaiting].
type notWaitingError string

func (e notWaitingError) Error() string { return ErrInvalidInput.Error() + ": " + string(e) }

func (notWaitingError) Unwrap() []error { return []error{ErrInvalidInput, ErrNotWaiting} }

// notWaiting says why the memory m, whose chain's head is head, cannot be
// reviewed: it never waited, or it did and no longer does — approved,
// rejected or changed since (approving twice, say) — naming what its
// memory is now rather than only another id than the one given.
func notWaiting(m, head *memcore.MemoryFile) string {
	if m.Meta.ID == head.Meta.ID {
		return fmt.Sprintf("%s does not wait for review (forgemem review lists those that do)", m.Meta.ID)
	}
	now := fmt.Sprintf("%s (version %d", head.Meta.ID, head.Meta.Version)
	if head.Meta.Retired {
		now += ", forgotten"
	}
	now += ")"
	if m.Meta.Status == memcore.StatusPending {
		return fmt.Sprintf("%s no longer waits for review: it was approved, rejected or changed since, and its memory is now %s; forgemem show %s has its history",
			m.Meta.ID, now, head.Meta.ID)
	}
	return fmt.Sprintf("%s does not wait for review, nor does its memory's current version, %s (forgemem review lists those that do)", m.Meta.ID, now)
}

// WhyHeld says, in a sentence, why a memory waits for the user's review,
// from its status_reason ("<rule>: <what it found>", memcore.Screen):
// `The quarantine rule "source" held it: not stated in the user's own
// words (source agent).` The reason may hold parentheses of its own, so it
// is never put in parentheses. A blank reason says nothing. The command
// and the MCP server say it alike. A character of the reason a person
// cannot see is written as its code point (memcore.VisibleText).
func WhyHeld(reason string) string {
	reason = strings.TrimSuffix(strings.TrimSpace(memcore.VisibleText(reason)), ".")
	if reason == "" {
		return ""
	}
	if rule, what, ok := strings.Cut(reason, ": "); ok && rule != "" && !strings.ContainsAny(rule, " \t") {
		return fmt.Sprintf("The quarantine rule %q held it: %s.", rule, what)
	}
	return "Why it waits: " + reason + "."
}
