package workspace

import (
	"context"

	"github.com/forgemem/forgemem/memcore"
)

// Detail is one memory with its version chain and its links, as
// [Workspace.Show] returns it.
type Detail struct {
	Memory Memory `json:"memory"`
	// Chain is every version of the memory's chain, oldest first, the
	// memory among them; the last is the head. A chain that forked holds
	// the versions of the branches that lost the fork too, marked
	// Parallel, among the others by creation time.
	Chain []Memory `json:"chain"`
	// Out are the memory's own related links, in the order of its file.
	Out []Edge `json:"links_out"`
	// In are the links of other chains' current versions that point at a
	// version of this chain, oldest linking memory first.
	In []Edge `json:"links_in"`
	// Held says why recall holds the memory, the current version of a
	// repository memory that reads like an instruction, until the user
	// approves it (see [ReviewItem.Held]); "" when it does not.
	Held string `json:"held,omitempty"`
}

// Edge is a related link seen from one memory: the relationship and the
// memory at the other end.
type Edge struct {
	Relationship memcore.Relationship `json:"relationship"`
	// ID is the id at the other end: the target of a link out, the source
	// of a link in.
	ID string `json:"id"`
	// To is, for a link in, the version of this chain it points at.
	To string `json:"to,omitempty"`
	// Other is the memory at the other end; nil when no memory has ID (a
	// dangling link).
	Other *Memory `json:"other,omitempty"`
}

// Show returns the memory ref names (an id or a unique prefix, see
// [Workspace.Resolve]) with its whole version chain and its links in and
// out. Forgotten and superseded memories are shown too.
func (w *Workspace) Show(ctx context.Context, ref string) (*Detail, error) {
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	m, err := w.resolveIn(ctx, snap, ref)
	if err != nil {
		return nil, err
	}
	g := snap.g
	d := &Detail{Memory: view(w.store, g, m), Chain: views(w.store, g, allVersions(g, m.Meta.ID)), Out: []Edge{}, In: []Edge{}}
	if d.Memory.Head {
		d.Memory.Stale = w.staleOf(ctx, m)
		d.Held = w.heldBy(m)
	}
	for _, r := range m.Meta.Related {
		e := Edge{Relationship: r.Relationship, ID: r.ID}
		if o, ok := g.Memory(r.ID); ok {
			v := view(w.store, g, o)
			e.Other = &v
		}
		d.Out = append(d.Out, e)
	}
	inChain := map[string]bool{}
	for _, c := range d.Chain {
		inChain[c.ID] = true
	}
	for _, h := range g.Heads() {
		if inChain[h.Meta.ID] {
			continue
		}
		for _, r := range h.Meta.Related {
			if inChain[r.ID] {
				v := view(w.store, g, h)
				d.In = append(d.In, Edge{Relationship: r.Relationship, ID: h.Meta.ID, To: r.ID, Other: &v})
			}
		}
	}
	return d, nil
}
