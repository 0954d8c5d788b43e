package workspace

import (
	"cmp"
	"context"
	"slices"
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
	// Pending adds the versions that wait for review, which are left out
	// by default: a memory whose change waits is listed as it is in force,
	// and, with Pending, its change after it.
	Pending bool
	// Stale keeps the current repo memories whose anchors say they may be
	// outdated, each with the reason (Memory.Stale). It needs the repo
	// scope.
	Stale bool
	// Held fills ListResult.Held: which memories listed recall holds.
	// Each current repo memory's text is screened for it.
	Held bool
}

// ListResult is what [Workspace.List] found.
type ListResult struct {
	// Memories are the memories listed, oldest first.
	Memories []Memory `json:"memories"`
	// Hidden counts the forgotten chains left out (when Retired is false)
	// that the filters would otherwise have kept.
	Hidden int `json:"hidden_forgotten"`
	// Held are the ids of the current versions listed that recall holds
	// (see [ReviewItem.Held]), with ListOptions.Held.
	Held []string `json:"held,omitempty"`
	// HiddenPending counts the memories that wait for review left out
	// (when Pending is false) that the filters would otherwise have kept:
	// forgemem review goes through them.
	HiddenPending int `json:"hidden_pending"`
	// Forked are the ids of the current versions listed whose chain forked:
	// another version was changed alongside one on their line, as when two
	// branches that each changed the memory are merged, and that change is
	// not in force (forgemem validate says how to settle it).
	Forked []string `json:"forked,omitempty"`
	// Unreadable counts the files and folders of either scope the store
	// could not read (see [Workspace.Validate] for why): memories that may
	// be missing from the list.
	Unreadable int `json:"unreadable_files"`
}

// List returns the current version of every chain that is not forgotten
// — the version in force, when a newer one waits for review — or what opts
// ask for.
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
	res := &ListResult{}
	all, g := snap.all, snap.g
	if !opts.Pending || !opts.AllVersions {
		all, g, res.HiddenPending = withoutWaiting(snap, opts)
	}
	res.Memories, res.Hidden = w.listed(all, g, opts)
	if opts.Pending && !opts.AllVersions {
		res.Memories = w.withWaitingHeads(snap, opts, res.Memories)
		res.HiddenPending = 0
	}
	if opts.Stale {
		res.Memories = w.onlyStale(ctx, res.Memories)
	}
	if opts.Held {
		for _, m := range res.Memories {
			if m.Head && w.Held(m, m.Content) != "" {
				res.Held = append(res.Held, m.ID)
			}
		}
	}
	for _, m := range res.Memories {
		if m.Head && hasParallel(g, m.ID) {
			res.Forked = append(res.Forked, m.ID)
		}
	}
	if res.Unreadable, err = w.UnreadableCount(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

// hasParallel reports whether the chain of id, in g, has a version on a
// branch of a fork that it did not continue from.
func hasParallel(g *memcore.Graph, id string) bool {
	return slices.ContainsFunc(g.History(id), func(v memcore.PastVersion) bool { return v.Lost })
}

// withoutWaiting returns the memories of snap without the versions that
// wait for review, their graph, and how many of the memories that wait
// opts' scope and category filters would keep.
func withoutWaiting(snap *snapshot, opts ListOptions) ([]*memcore.MemoryFile, *memcore.Graph, int) {
	waiting := snap.g.Waiting()
	if len(waiting) == 0 {
		return snap.all, snap.g, 0
	}
	drop := map[string]bool{}
	for _, m := range waiting {
		drop[m.Meta.ID] = true
	}
	all := slices.DeleteFunc(slices.Clone(snap.all), func(m *memcore.MemoryFile) bool { return drop[m.Meta.ID] })
	return all, memcore.NewGraph(all), countWaiting(snap, waiting, opts)
}

// countWaiting counts the memories of waiting (snap.g.Waiting()) that wait
// for review themselves, as their chain's newest version, and that opts'
// scope and category filters would keep.
func countWaiting(snap *snapshot, waiting []*memcore.MemoryFile, opts ListOptions) int {
	n := 0
	for _, m := range waiting {
		if snap.g.IsPending(m.Meta.ID) && !snap.g.IsSuperseded(m.Meta.ID) &&
			(opts.Scope == "" || m.Meta.Scope == opts.Scope) && (opts.Category == "" || m.Meta.Category == opts.Category) {
			n++
		}
	}
	return n
}

// listed returns the memories of all, members of g, that opts keep, and
// how many forgotten chains it left out that the filters would have kept.
func (w *Workspace) listed(all []*memcore.MemoryFile, g *memcore.Graph, opts ListOptions) ([]Memory, int) {
	out := []Memory{}
	hidden := map[string]bool{}
	for _, m := range all {
		if !opts.keeps(g, m) {
			continue
		}
		if !opts.Retired && g.IsRetired(m.Meta.ID) {
			if h, ok := g.Head(m.Meta.ID); ok {
				hidden[h.Meta.ID] = true
			}
			continue
		}
		out = append(out, view(w.store, g, m))
	}
	return out, len(hidden)
}

// withWaitingHeads adds to listed, the memories in force, the heads of
// snap that wait for review and pass opts' filters, oldest first.
func (w *Workspace) withWaitingHeads(snap *snapshot, opts ListOptions, listed []Memory) []Memory {
	for _, h := range snap.g.Heads() {
		if h.Meta.Status == memcore.StatusPending && (opts.Scope == "" || h.Meta.Scope == opts.Scope) && (opts.Category == "" || h.Meta.Category == opts.Category) {
			listed = append(listed, view(w.store, snap.g, h))
		}
	}
	slices.SortStableFunc(listed, func(a, b Memory) int { return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID)) })
	return listed
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
	return o.AllVersions || isHead(g, m)
}

// isHead reports whether m is the head of its chain in g: the version a
// reader takes as current. A version nothing supersedes may not be (the
// tip of a branch that lost a fork), and a superseded one may (the member
// that heads a supersedes cycle).
func isHead(g *memcore.Graph, m *memcore.MemoryFile) bool {
	h, ok := g.Head(m.Meta.ID)
	return ok && h == m
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
