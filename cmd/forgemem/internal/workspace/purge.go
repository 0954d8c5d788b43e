package workspace

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
)

// PurgeResult says what [Workspace.Purge] deleted, or would delete.
type PurgeResult struct {
	// Chain is every version of the chain, oldest first: the files
	// deleted.
	Chain []Memory `json:"chain"`
	// Vectors counts the vectors removed from the embedding caches.
	Vectors int `json:"vectors"`
	// LinkedFrom are the memories of other chains that link to the chain:
	// their links now dangle (forgemem validate reports them).
	LinkedFrom []string `json:"linked_from"`
	// DryRun is true when nothing was deleted.
	DryRun bool `json:"dry_run"`
}

// Purge deletes the chain of the memory ref names (its whole id, or a
// unique prefix of at least MinPrefixDigits digits) from disk: every
// version's file, in whichever scope (forks of the chain included), and
// the vectors of their contents from both scopes' embedding caches
// (memretrieve.RemoveCachedVectors), unless another memory has the same
// content. It is for what must not be kept at all, such as a secret;
// Forget keeps the history. With dryRun it deletes nothing and says what it
// would delete.
func (w *Workspace) Purge(ctx context.Context, ref string, dryRun bool) (*PurgeResult, error) {
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	t, err := w.resolveToChange(ctx, snap, ref, "purge")
	if err != nil {
		return nil, err
	}
	members := chainMembers(snap, t.Meta.ID)
	res := &PurgeResult{Chain: views(w.store, snap.g, members), LinkedFrom: []string{}, DryRun: dryRun}
	gone := map[string]bool{}
	for _, m := range members {
		gone[m.Meta.ID] = true
	}
	kept := map[string]bool{}
	for _, m := range snap.all {
		if gone[m.Meta.ID] {
			continue
		}
		kept[strings.TrimSpace(m.Content)] = true
		if slices.ContainsFunc(m.Meta.Related, func(r memcore.RelatedMemory) bool { return gone[r.ID] }) {
			res.LinkedFrom = append(res.LinkedFrom, m.Meta.ID)
		}
	}
	if dryRun {
		return res, nil
	}
	var contents []string
	for _, m := range members {
		if err := w.store.Remove(ctx, m.Meta.ID); err != nil && !errors.Is(err, memcore.ErrNotFound) {
			return nil, fmt.Errorf("deleting %s: %w", m.Meta.ID, err)
		}
		if c := strings.TrimSpace(m.Content); !kept[c] {
			contents = append(contents, c)
		}
	}
	var errs []error
	for _, scope := range memcore.Scopes() {
		if dir := w.store.Dir(scope); dir != "" {
			n, err := memretrieve.RemoveCachedVectors(filepath.Join(dir, memretrieve.CacheDirName), contents)
			res.Vectors += n
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("the files are deleted, but not every cached vector: %w", err)
	}
	return res, nil
}

// chainMembers returns every memory joined to id by supersedes links,
// followed both ways (so both branches of a fork), oldest first.
func chainMembers(snap *snapshot, id string) []*memcore.MemoryFile {
	succ := map[string][]string{}
	for _, m := range snap.all {
		if p := m.Meta.Supersedes; p != nil {
			succ[*p] = append(succ[*p], m.Meta.ID)
		}
	}
	seen := map[string]bool{id: true}
	queue := []string{id}
	for len(queue) > 0 {
		cur, _ := snap.g.Memory(queue[0])
		queue = queue[1:]
		next := slices.Clone(succ[cur.Meta.ID])
		if p := cur.Meta.Supersedes; p != nil {
			next = append(next, *p)
		}
		for _, n := range next {
			if _, ok := snap.g.Memory(n); ok && !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	var out []*memcore.MemoryFile
	for _, m := range snap.g.Memories() {
		if seen[m.Meta.ID] {
			out = append(out, m)
		}
	}
	return out
}
