package anchor

import (
	"context"

	"github.com/forgemem/forgemem/memcore"
)

// Store is a memcore.MemoryStore that records the anchors of each memory
// written through it, for a writer whose anchors are a model's proposals —
// a capture pipeline's classifier, an agent's tool call. It also says why
// a memory may be outdated ([Store.Stale]), which the capture pipeline
// shows its classifier.
type Store struct {
	memcore.MemoryStore
	// Checker checks the repository the memories are about.
	Checker *Checker
}

// NewStore returns store, recording anchors with c.
func NewStore(store memcore.MemoryStore, c *Checker) *Store {
	return &Store{MemoryStore: store, Checker: c}
}

// Write writes m with its anchors recorded (see [Checker.Anchors]): for a
// repo-scope memory, the anchors m carries are taken as proposals, kept
// only when the tree has them, and those its text names are added, each
// with its state; a user-scope memory is written without anchors, as it
// holds in every repository. m itself is not changed.
func (s *Store) Write(ctx context.Context, m *memcore.MemoryFile) error {
	if m == nil {
		return s.MemoryStore.Write(ctx, m)
	}
	cp := *m
	cp.Meta.Anchors = nil
	if cp.Meta.Scope == memcore.ScopeRepo {
		cp.Meta.Anchors = s.Checker.Anchors(ctx, m.Content, m.Meta.Anchors, nil).Anchors
	}
	return s.MemoryStore.Write(ctx, &cp)
}

// Stale returns why m may be outdated, or "" (see [Checker.Stale]).
func (s *Store) Stale(ctx context.Context, m *memcore.MemoryFile) string {
	return s.Checker.Stale(ctx, m)
}
