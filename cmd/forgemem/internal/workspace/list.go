package workspace

import (
	"context"
	"strings"

	"github.com/forgemem/forgemem/memcore"
)

// ListOptions choose what [Workspace.List] returns.
type ListOptions struct {
	// Scope keeps the memories of one scope; "" keeps both. A scope that is
	// off (the repo scope outside a repository) is an error.
	Scope memcore.Scope
	// Category keeps the memories of one category; "" keeps all.
	Category memcore.Category
	// AllVersions lists every version of every chain, not only the heads.
	AllVersions bool
	// Retired adds the forgotten chains, which are left out by default.
	Retired bool
	// Stale keeps the current repo memories whose anchors say they may be
	// outdated, each with the reason (Memory.Stale). It needs the repo
	// scope.
	Stale bool
}

// ListResult is what [Workspace.List] found.
type ListResult struct {
	// Memories are the memories listed, oldest first.
	Memories []Memory `json:"memories"`
	// Hidden counts the forgotten chains left out (when Retired is false)
	// that the filters would otherwise have kept.
	Hidden int `json:"hidden_forgotten"`
	// Unreadable counts the files and folders of either scope the store
	// could not read (see [Workspace.Validate] for why): memories that may
	// be missing from the list.
	Unreadable int `json:"unreadable_files"`
}

// List returns the current version of every chain that is not forgotten,
// or what opts ask for.
func (w *Workspace) List(ctx context.Context, opts ListOptions) (*ListResult, error) {
	if err := checkScope(opts.Scope); err != nil {
		return nil, err
	}
	if err := w.requireListScopes(opts); err != nil {
		return nil, err
	}
	if err := checkCategory(opts.Category); err != nil {
		return nil, err
	}
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	res := &ListResult{Memories: []Memory{}}
	hidden := map[string]bool{}
	for _, m := range snap.all {
		if !opts.keeps(snap.g, m) {
			continue
		}
		if !opts.Retired && snap.g.IsRetired(m.Meta.ID) {
			if h, ok := snap.g.Head(m.Meta.ID); ok {
				hidden[h.Meta.ID] = true
			}
			continue
		}
		res.Memories = append(res.Memories, view(w.store, snap.g, m))
	}
	res.Hidden = len(hidden)
	if opts.Stale {
		res.Memories = w.onlyStale(ctx, res.Memories)
	}
	if res.Unreadable, err = w.unreadableCount(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

// requireListScopes checks that the scopes opts need are on: the one it
// names, and the repo scope for Stale.
func (w *Workspace) requireListScopes(opts ListOptions) error {
	if opts.Scope != "" {
		if err := w.requireScope(opts.Scope); err != nil {
			return err
		}
	}
	if opts.Stale {
		return w.requireScope(memcore.ScopeRepo)
	}
	return nil
}

// keeps reports whether m, a member of g, passes the scope, category and
// version filters of o (forgotten chains are decided apart).
func (o ListOptions) keeps(g *memcore.Graph, m *memcore.MemoryFile) bool {
	switch {
	case o.Scope != "" && m.Meta.Scope != o.Scope, o.Category != "" && m.Meta.Category != o.Category:
		return false
	}
	return o.AllVersions || !g.IsSuperseded(m.Meta.ID)
}

// checkScope refuses a scope other than "", repo and user.
func checkScope(s memcore.Scope) error {
	if s != "" && !s.Valid() {
		return invalidf("scope %q is not one of repo, user", s)
	}
	return nil
}

// checkCategory refuses a category that is neither "" nor known.
func checkCategory(c memcore.Category) error {
	if c != "" && !c.Valid() {
		return invalidf("category %q is not one of %s", c, categoryList())
	}
	return nil
}

// categoryList names every category, for messages.
func categoryList() string {
	var names []string
	for _, c := range memcore.Categories() {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}
