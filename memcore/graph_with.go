package memcore

import (
	"maps"
	"slices"
)

// With returns the graph of g's memories followed by more: the graph
// NewGraph(append(g.Memories(), more...)) makes, built from g's rather than
// from nothing, so that adding a memory to a graph of many costs the
// chain it joins and copies of the graph's maps, not a lookup of every
// memory. g is not changed, and the memories are shared as with NewGraph.
// A memory whose id some memory of the graph already names as its
// predecessor (a chain joined from its middle, as a hand-made file can do)
// makes it index every memory again.
func (g *Graph) With(more ...*MemoryFile) *Graph {
	n := &Graph{
		all:  slices.Clip(g.all),
		byID: maps.Clone(g.byID), succ: maps.Clone(g.succ), in: maps.Clone(g.in),
		head: maps.Clone(g.head), members: maps.Clone(g.members), line: maps.Clone(g.line),
	}
	for _, m := range more {
		if m == nil {
			continue
		}
		if len(n.succ[m.Meta.ID]) > 0 {
			return NewGraph(append(slices.Clip(g.all), more...))
		}
		n.add(m)
	}
	return n
}

// add adds m, whose id no memory of n names as its predecessor, to n,
// whose maps and slices are n's own but may share their values with
// another graph: a value is replaced, never changed.
func (n *Graph) add(m *MemoryFile) {
	id := m.Meta.ID
	if _, dup := n.byID[id]; dup {
		return // the first one given wins
	}
	n.byID[id] = m
	n.all = append(n.all, m)
	var chain []*MemoryFile // the chain m joins, before it does
	if p := m.Meta.Supersedes; p != nil && *p != id {
		chain = n.chainOf(*p)
		s := append(slices.Clip(n.succ[*p]), m)
		slices.SortStableFunc(s, betterSuccessor)
		n.succ[*p] = s
	}
	for _, r := range m.Meta.Related {
		if r.ID != id {
			n.in[r.ID] = append(slices.Clip(n.in[r.ID]), inEdge{from: id, rel: r.Relationship})
		}
	}
	if len(chain) > 0 {
		old := n.head[chain[0].Meta.ID]
		delete(n.members, old.Meta.ID)
		for _, v := range n.lineTo(old) {
			delete(n.line, v.Meta.ID)
		}
	}
	members := append(slices.Clip(chain), m)
	head := n.chainHead(members)
	n.members[head.Meta.ID] = members
	for _, v := range members {
		n.head[v.Meta.ID] = head
	}
	for _, v := range n.lineTo(head) {
		n.line[v.Meta.ID] = true
	}
}

// chainOf returns the members of the chain of the version id — one of n's,
// or an id that is not in n but that versions of n supersede — or nil when
// no memory of n belongs to it.
func (n *Graph) chainOf(id string) []*MemoryFile {
	if _, ok := n.byID[id]; ok {
		return n.members[n.head[id].Meta.ID]
	}
	if s := n.succ[id]; len(s) > 0 {
		return n.members[n.head[s[0].Meta.ID].Meta.ID]
	}
	return nil
}
