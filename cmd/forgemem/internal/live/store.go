//go:build linux

package live

import (
	"cmp"
	"context"
	"reflect"
	"slices"

	"github.com/forgemem/forgemem/memcore"
)

// List implements memcore.MemoryStore: the memories of both scopes as of
// the last Sync, in the order of FileStore.List (oldest first by
// created_at, then by id). The memories are shared by every caller and
// must not be changed; the slice is the caller's.
func (f *Folders) List(ctx context.Context) ([]*memcore.MemoryFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.list == nil {
		f.list = f.sorted()
	}
	return slices.Clone(f.list), nil
}

// sorted orders the memories as FileStore.List does, step by step: each
// folder's in file-name order, sorted; then both, sorted. The same input
// to the same sort gives the same order, ties included. The caller holds
// f.mu.
func (f *Folders) sorted() []*memcore.MemoryFile {
	all := []*memcore.MemoryFile{}
	for si := range f.files {
		ids := make([]string, 0, len(f.files[si]))
		for id := range f.files[si] {
			ids = append(ids, id)
		}
		slices.Sort(ids) // the names <id>.md sort as their ids
		ms := make([]*memcore.MemoryFile, len(ids))
		for i, id := range ids {
			ms[i] = f.files[si][id]
		}
		sortMemories(ms)
		all = append(all, ms...)
	}
	sortMemories(all)
	return all
}

// replaceInList keeps List's answer sorted after a memory changed from
// old to m (either nil when absent): old leaves it, m goes where the order
// puts it. The caller holds f.mu. Memories of one id in both scopes can
// tie in the order, and then only the step-by-step sort of sorted gives
// FileStore's answer: while there are any (inOther: this one), the list
// is made again on the next List.
func (f *Folders) replaceInList(old, m *memcore.MemoryFile, inOther bool) {
	if f.list == nil {
		return
	}
	if inOther || f.dups > 0 {
		f.list = nil
		return
	}
	if old != nil {
		i, _ := slices.BinarySearchFunc(f.list, old, compareMemories)
		for ; i < len(f.list) && f.list[i] != old; i++ {
		}
		if i < len(f.list) {
			f.list = slices.Delete(f.list, i, i+1)
		}
	}
	if m != nil {
		i, _ := slices.BinarySearchFunc(f.list, m, compareMemories)
		f.list = slices.Insert(f.list, i, m)
	}
}

// compareMemories is memcore's order of a List: oldest first by
// created_at, then by id.
func compareMemories(a, b *memcore.MemoryFile) int {
	if c := a.Meta.CreatedAt.Compare(b.Meta.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.Meta.ID, b.Meta.ID)
}

// sortMemories is memcore's order of a List: oldest first by created_at,
// then by id.
func sortMemories(ms []*memcore.MemoryFile) { slices.SortFunc(ms, compareMemories) }

// sameMemory reports whether a and b are the same memory, field for field.
func sameMemory(a, b *memcore.MemoryFile) bool { return reflect.DeepEqual(a, b) }

// Write implements memcore.MemoryStore through the FileStore; the next
// Sync serves the new memory.
func (f *Folders) Write(ctx context.Context, m *memcore.MemoryFile) error {
	return f.store.Write(ctx, m)
}

// Read implements memcore.MemoryStore through the FileStore.
func (f *Folders) Read(ctx context.Context, id string) (*memcore.MemoryFile, error) {
	return f.store.Read(ctx, id)
}

// ListByScope implements memcore.MemoryStore through the FileStore.
func (f *Folders) ListByScope(ctx context.Context, scope memcore.Scope) ([]*memcore.MemoryFile, error) {
	return f.store.ListByScope(ctx, scope)
}

// Dir returns the folder of scope, as the FileStore's Dir: the retrieval
// engine keeps its embedding cache there.
func (f *Folders) Dir(scope memcore.Scope) string { return f.store.Dir(scope) }
