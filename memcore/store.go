package memcore

import (
	"cmp"
	"context"
	"slices"
)

// MemoryStore reads and writes memories. Implementations must be safe for
// concurrent use, honour ctx, and never overwrite or delete a memory: files
// are append-only, and only a person deletes them. The conformance suite
// github.com/forgemem/forgemem/conformance/storetest checks all of this.
type MemoryStore interface {
	// Write stores a new memory in its scope. It fails with an error
	// wrapping ErrInvalidID or ErrInvalidMemory if m does not pass
	// Validate, and ErrAlreadyExists if a memory with m's id is stored in
	// either scope; in both cases nothing stored changes.
	//
	// A version has at most one successor written through a store: if m
	// supersedes a version that a stored memory of either scope already
	// supersedes, Write fails with a *ConflictError (wrapping ErrConflict)
	// naming that successor and the chain's current head, and stores
	// nothing. Checking for a successor and storing m are one atomic step
	// for every writer of the storage — goroutines, and for storage that
	// processes share, processes — so of concurrent writes superseding one
	// version exactly one succeeds. The loser re-reads the head and writes
	// after it (see NewVersion), or gives up.
	Write(ctx context.Context, m *MemoryFile) error
	// Read returns the memory with the given id from either scope, an
	// error wrapping ErrNotFound if there is none, or ErrInvalidID if id is
	// not an id.
	Read(ctx context.Context, id string) (*MemoryFile, error)
	// List returns every readable memory of both scopes. Unreadable or
	// corrupt entries are skipped, not reported as errors. The order is
	// unspecified unless an implementation documents one.
	List(ctx context.Context) ([]*MemoryFile, error)
	// ListByScope is List restricted to one scope; an unknown scope is an
	// error wrapping ErrUnknownScope.
	ListByScope(ctx context.Context, scope Scope) ([]*MemoryFile, error)
}

// sortMemories orders memories oldest first by CreatedAt, then by id: the
// order the stores of this package document for List.
func sortMemories(ms []*MemoryFile) {
	slices.SortFunc(ms, func(a, b *MemoryFile) int {
		if c := a.Meta.CreatedAt.Compare(b.Meta.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.Meta.ID, b.Meta.ID)
	})
}
