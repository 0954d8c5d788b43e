package memcore

import (
	"cmp"
	"slices"
)

// Graph answers questions about version chains and related edges of a set
// of memories without further I/O. Build it once from a List; it is
// read-only afterwards and safe for concurrent use.
//
// Hand-edited files can make any shape, and every method terminates on it:
// supersedes cycles, forks (two memories superseding the same one; the
// "best" successor — highest version, then newest, then greatest id — is the
// one followed), links to ids that are not in the set (ignored), and
// duplicate ids (the first one given wins).
type Graph struct {
	all  []*MemoryFile
	byID map[string]*MemoryFile
	succ map[string][]*MemoryFile // predecessor id → its successors, best first
	in   map[string][]inEdge      // id → related edges that point at it
}

type inEdge struct {
	from string
	rel  Relationship
}

// NewGraph indexes memories. The memories are shared, not copied: do not
// change them while the graph is in use.
func NewGraph(memories []*MemoryFile) *Graph {
	g := &Graph{
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
	return g
}

// betterSuccessor orders successors best first: highest version, then
// newest, then greatest id.
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

// IsSuperseded reports whether another memory in the graph supersedes id.
func (g *Graph) IsSuperseded(id string) bool { return len(g.succ[id]) > 0 }

// Heads returns the memories nothing supersedes, in the order given to
// NewGraph. Members of a pure supersedes cycle have no head.
func (g *Graph) Heads() []*MemoryFile {
	var out []*MemoryFile
	for _, m := range g.all {
		if !g.IsSuperseded(m.Meta.ID) {
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

// Head returns the newest version of the chain id belongs to, following
// supersedes links forward (the best successor at a fork) and stopping
// before any memory already visited. It reports false if id is not in the
// graph.
func (g *Graph) Head(id string) (*MemoryFile, bool) {
	m, ok := g.byID[id]
	if !ok {
		return nil, false
	}
	seen := map[string]bool{id: true}
	for {
		next := g.nextUnseen(m.Meta.ID, seen)
		if next == nil {
			return m, true
		}
		seen[next.Meta.ID] = true
		m = next
	}
}

func (g *Graph) nextUnseen(id string, seen map[string]bool) *MemoryFile {
	for _, s := range g.succ[id] {
		if !seen[s.Meta.ID] {
			return s
		}
	}
	return nil
}

// Chain returns the version chain through id, oldest first: its
// predecessors as far as they are in the graph, id's memory, and its
// successors up to the head (as [Graph.Head] walks, so the head is always
// on the chain). Each memory appears once, even in a cycle. It returns nil
// if id is not in the graph.
func (g *Graph) Chain(id string) []*MemoryFile {
	m, ok := g.byID[id]
	if !ok {
		return nil
	}
	seen := map[string]bool{id: true}
	var back []*MemoryFile
	for cur := m; cur.Meta.Supersedes != nil; {
		p, ok := g.byID[*cur.Meta.Supersedes]
		if !ok || seen[p.Meta.ID] {
			break
		}
		seen[p.Meta.ID] = true
		back = append(back, p)
		cur = p
	}
	reverse(back)
	chain := append(back, m)
	// Walk forward exactly as Head does, so that the head is always on the
	// chain; in a cycle the walk may pass predecessors already listed.
	walked := map[string]bool{id: true}
	for cur := m; ; {
		next := g.nextUnseen(cur.Meta.ID, walked)
		if next == nil {
			return chain
		}
		walked[next.Meta.ID] = true
		if !seen[next.Meta.ID] {
			seen[next.Meta.ID] = true
			chain = append(chain, next)
		}
		cur = next
	}
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
