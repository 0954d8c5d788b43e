package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
)

// RememberInput is a memory a person adds by hand.
type RememberInput struct {
	// Text is the memory's content. Secrets in it are redacted.
	Text string
	// Scope and Category are required for a new memory. A new version
	// takes its chain's by default; it may change the category, not the
	// scope.
	Scope    memcore.Scope
	Category memcore.Category
	// Supersedes names (by id or unique prefix) the memory this text
	// changes; the new version supersedes the head of its chain, and
	// revives the chain if it was forgotten.
	Supersedes string
	// RelatesTo, Refines and Contradicts name memories to link to.
	RelatesTo, Refines, Contradicts []string
	// SessionID is recorded in the file; empty leaves it out.
	SessionID string
	// Anchors are the paths and symbols of the repository the memory is
	// about, as a person gives them: recorded whether or not the working
	// tree has them now (RememberResult.MissingAnchors lists those it has
	// not). Proposed are an agent's: recorded only when the tree has them.
	// The anchors the text names are recorded either way. Only a repo
	// memory has anchors.
	Anchors, Proposed []memcore.Anchor
}

// RememberResult says what [Workspace.Remember] wrote.
type RememberResult struct {
	Memory Memory `json:"memory"`
	// Redactions counts the secrets replaced by [REDACTED].
	Redactions int `json:"redactions"`
	// Superseded is the id of the version the new one supersedes, "" for a
	// first version.
	Superseded string `json:"superseded,omitempty"`
	// NotHead is the id given to supersede when it was not the head of its
	// chain: the head (Superseded) was superseded instead.
	NotHead string `json:"not_head,omitempty"`
	// Revived is true when the chain was forgotten and is current again.
	Revived bool `json:"revived,omitempty"`
	// Raced is the id of a version another session wrote while this one
	// was being written: the new version supersedes it instead (memcore's
	// ErrConflict, retried once).
	Raced string `json:"raced,omitempty"`
	// MissingAnchors are the anchors given that the working tree does not
	// have now: recorded all the same, and reported stale.
	MissingAnchors []memcore.Anchor `json:"missing_anchors,omitempty"`
	// DroppedAnchors are the proposed anchors the tree does not have: not
	// recorded.
	DroppedAnchors []memcore.Anchor `json:"dropped_anchors,omitempty"`
}

// testHookBeforeWrite, when set by a test, is called just before a
// memory is written, to let another writer change the chain first.
var testHookBeforeWrite func()

// write stores m.
func (w *Workspace) write(ctx context.Context, m *memcore.MemoryFile) error {
	if testHookBeforeWrite != nil {
		testHookBeforeWrite()
	}
	return w.store.Write(ctx, m)
}

// Remember writes a memory a person gives (trigger manual), redacted as
// captured ones are: a new memory, or with Supersedes a new version of an
// existing one. Links are checked before anything is written: their
// targets must exist, may not be in the memory's own chain, and a repo
// memory may not link to a user-scope one (teammates do not have it).
// Text equal, ignoring case and white space, to the current text of a
// memory of the same scope is [ErrDuplicate]; an unusable argument is
// [ErrInvalidInput]. When another session supersedes the same version
// meanwhile (memcore.ErrConflict), the new version supersedes that
// session's instead (RememberResult.Raced).
func (w *Workspace) Remember(ctx context.Context, in RememberInput) (*RememberResult, error) {
	if err := checkScope(in.Scope); err != nil {
		return nil, err
	}
	if err := checkCategory(in.Category); err != nil {
		return nil, err
	}
	clean, n := redact.Text(strings.TrimSpace(in.Text))
	if clean == "" {
		return nil, invalidf("the text to remember is empty")
	}
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	res := &RememberResult{Redactions: n}
	var m *memcore.MemoryFile
	if in.Supersedes != "" {
		pred, err := w.resolveIn(ctx, snap, in.Supersedes)
		if err != nil {
			return nil, err
		}
		head, _ := snap.g.Head(pred.Meta.ID)
		if in.Scope != "" && in.Scope != head.Meta.Scope {
			return nil, invalidf("a new version keeps its chain's scope (%s); to move the memory, remember it anew with --scope %s and forget %s",
				head.Meta.Scope, in.Scope, head.Meta.ID)
		}
		if err := w.requireScope(head.Meta.Scope); err != nil {
			return nil, err
		}
		m = w.newVersion(head, in.SessionID)
		if in.Category != "" {
			m.Meta.Category = in.Category
		}
		res.Superseded = head.Meta.ID
		if head.Meta.ID != pred.Meta.ID {
			res.NotHead = pred.Meta.ID
		}
		res.Revived = head.Meta.Retired
	} else {
		if in.Scope == "" || in.Category == "" {
			return nil, invalidf("a new memory needs a scope (repo or user) and a category (%s)", categoryList())
		}
		if err := w.requireScope(in.Scope); err != nil {
			return nil, err
		}
		now := w.now()
		m = &memcore.MemoryFile{Meta: memcore.MemoryMeta{
			ID: memcore.NewMemoryID(), CreatedAt: now, UpdatedAt: now, Version: 1,
			Scope: in.Scope, Category: in.Category, SessionID: in.SessionID, Trigger: memcore.TriggerManual,
		}}
	}
	m.Content = clean
	if err := w.anchorAndLink(ctx, snap, m, in, res); err != nil {
		return nil, err
	}
	if dup := duplicateOf(snap, m); dup != nil {
		return nil, fmt.Errorf("%w: %s already says this (%s); nothing was written", ErrDuplicate, dup.Meta.ID, clip(dup.Title(), 60))
	}
	err = w.write(ctx, m)
	var ce *memcore.ConflictError
	if errors.As(err, &ce) && ce.Head != nil {
		// Another session changed the memory since it was read: build on
		// its change instead, once.
		res.Raced, res.Superseded, res.Revived = ce.Head.Meta.ID, ce.Head.Meta.ID, ce.Head.Meta.Retired
		pred := ce.Head.Meta.ID
		m.Meta.Supersedes, m.Meta.Version = &pred, ce.Head.Meta.Version+1
		if in.Category == "" {
			m.Meta.Category = ce.Head.Meta.Category
		}
		err = w.write(ctx, m)
	}
	if err != nil {
		return nil, fmt.Errorf("writing the memory: %w", err)
	}
	after, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	res.Memory = view(w.store, after.g, m)
	return res, nil
}

// newVersion returns the next version of head, written by hand now: the
// content kept (the caller may change it), not retired.
func (w *Workspace) newVersion(head *memcore.MemoryFile, sessionID string) *memcore.MemoryFile {
	m := memcore.NewVersion(head, sessionID, memcore.TriggerManual)
	m.Meta.CreatedAt = w.now()
	m.Meta.UpdatedAt = m.Meta.CreatedAt
	m.Content = head.Content
	return m
}

// link adds the links of in to m, checking each target.
func (w *Workspace) link(ctx context.Context, snap *snapshot, m *memcore.MemoryFile, in RememberInput) error {
	chain := map[string]bool{}
	if m.Meta.Supersedes != nil {
		for _, c := range snap.g.Chain(*m.Meta.Supersedes) {
			chain[c.Meta.ID] = true
		}
	}
	for _, l := range []struct {
		rel  memcore.Relationship
		refs []string
	}{
		{memcore.RelationshipRelatesTo, in.RelatesTo},
		{memcore.RelationshipRefines, in.Refines},
		{memcore.RelationshipContradicts, in.Contradicts},
	} {
		for _, ref := range l.refs {
			t, err := w.resolveIn(ctx, snap, ref)
			if err != nil {
				return err
			}
			switch {
			case chain[t.Meta.ID]:
				return invalidf("%s is a version of the memory itself; a memory cannot be linked to its own chain", t.Meta.ID)
			case m.Meta.Scope == memcore.ScopeRepo && t.Meta.Scope == memcore.ScopeUser:
				return invalidf("%s is a user-scope memory: a repo memory cannot link to it, as teammates do not have it", t.Meta.ID)
			}
			edge := memcore.RelatedMemory{ID: t.Meta.ID, Relationship: l.rel}
			if !slices.Contains(m.Meta.Related, edge) {
				m.Meta.Related = append(m.Meta.Related, edge)
			}
		}
	}
	return nil
}

// duplicateOf returns the current version, in m's scope, of another chain
// or of m's own, whose text equals m's ignoring case and white space, or
// nil. A forgotten chain's text may be remembered again, and a new version
// may keep the text to change the category.
func duplicateOf(snap *snapshot, m *memcore.MemoryFile) *memcore.MemoryFile {
	want := normalizeText(m.Content)
	for _, h := range snap.g.Heads() {
		own := m.Meta.Supersedes != nil && *m.Meta.Supersedes == h.Meta.ID
		if h.Meta.Scope != m.Meta.Scope || h.Meta.Retired || own && h.Meta.Category != m.Meta.Category {
			continue
		}
		if normalizeText(h.Content) == want {
			return h
		}
	}
	return nil
}

// normalizeText lowers s and drops its white space, as capture compares
// contents for duplicates.
func normalizeText(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}
