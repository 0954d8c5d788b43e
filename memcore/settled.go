package memcore

// Waiting returns the versions that wait for review, in the order given to
// NewGraph: the pending versions ([StatusPending]) at the end of a chain —
// its head when pending, the pending version before it, and so on — and
// the same at the end of what is left, should a fork leave a pending tip
// there. A pending version that a version in force supersedes is history,
// not waiting.
func (g *Graph) Waiting() []*MemoryFile {
	w := g.waiting()
	if len(w) == 0 {
		return nil
	}
	var out []*MemoryFile
	for _, m := range g.all {
		if w[m.Meta.ID] {
			out = append(out, m)
		}
	}
	return out
}

// waiting returns the ids of the versions that wait for review (see
// Waiting), nil when none does.
func (g *Graph) waiting() map[string]bool {
	var drop map[string]bool
	cur := g
	for {
		n := 0
		for _, h := range cur.Heads() {
			if h.Meta.Status == StatusPending {
				if drop == nil {
					drop = make(map[string]bool)
				}
				drop[h.Meta.ID] = true
				n++
			}
		}
		if n == 0 {
			return drop
		}
		cur = NewGraph(g.without(drop))
	}
}

// without returns the memories of g not in drop, in order.
func (g *Graph) without(drop map[string]bool) []*MemoryFile {
	out := make([]*MemoryFile, 0, len(g.all))
	for _, m := range g.all {
		if !drop[m.Meta.ID] {
			out = append(out, m)
		}
	}
	return out
}

// Settled returns the memories in force, in the order given to NewGraph:
// those of chains that are not retired (see [Graph.Live]), without the
// versions that wait for review ([Graph.Waiting]). A chain whose head waits
// falls back to its newest version in force; one with no such version is
// left out. What capture offers the classifier and what retrieval indexes
// and injects is a graph of them (NewGraph(g.Settled())).
func (g *Graph) Settled() []*MemoryFile {
	w := g.waiting()
	if len(w) == 0 {
		return g.Live()
	}
	return NewGraph(g.without(w)).Live()
}

// IsPending reports whether the head of the chain id belongs to waits for
// review (its status is [StatusPending]). It reports false if id is not in
// the graph.
func (g *Graph) IsPending(id string) bool {
	h, ok := g.Head(id)
	return ok && h.Meta.Status == StatusPending
}
