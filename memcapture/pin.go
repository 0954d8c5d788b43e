package memcapture

import (
	"context"
	"crypto/sha256"
	"hash/maphash"
	"slices"

	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

// The existing-memories list is pinned: it is chosen once for a window's
// beginning in a session and sent unchanged, before the conversation, by
// every pass until the window steps forward, so that consecutive prompts
// share it with their conversation as one prefix (see request). What
// changed in the store since it was chosen follows the conversation: the
// chain heads written since, newest first. A pinned line whose memory has
// since been superseded or forgotten stays as it was; the validation of
// the reply re-points a supersedes of an old version to its chain's head
// and drops links into forgotten chains.

// maxPins bounds the pinned lists a pipeline keeps: one per session and
// window beginning in use (a pipeline may serve several sessions, and a
// compaction's window begins elsewhere than the turns'), the least
// recently used forgotten first.
const maxPins = 8

// pinKey identifies what a list is pinned for: the session, and the
// window's first message after the cut, which stays the same from one
// pass to the next until the window steps forward (see capInSteps).
type pinKey struct {
	session string
	first   [sha256.Size]byte
}

// pin is the existing-memories list chosen for a window's beginning.
type pin struct {
	key pinKey
	// lines is the list as the prompt shows it.
	lines []string
	// known holds, sorted, the idHash of every memory stored when the
	// list was chosen: a head not among them was written since.
	known []uint64
	// used is the pass that last used the pin, for eviction.
	used uint64
}

// lists returns the two lists of existing memories a pass shows the
// classifier: the one pinned for the window's beginning in the session,
// and the chain heads written since it was pinned, newest first. A list is
// chosen (and pinned) when the session has none for this beginning — its
// first pass, a window step, a compaction's window — and chosen anew when
// the heads written since no longer fit the budget, so none is left out.
// all is the store as listed; heads are the live chain heads.
//
// A list ranked by an embedder that failed is newest first and is not
// pinned, so the next pass ranks again.
func (p *Pipeline) lists(ctx context.Context, session string, window []memcore.Message, all, heads []*memcore.MemoryFile, log zerolog.Logger) (pinned, since []string) {
	if p.cfg.existingTokens == 0 {
		return nil, nil
	}
	p.pinClock++
	key := pinKey{session: session, first: windowHash(window[:1])}
	i := slices.IndexFunc(p.pins, func(pn *pin) bool { return pn.key == key })
	if i >= 0 {
		pn := p.pins[i]
		if since, redactions, ok := p.addedSince(ctx, pn, heads); ok {
			pn.used = p.pinClock
			p.stats.requestRedactions.Add(uint64(redactions))
			return pn.lines, since
		}
		p.pins = slices.Delete(p.pins, i, i+1)
		log.Debug().Msg("memcapture: the memories added since the existing-memories list was chosen overflow its budget (chosen anew)")
	}
	lines, ranked := p.selectHeads(ctx, window, heads, log)
	if ranked {
		p.keepPin(&pin{key: key, lines: lines, known: p.idHashes(all), used: p.pinClock})
	}
	return lines, nil
}

// addedSince returns the list lines of the heads written since pn was
// pinned, newest first, the number of secrets redacted in them, and
// whether they all fit the existing-memories budget.
func (p *Pipeline) addedSince(ctx context.Context, pn *pin, heads []*memcore.MemoryFile) ([]string, int, bool) {
	var added []*memcore.MemoryFile
	for _, h := range heads {
		if _, known := slices.BinarySearch(pn.known, p.idHash(h.Meta.ID)); !known {
			added = append(added, h)
		}
	}
	lines, redactions := p.fitLines(ctx, newestFirst(added), p.cfg.existingTokens)
	return lines, redactions, len(lines) == len(added)
}

// keepPin adds pn to the pins, forgetting the least recently used one
// when there are maxPins already.
func (p *Pipeline) keepPin(pn *pin) {
	if len(p.pins) >= maxPins {
		oldest := 0
		for i, q := range p.pins {
			if q.used < p.pins[oldest].used {
				oldest = i
			}
		}
		p.pins = slices.Delete(p.pins, oldest, oldest+1)
	}
	p.pins = append(p.pins, pn)
}

// idHashes returns the sorted idHash of the ids of ms.
func (p *Pipeline) idHashes(ms []*memcore.MemoryFile) []uint64 {
	out := make([]uint64, len(ms))
	for i, m := range ms {
		out[i] = p.idHash(m.Meta.ID)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// idHash is a 64-bit hash of a memory id, so a pin remembers the ids
// stored when it was chosen in 8 bytes each. A collision would only hide a
// memory written since from the list that follows the conversation (the
// reply's duplicates are still caught against every head).
func (p *Pipeline) idHash(id string) uint64 { return maphash.String(p.pinSeed, id) }
