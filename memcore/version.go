package memcore

import (
	"context"
	"fmt"
)

// NewVersion returns the next version of predecessor: a new id, the current
// time (UTC, whole seconds) as created_at and updated_at, version + 1, the
// same scope and category, Supersedes naming predecessor, and predecessor's
// related edges carried forward (copied). The caller sets Content, and may
// change anything else, before writing it.
//
// NewVersion does not check that predecessor is the head of its chain. A
// store refuses to write a second successor of one version with a
// [*ConflictError], whose Head is the version to build on instead: another
// session got there first.
func NewVersion(predecessor *MemoryFile, sessionID string, trigger Trigger) *MemoryFile {
	t := now()
	id := predecessor.Meta.ID
	var related []RelatedMemory
	if len(predecessor.Meta.Related) > 0 {
		related = append(related, predecessor.Meta.Related...)
	}
	return &MemoryFile{Meta: MemoryMeta{
		ID:         NewMemoryID(),
		CreatedAt:  t,
		UpdatedAt:  t,
		Version:    predecessor.Meta.Version + 1,
		Scope:      predecessor.Meta.Scope,
		Category:   predecessor.Meta.Category,
		Supersedes: &id,
		Related:    related,
		SessionID:  sessionID,
		Trigger:    trigger,
	}}
}

// VersionChain reads the chain ending at id by following Supersedes links
// backward through store, and returns it oldest first, id's memory last.
//
// It walks toward the root only: pass the head (see [LatestVersion]) to get
// the whole history. It stops after maxDepth memories (maxDepth ≤ 0 means no
// limit) and when a link points back into the chain, so hand-made cycles
// terminate. If a predecessor cannot be read, it returns the part read so
// far with an error wrapping the store's error (ErrNotFound for a dangling
// link).
func VersionChain(ctx context.Context, store MemoryStore, id string, maxDepth int) ([]*MemoryFile, error) {
	var chain []*MemoryFile
	seen := make(map[string]bool)
	for cur := id; cur != "" && !seen[cur] && (maxDepth <= 0 || len(chain) < maxDepth); {
		seen[cur] = true
		m, err := store.Read(ctx, cur)
		if err != nil {
			reverse(chain)
			return chain, fmt.Errorf("memcore: version chain of %s: %w", id, err)
		}
		chain = append(chain, m)
		cur = ""
		if m.Meta.Supersedes != nil {
			cur = *m.Meta.Supersedes
		}
	}
	reverse(chain)
	return chain, nil
}

// conflictIn returns the *ConflictError of writing m, which supersedes a
// version, among the stored memories of g, or nil if that version has no
// successor in g.
func conflictIn(g *Graph, m *MemoryFile) error {
	pred := *m.Meta.Supersedes
	succ := g.succ[pred]
	if len(succ) == 0 {
		return nil
	}
	head, ok := g.Head(pred)
	if !ok { // the predecessor is not stored: its successors' chain
		head, _ = g.Head(succ[0].Meta.ID)
	}
	return &ConflictError{ID: m.Meta.ID, Predecessor: pred, Successor: succ[0].Clone(), Head: head.Clone()}
}

func reverse(ms []*MemoryFile) {
	for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
		ms[i], ms[j] = ms[j], ms[i]
	}
}

// LatestVersion returns the id of the head of the chain that id belongs to
// (see [Graph.Head]): its newest version, or at a fork the best tip. It lists
// the whole store, so it suits commands and audits rather than hot paths;
// build a [Graph] once for repeated questions. An id with no successor is
// its own head; an id that is not stored is an error wrapping ErrNotFound,
// and one that is not an id an error wrapping ErrInvalidID.
func LatestVersion(ctx context.Context, store MemoryStore, id string) (string, error) {
	if err := ValidateID(id); err != nil {
		return "", fmt.Errorf("memcore: latest version: %w", err)
	}
	all, err := store.List(ctx)
	if err != nil {
		return "", fmt.Errorf("memcore: latest version of %s: %w", id, err)
	}
	head, ok := NewGraph(all).Head(id)
	if !ok {
		return "", fmt.Errorf("memcore: latest version of %s: %w", id, ErrNotFound)
	}
	return head.Meta.ID, nil
}
