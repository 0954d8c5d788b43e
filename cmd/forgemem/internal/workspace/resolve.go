package workspace

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/memcore"
)

// idPrefix is how every memory id starts.
const idPrefix = "mem_"

// MinPrefixDigits is how many hexadecimal digits of a memory's id an
// operation that changes or deletes memories — [Workspace.Forget],
// [Workspace.Purge], [Workspace.Remember]'s Supersedes and links — needs
// when given a prefix rather than the whole id ("1b4e", "mem_1b4e"): one
// or two digits that match the only memory there is today name another
// tomorrow. [Workspace.Show] and [Workspace.Resolve], which only read,
// take any unique prefix.
const MinPrefixDigits = 4

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

// maxRefBytes bounds a memory reference: an id is 40 bytes; anything much
// longer is not one.
const maxRefBytes = 64

// resolveIn finds ref among the memories of snap.
func (w *Workspace) resolveIn(ctx context.Context, snap *snapshot, ref string) (*memcore.MemoryFile, error) {
	ref = strings.ToLower(strings.TrimSpace(ref))
	if ref == "" {
		return nil, invalidf("no memory id given")
	}
	if len(ref) > maxRefBytes { // never echo a long argument whole
		return nil, fmt.Errorf("%w: %q is not a memory id (an id is mem_ and 36 more characters; a prefix of one will do); forgemem list shows the memories",
			memcore.ErrNotFound, termtext.Clip(ref, 24))
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

// resolveToChange is resolveIn for an operation that changes or deletes
// memories (what says: "forget", "purge", …): a prefix of the id must have
// at least MinPrefixDigits hexadecimal digits, even when it matches one
// memory only; a shorter one is an error wrapping ErrInvalidInput.
func (w *Workspace) resolveToChange(ctx context.Context, snap *snapshot, ref, what string) (*memcore.MemoryFile, error) {
	if n, ok := prefixDigits(ref); ok && n < MinPrefixDigits {
		return nil, invalidf("%q is too short a prefix to %s a memory by: give at least %d hexadecimal digits of its id (mem_1b4e…, or 1b4e…) — the whole id is safest; forgemem list shows the ids",
			strings.TrimSpace(ref), what, MinPrefixDigits)
	}
	return w.resolveIn(ctx, snap, ref)
}

// prefixDigits counts the hexadecimal digits of ref after "mem_", and
// reports whether ref is a prefix of an id's shape at all (hexadecimal
// digits and hyphens after an optional "mem_"); whole ids and "" are not
// prefixes.
func prefixDigits(ref string) (int, bool) {
	ref = strings.ToLower(strings.TrimSpace(ref))
	if ref == "" || memcore.ValidateID(ref) == nil {
		return 0, false
	}
	rest := strings.TrimPrefix(ref, idPrefix)
	if strings.HasPrefix(idPrefix, ref) {
		rest = "" // "", "m", "me", "mem", "mem_": no digit yet
	}
	n := 0
	for _, c := range rest {
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
			n++
		case c == '-':
		default:
			return 0, false
		}
	}
	return n, true
}
