package memretrieve

import (
	"crypto/sha256"
	"strings"

	"github.com/forgemem/forgemem/memcore"
)

// A build derives some things from each memory alone: the key of its
// content and what the fingerprint takes from it. A store that hands out
// the same memories from one List to the next — one that keeps them in
// memory and replaces a memory that changed rather than editing it, as
// memcore.MemStore does not but the forgemem command's live view of the
// folders does — lets a build reuse them, so that a build after one new
// memory hashes one memory, not every one. A store that hands out copies
// (memcore.FileStore) costs a lookup that misses. Memories handed out
// must not be changed afterwards (memcore.MemoryStore's callers treat
// them as read-only).

// memoEntry is what a build derived from one memory.
type memoEntry struct {
	// key is the content key of the memory's trimmed content; has is
	// false when it has none (the memory is not indexed).
	key contentKey
	has bool
	// digest is the fingerprinter's hash of what the graph and the block
	// take from the memory besides its content (see fingerprinter.memory).
	digest [32]byte
}

// memoOf returns what a build derives from m, from the last build's memo
// when it saw m, and records it in next. Callers hold buildMu.
func (e *Engine) memoOf(m *memcore.MemoryFile, next map[*memcore.MemoryFile]memoEntry) memoEntry {
	if ent, ok := e.memo[m]; ok {
		next[m] = ent
		return ent
	}
	var ent memoEntry
	// A pending version (one a later version in force superseded without
	// approving it) is not searched.
	if text := strings.TrimSpace(m.Content); text != "" && m.Meta.Status != memcore.StatusPending {
		ent.key, ent.has = sha256.Sum256([]byte(text)), true
	}
	f := fingerprinter{h: sha256.New()}
	f.memory(m)
	f.h.Sum(ent.digest[:0])
	next[m] = ent
	return ent
}

// derive returns the items of all (every memory with content, but for
// pending versions, with its content key, in order) and the digests of all, reusing the last build's
// memo, which it replaces with one of all. Callers hold buildMu.
func (e *Engine) derive(all []*memcore.MemoryFile) (items []item, digests [][32]byte) {
	next := make(map[*memcore.MemoryFile]memoEntry, len(all))
	items = make([]item, 0, len(all))
	digests = make([][32]byte, len(all))
	for i, m := range all {
		ent := e.memoOf(m, next)
		digests[i] = ent.digest
		if ent.has {
			items = append(items, item{m: m, key: ent.key})
		}
	}
	e.memo = next
	return items, digests
}
