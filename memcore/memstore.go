package memcore

import (
	"context"
	"fmt"
	"sync"
)

// MemStore is a [MemoryStore] held in memory, for tests and for hosts that
// keep memories elsewhere. It behaves like a [FileStore] — same validation,
// same errors, memories normalised as a file round trip would (times in UTC
// with no monotonic reading, no related edges as nil) — and passes the same
// conformance suite. A version gets at most one successor: a Write
// superseding a version already superseded fails with a [*ConflictError].
// It hands out copies, so callers cannot change what it holds. The zero
// value is not ready for use; call [NewMemStore].
type MemStore struct {
	mu   sync.RWMutex
	byID map[string]*MemoryFile
	// superseded holds the ids that a stored memory supersedes.
	superseded map[string]bool
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{byID: make(map[string]*MemoryFile), superseded: make(map[string]bool)}
}

// Write implements [MemoryStore].
func (s *MemStore) Write(ctx context.Context, m *MemoryFile) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("memcore: write: %w", err)
	}
	c := m.Clone()
	c.normalize()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[c.Meta.ID]; ok {
		return fmt.Errorf("memcore: write %s: %w", c.Meta.ID, ErrAlreadyExists)
	}
	if p := c.Meta.Supersedes; p != nil && s.superseded[*p] {
		return fmt.Errorf("memcore: write %s: %w", c.Meta.ID, conflictIn(NewGraph(s.all()), c))
	}
	s.byID[c.Meta.ID] = c
	if p := c.Meta.Supersedes; p != nil {
		s.superseded[*p] = true
	}
	return nil
}

// all returns the stored memories, shared; the caller holds s.mu.
func (s *MemStore) all() []*MemoryFile {
	out := make([]*MemoryFile, 0, len(s.byID))
	for _, m := range s.byID {
		out = append(out, m)
	}
	sortMemories(out)
	return out
}

// Read implements [MemoryStore].
func (s *MemStore) Read(ctx context.Context, id string) (*MemoryFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ValidateID(id); err != nil {
		return nil, fmt.Errorf("memcore: read: %w", err)
	}
	s.mu.RLock()
	m := s.byID[id]
	s.mu.RUnlock()
	if m == nil {
		return nil, fmt.Errorf("memcore: read %s: %w", id, ErrNotFound)
	}
	return m.Clone(), nil
}

// List implements [MemoryStore], in the order of [FileStore.List].
func (s *MemStore) List(ctx context.Context) ([]*MemoryFile, error) {
	return s.list(ctx, "")
}

// ListByScope implements [MemoryStore], in the order of [FileStore.List].
func (s *MemStore) ListByScope(ctx context.Context, scope Scope) ([]*MemoryFile, error) {
	if !scope.Valid() {
		return nil, fmt.Errorf("memcore: list: %w: %q", ErrUnknownScope, scope)
	}
	return s.list(ctx, scope)
}

func (s *MemStore) list(ctx context.Context, scope Scope) ([]*MemoryFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	out := make([]*MemoryFile, 0, len(s.byID))
	for _, m := range s.byID {
		if scope == "" || m.Meta.Scope == scope {
			out = append(out, m.Clone())
		}
	}
	s.mu.RUnlock()
	sortMemories(out)
	return out, nil
}

// normalize makes m what a Serialize/Parse round trip would give back.
func (m *MemoryFile) normalize() {
	m.Meta.CreatedAt = m.Meta.CreatedAt.Round(0).UTC()
	m.Meta.UpdatedAt = m.Meta.UpdatedAt.Round(0).UTC()
	if len(m.Meta.Related) == 0 {
		m.Meta.Related = nil
	}
	if len(m.Meta.Extra) == 0 {
		m.Meta.Extra = nil
	}
}

var _ MemoryStore = (*MemStore)(nil)
