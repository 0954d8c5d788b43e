package memcore

import (
	"cmp"
	"slices"
	"sync"
)

// Graph answers questions about version chains and related edges of a set
// of memories without further I/O. Build it once from a List; it is
// read-only afterwards and safe for concurrent use.
//
// A chain is every memory connected to another by supersedes links, in
// either direction: a first version and the versions that supersede it,
// one after the other. Its head is the version a reader takes as current,
// and every member of the chain resolves to the same one, whoever asks.
// Stores write at most one successor of a version, so chains written
// through them are lines and the head is the newest version. Hand-edited
// files and git merges can make any shape, and every method terminates on
// it, resolving it the same way for every reader:
//
//   - a fork (two versions superseding the same one, such as a merge of two
//     branches that each changed a memory): the head is the best of the
//     chain's tips, the versions nothing supersedes — the highest version,
//     then the newest created_at, then the greatest id. The versions of the
//     other branches are not on the line to the head ([Graph.Chain]) but are
//     in the chain's history, marked lost ([Graph.History]); [Graph.Forks]
//     lists every fork;
//   - versions superseding an id that is not in the set (deleted by hand)
//     belong to one chain;
//   - a supersedes cycle with no tip is headed by its best member by the same
//     order;
//   - links to ids that are not in the set are ignored, and of duplicate ids
//     the first one given wins.
type Graph struct {
	all  []*MemoryFile
	byID map[string]*MemoryFile
	succ map[string][]*MemoryFile // predecessor id → its successors, best first
	in   map[string][]inEdge      // id → related edges that point at it
	// head maps each id to the head of its chain.
	head map[string]*MemoryFile
	// members maps a head's id to the members of its chain, in the order
	// given to NewGraph.
	members map[string][]*MemoryFile
	// line holds the ids on the line from a chain's first version to its
	// head (Chain); the other members are on branches that lost a fork.
	line map[string]bool

	// content indexes the heads by scope and normalised text, for
	// Duplicate; built on first use.
	contentOnce sync.Once
	content     map[contentKey][]*MemoryFile
}

type inEdge struct {
	from string
	rel  Relationship
}

// NewGraph indexes memories. The memories are shared, not copied: do not
// change them while the graph is in use.
func NewGraph(memories []*MemoryFile) *Graph {
	g := &Graph{
		all:  make([]*MemoryFile, 0, len(memories)),
		byID: make(map[string]*MemoryFile, len(memories)),
		succ: make(map[string][]*MemoryFile),
		in:   make(map[string][]inEdge),
	}
	for _, m := range memories {
		if m == nil {
			continue
		}
		if _, dup := g.byID[m.Meta.ID]; dup {
			continue
		}
		g.byID[m.Meta.ID] = m
		g.all = append(g.all, m)
	}
	for _, m := range g.all {
		if p := m.Meta.Supersedes; p != nil && *p != m.Meta.ID {
			g.succ[*p] = append(g.succ[*p], m)
		}
		for _, r := range m.Meta.Related {
			if r.ID != m.Meta.ID {
				g.in[r.ID] = append(g.in[r.ID], inEdge{from: m.Meta.ID, rel: r.Relationship})
			}
		}
	}
	for _, s := range g.succ {
		slices.SortStableFunc(s, betterSuccessor)
	}
	g.resolveChains()
	return g
}

// resolveChains groups the memories into chains and finds each chain's
// head and the line from its first version to the head.
func (g *Graph) resolveChains() {
	groups := g.chainGroups()
	g.head = make(map[string]*MemoryFile, len(g.all))
	g.members = make(map[string][]*MemoryFile, len(groups))
	g.line = make(map[string]bool, len(g.all))
	for _, ms := range groups {
		if len(ms) == 1 { // most memories: a chain of one version
			m := ms[0]
			g.head[m.Meta.ID], g.members[m.Meta.ID], g.line[m.Meta.ID] = m, ms, true
			continue
		}
		head := g.chainHead(ms)
		for _, m := range ms {
			g.head[m.Meta.ID] = head
		}
		g.members[head.Meta.ID] = ms
		for _, m := range g.lineTo(head) {
			g.line[m.Meta.ID] = true
		}
	}
}

// chainGroups groups the memories into chains by union-find over the ids
// that supersedes links join, a predecessor that is not in the graph
// included, so that versions superseding one missing id form one chain. It
// returns the members of each chain, in the order given to NewGraph, the
// chains in the order of their first member. The groups share one backing
// array, each clipped to its length.
func (g *Graph) chainGroups() [][]*MemoryFile {
	parent := make(map[string]string)
	find := func(id string) string {
		root := id
		for {
			p, ok := parent[root]
			if !ok || p == root {
				break
			}
			root = p
		}
		for id != root { // path compression
			next := parent[id]
			parent[id] = root
			id = next
		}
		return root
	}
	for _, m := range g.all {
		if p := m.Meta.Supersedes; p != nil && *p != m.Meta.ID {
			a, b := find(m.Meta.ID), find(*p)
			if a != b {
				parent[a] = b
			} else if _, ok := parent[a]; !ok {
				parent[a] = a // a cycle's root: still linked
			}
		}
	}
	// A memory no supersedes link joins is a chain of its own; the others
	// are numbered by their root.
	group := make([]int, len(g.all))
	var sizes []int
	numbered := make(map[string]int)
	for i, m := range g.all {
		id := m.Meta.ID
		_, linked := parent[id]
		if !linked && len(g.succ[id]) == 0 {
			group[i] = len(sizes)
			sizes = append(sizes, 1)
			continue
		}
		r := find(id)
		k, ok := numbered[r]
		if !ok {
			k = len(sizes)
			numbered[r] = k
			sizes = append(sizes, 0)
		}
		group[i] = k
		sizes[k]++
	}
	backing := make([]*MemoryFile, len(g.all))
	groups := make([][]*MemoryFile, len(sizes))
	off := 0
	for k, n := range sizes {
		groups[k] = backing[off : off : off+n]
		off += n
	}
	for i, m := range g.all {
		groups[group[i]] = append(groups[group[i]], m)
	}
	return groups
}

// chainHead returns the head of the chain ms: its best tip (a version
// without successor), or, for a cycle without a tip, its best member.
func (g *Graph) chainHead(ms []*MemoryFile) *MemoryFile {
	var head *MemoryFile
	for _, m := range ms {
		if len(g.succ[m.Meta.ID]) == 0 && (head == nil || betterSuccessor(m, head) < 0) {
			head = m
		}
	}
	if head == nil {
		head = slices.MinFunc(ms, betterSuccessor)
	}
	return head
}

// lineTo returns the line from the first version of head's chain to head,
// oldest first: head and its predecessors, as far as they are in the graph,
// each once.
func (g *Graph) lineTo(head *MemoryFile) []*MemoryFile {
	out := []*MemoryFile{head}
	seen := map[string]bool{head.Meta.ID: true}
	for cur := head; cur.Meta.Supersedes != nil; {
		p, ok := g.byID[*cur.Meta.Supersedes]
		if !ok || seen[p.Meta.ID] {
			break
		}
		seen[p.Meta.ID] = true
		out = append(out, p)
		cur = p
	}
	reverse(out)
	return out
}

// betterSuccessor orders versions best first: highest version, then
// newest, then greatest id. It picks the head among a chain's tips and
// orders the successors of a fork.
func betterSuccessor(a, b *MemoryFile) int {
	if c := cmp.Compare(b.Meta.Version, a.Meta.Version); c != 0 {
		return c
	}
	if c := b.Meta.CreatedAt.Compare(a.Meta.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.Meta.ID, a.Meta.ID)
}

// Len is the number of distinct memories in the graph.
func (g *Graph) Len() int { return len(g.all) }

// Memories returns the memories in the order given to NewGraph, without
// duplicates.
func (g *Graph) Memories() []*MemoryFile { return slices.Clone(g.all) }

// Memory returns the memory with the given id.
func (g *Graph) Memory(id string) (*MemoryFile, bool) {
	m, ok := g.byID[id]
	return m, ok
}

// IsSuperseded reports whether another memory in the graph supersedes id
// (id need not be in the graph). A version that is not superseded is not
// necessarily a head: it may be the tip of a branch that lost a fork.
func (g *Graph) IsSuperseded(id string) bool { return len(g.succ[id]) > 0 }

// Heads returns the head of every chain (see [Graph.Head]), in the order
// given to NewGraph: one memory per chain, the current text of each.
func (g *Graph) Heads() []*MemoryFile {
	var out []*MemoryFile
	for _, m := range g.all {
		if g.head[m.Meta.ID] == m {
			out = append(out, m)
		}
	}
	return out
}

// Live returns the memories whose chain is not retired (see
// [Graph.IsRetired]), in the order given to NewGraph: what capture and
// retrieval work with. A graph of them (NewGraph(g.Live())) has no path to a
// retired chain, so links to one drop out as dangling ones do.
func (g *Graph) Live() []*MemoryFile {
	out := make([]*MemoryFile, 0, len(g.all))
	for _, m := range g.all {
		if !g.IsRetired(m.Meta.ID) {
			out = append(out, m)
		}
	}
	return out
}

// IsRetired reports whether the chain id belongs to is retired: its head
// (see [Graph.Head]) is a version marked [MemoryMeta.Retired]. A retired
// chain is kept with its history but is not recalled, searched or listed by
// default. It reports false if id is not in the graph.
func (g *Graph) IsRetired(id string) bool {
	h, ok := g.Head(id)
	return ok && h.Meta.Retired
}

// Head returns the head of the chain id belongs to: the chain's newest
// version, or at a fork the best of its tips — highest version, then newest
// created_at, then greatest id (see [Graph]). Every member of a chain, on
// any branch, has the same head. It reports false if id is not in the
// graph.
func (g *Graph) Head(id string) (*MemoryFile, bool) {
	h, ok := g.head[id]
	return h, ok
}

// Chain returns the chain id belongs to as a line, oldest first: from its
// first version (as far back as the graph holds it) to its head, following
// supersedes links backward from the head, each memory once even in a
// cycle. The head is always last. Every member of a chain gets the same
// line; a version on a branch that lost a fork is not on it, and
// [Graph.History] lists it. It returns nil if id is not in the graph.
func (g *Graph) Chain(id string) []*MemoryFile {
	h, ok := g.head[id]
	if !ok {
		return nil
	}
	return g.lineTo(h)
}

// PastVersion is a version of a chain other than its head, as
// [Graph.History] lists it.
type PastVersion struct {
	Memory *MemoryFile
	// Lost is true for a version on a branch of a fork that the chain did
	// not continue from: it is not on the line to the head (see
	// [Graph.Chain]), and its change was made alongside, not before, the
	// head's.
	Lost bool
}

// History returns every version of the chain id belongs to except its
// head, oldest first (by created_at, then version, then id): the versions
// on the line to the head and those on branches that lost a fork, marked
// Lost. It returns nil if id is not in the graph or its chain has a single
// version.
func (g *Graph) History(id string) []PastVersion {
	h, ok := g.head[id]
	if !ok {
		return nil
	}
	var out []PastVersion
	for _, m := range g.members[h.Meta.ID] {
		if m != h {
			out = append(out, PastVersion{Memory: m, Lost: !g.line[m.Meta.ID]})
		}
	}
	slices.SortFunc(out, func(a, b PastVersion) int {
		x, y := a.Memory.Meta, b.Memory.Meta
		return cmp.Or(x.CreatedAt.Compare(y.CreatedAt), cmp.Compare(x.Version, y.Version), cmp.Compare(x.ID, y.ID))
	})
	return out
}

// Fork is a version that more than one memory supersedes.
type Fork struct {
	// ID is the id of the superseded version.
	ID string
	// Memory is that version, or nil when it is not in the graph (its file
	// was deleted, say).
	Memory *MemoryFile
	// Successors are the memories that supersede it, best first (highest
	// version, then newest, then greatest id); at least two.
	Successors []*MemoryFile
}

// Forks returns every fork in the graph: each version with more than one
// successor, those in the graph in the order given to NewGraph, then those
// missing from it by id. An audit reports them; readers resolve them as
// [Graph] says.
func (g *Graph) Forks() []Fork {
	var out []Fork
	for _, m := range g.all {
		if s := g.succ[m.Meta.ID]; len(s) > 1 {
			out = append(out, Fork{ID: m.Meta.ID, Memory: m, Successors: slices.Clone(s)})
		}
	}
	var missing []Fork
	for id, s := range g.succ {
		if _, ok := g.byID[id]; !ok && len(s) > 1 {
			missing = append(missing, Fork{ID: id, Successors: slices.Clone(s)})
		}
	}
	slices.SortFunc(missing, func(a, b Fork) int { return cmp.Compare(a.ID, b.ID) })
	return append(out, missing...)
}

// Neighbor is a memory reached from another by related edges.
type Neighbor struct {
	Memory *MemoryFile
	// Relationship is the type of the edge that reached Memory.
	Relationship Relationship
	// From is the id of the memory one hop closer to the start.
	From string
	// Incoming is false when the edge is recorded on From (From refines
	// Memory, say) and true when it is recorded on Memory (Memory refines
	// From).
	Incoming bool
	// Hops is the number of edges from the start (1 for direct neighbours).
	Hops int
}

// Neighbors returns the memories within hops related edges of id, following
// edges in both directions, each once at its shortest distance, nearest
// first. Supersedes links are the version chain, not neighbour edges, and
// are not followed; edges to ids not in the graph are ignored. It returns
// nil if hops < 1 or id is not in the graph.
func (g *Graph) Neighbors(id string, hops int) []Neighbor {
	if _, ok := g.byID[id]; !ok || hops < 1 {
		return nil
	}
	visited := map[string]bool{id: true}
	frontier := []string{id}
	var out []Neighbor
	for h := 1; h <= hops && len(frontier) > 0; h++ {
		var next []string
		for _, from := range frontier {
			for _, r := range g.byID[from].Meta.Related {
				if t, ok := g.byID[r.ID]; ok && !visited[r.ID] {
					visited[r.ID] = true
					next = append(next, r.ID)
					out = append(out, Neighbor{Memory: t, Relationship: r.Relationship, From: from, Hops: h})
				}
			}
			for _, e := range g.in[from] {
				if !visited[e.from] {
					visited[e.from] = true
					next = append(next, e.from)
					out = append(out, Neighbor{Memory: g.byID[e.from], Relationship: e.rel, From: from, Incoming: true, Hops: h})
				}
			}
		}
		frontier = next
	}
	return out
}
