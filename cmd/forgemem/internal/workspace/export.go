package workspace

import (
	"context"

	"github.com/forgemem/forgemem/memcore"
)

// Export is every chain, grouped by scope and category, as
// [Workspace.Export] returns it for a document.
type Export struct {
	Sections []Section `json:"sections"`
	// Unreadable counts the files and folders the store could not read:
	// memories that may be missing from the document.
	Unreadable int `json:"unreadable_files"`
}

// Section is the chains of one scope and category.
type Section struct {
	Scope    memcore.Scope    `json:"scope"`
	Category memcore.Category `json:"category"`
	Chains   []Chain          `json:"chains"`
}

// Chain is one memory's current version with its earlier ones.
type Chain struct {
	Head Memory `json:"head"`
	// History holds the earlier versions, oldest first, those of a fork's
	// branches that lost it among them (marked Parallel).
	History []Memory `json:"history"`
	// Held says why recall holds the head (see [ReviewItem.Held]); "" when
	// it does not.
	Held string `json:"held,omitempty"`
}

// Export returns every chain that is not forgotten (and the forgotten ones
// too with retired), by scope (repo, then user) and category (in the
// order of memcore.Categories), oldest chain first; empty sections are left
// out.
func (w *Workspace) Export(ctx context.Context, retired bool) (*Export, error) {
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	out := &Export{Sections: []Section{}}
	for _, scope := range memcore.Scopes() {
		for _, cat := range memcore.Categories() {
			sec := Section{Scope: scope, Category: cat}
			for _, h := range snap.g.Heads() {
				if h.Meta.Scope != scope || h.Meta.Category != cat || h.Meta.Retired && !retired {
					continue
				}
				chain := allVersions(snap.g, h.Meta.ID)
				sec.Chains = append(sec.Chains, Chain{Head: view(w.store, snap.g, h), History: views(w.store, snap.g, chain[:len(chain)-1]), Held: w.heldBy(h)})
			}
			if len(sec.Chains) > 0 {
				out.Sections = append(out.Sections, sec)
			}
		}
	}
	if out.Unreadable, err = w.UnreadableCount(ctx); err != nil {
		return nil, err
	}
	return out, nil
}
