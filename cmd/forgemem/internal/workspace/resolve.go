package workspace

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/forgemem/forgemem/memcore"
)

// idPrefix is how every memory id starts.
const idPrefix = "mem_"

// Resolve returns the memory ref names: its whole id, or a prefix of it
// that no other memory's id has, with or without "mem_" ("1b4e28ba" finds
// mem_1b4e28ba-…). Superseded and forgotten memories count. A prefix of
// several ids is an *[AmbiguousError] listing them; no match is an error
// wrapping memcore.ErrNotFound, which names the file when the id is that of
// a file the store cannot read.
func (w *Workspace) Resolve(ctx context.Context, ref string) (Memory, error) {
	snap, err := w.load(ctx)
	if err != nil {
		return Memory{}, err
	}
	m, err := w.resolveIn(ctx, snap, ref)
	if err != nil {
		return Memory{}, err
	}
	return view(w.store, snap.g, m), nil
}

// resolveIn finds ref among the memories of snap.
func (w *Workspace) resolveIn(ctx context.Context, snap *snapshot, ref string) (*memcore.MemoryFile, error) {
	ref = strings.ToLower(strings.TrimSpace(ref))
	if ref == "" {
		return nil, invalidf("no memory id given")
	}
	if m, ok := snap.g.Memory(ref); ok {
		return m, nil
	}
	prefix := ref
	if !strings.HasPrefix(prefix, idPrefix) {
		prefix = idPrefix + prefix
	}
	var found []*memcore.MemoryFile
	for _, m := range snap.g.Memories() {
		if strings.HasPrefix(m.Meta.ID, prefix) {
			found = append(found, m)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, w.notFound(ctx, ref, prefix)
	}
	return nil, &AmbiguousError{Prefix: ref, Candidates: views(w.store, snap.g, found)}
}

// notFound explains that no memory's id starts with prefix: a file of that
// name that the store cannot read is named with the reason.
func (w *Workspace) notFound(ctx context.Context, ref, prefix string) error {
	if probs, err := w.store.Problems(ctx); err == nil {
		for _, p := range probs {
			if strings.HasPrefix(filepath.Base(p.Path), prefix) {
				return fmt.Errorf("%w: %s: the file %s is not read as a memory: %v; fix or remove it (forgemem validate lists such files)",
					memcore.ErrNotFound, ref, p.Path, p.Err)
			}
		}
	}
	return fmt.Errorf("%w: no memory has the id %s; forgemem list shows the memories (--retired adds forgotten ones)", memcore.ErrNotFound, ref)
}
