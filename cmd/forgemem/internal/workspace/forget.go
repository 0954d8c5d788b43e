package workspace

import (
	"context"
	"fmt"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
)

// ForgetResult says what [Workspace.Forget] did.
type ForgetResult struct {
	// Memory is the retired version written, or, when the chain was
	// already forgotten, its retired head.
	Memory Memory `json:"memory"`
	// Retired is the id of the version the retired one supersedes: the
	// chain's head until now.
	Retired string `json:"retired,omitempty"`
	// Already is true when the chain was forgotten before; nothing was
	// written.
	Already bool `json:"already,omitempty"`
}

// Forget retires the chain of the memory ref names (its whole id, or a
// unique prefix of at least MinPrefixDigits digits): it writes a new
// version with the head's content and category, trigger manual, marked
// retired with the reason (at most MaxReasonRunes characters as given,
// with no control character but tab and line breaks and no bidirectional
// formatting or invisible character, as for Remember; then redacted).
// The chain keeps its history on disk but is no longer recalled, searched,
// offered to the classifier or listed by default; Remember with Supersedes
// revives it, and Purge deletes it. It writes through memcore.Writer: when another
// session changes the memory meanwhile (memcore.ErrConflict), its version
// is retired instead, and when it forgot the memory first, nothing is
// written (Already). A memory that waits for review is not forgotten but
// rejected (Reject): forgetting it is [ErrWaitsForReview]. A version on a
// branch of a fork that its chain did not continue from (a parallel
// change, not in force) is not forgotten: forgetting the chain would
// forget the change in force too, so it is [ErrInvalidInput], naming the
// current version.
func (w *Workspace) Forget(ctx context.Context, ref, reason string) (*ForgetResult, error) {
	reason, err := reasonText(reason)
	if err != nil {
		return nil, err
	}
	return w.forget(ctx, ref, reason)
}

// forget is Forget with reason checked (reasonText), not yet redacted:
// its length is that of what the user typed, which redacting can change
// (a short secret becomes a longer placeholder), so it is checked first.
func (w *Workspace) forget(ctx context.Context, ref, reason string) (*ForgetResult, error) {
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	t, err := w.resolveToChange(ctx, snap, ref, "forget")
	if err != nil {
		return nil, err
	}
	head, _ := snap.g.Head(t.Meta.ID)
	if isParallel(snap.g, t) && !head.Meta.Retired {
		return nil, invalidf("%s is a parallel change that is not in force: %s, changed alongside it (as a merge of two branches that each changed the memory leaves them), is the memory's current version. "+
			"forget forgets a whole memory, %s too (forget %s does that); to keep one change and the other as history, settle the fork as forgemem validate says",
			shortRef(t.Meta.ID), shortRef(head.Meta.ID), shortRef(head.Meta.ID), shortRef(head.Meta.ID))
	}
	if head.Meta.Status == memcore.StatusPending {
		return nil, fmt.Errorf("%w: %s waits for review; reject it instead (forgemem review --reject %s)", ErrWaitsForReview, head.Meta.ID, head.Meta.ID)
	}
	if head.Meta.Retired {
		return &ForgetResult{Memory: view(w.store, snap.g, head), Already: true}, nil
	}
	if err := w.requireScope(head.Meta.Scope); err != nil {
		return nil, err
	}
	reason, _ = redact.Text(reason)
	m := w.retiredVersion(head, reason)
	repointCarried(snap, m)
	wr, err := w.writer.Write(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("writing the retired version: %w", err)
	}
	after, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	if wr.Duplicate != nil { // another session forgot it first
		return &ForgetResult{Memory: view(w.store, after.g, wr.Duplicate), Already: true}, nil
	}
	return &ForgetResult{Memory: view(w.store, after.g, m), Retired: *m.Meta.Supersedes}, nil
}

// retiredVersion is the version that retires head's chain.
func (w *Workspace) retiredVersion(head *memcore.MemoryFile, reason string) *memcore.MemoryFile {
	m := w.newVersion(head, "")
	m.Meta.Retired = true
	m.Meta.RetiredReason = reason
	return m
}
