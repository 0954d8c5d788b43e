package workspace

import (
	"context"

	"github.com/forgemem/forgemem/memcore"
)

// Graph is the memory graph as [Workspace.Graph] returns it: one node per
// chain (its current version) and the related links between chains.
type Graph struct {
	Nodes []GraphNode `json:"nodes"`
	Edges []GraphEdge `json:"edges"`
}

// GraphNode is one chain.
type GraphNode struct {
	Memory Memory `json:"memory"`
	// Versions is the length of the chain.
	Versions int `json:"versions"`
}

// GraphEdge is a related link between two chains, from the chain whose
// current version records it to the chain of its target.
type GraphEdge struct {
	From         string               `json:"from"`
	To           string               `json:"to"`
	Relationship memcore.Relationship `json:"relationship"`
}

// Graph returns the chains that are not forgotten (all of them with
// retired), oldest first, and the links between them: each current
// version's related links, pointed at the current version of their target's
// chain. Links to memories that are not stored, or not shown, are left out.
func (w *Workspace) Graph(ctx context.Context, retired bool) (*Graph, error) {
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	g := snap.g
	out := &Graph{Nodes: []GraphNode{}, Edges: []GraphEdge{}}
	shown := map[string]bool{}
	for _, h := range g.Heads() {
		if h.Meta.Retired && !retired {
			continue
		}
		shown[h.Meta.ID] = true
		out.Nodes = append(out.Nodes, GraphNode{Memory: view(w.store, g, h), Versions: len(g.Chain(h.Meta.ID))})
	}
	seen := map[GraphEdge]bool{}
	for _, n := range out.Nodes {
		for _, r := range n.Memory.File.Meta.Related {
			t, ok := g.Head(r.ID)
			if !ok || !shown[t.Meta.ID] || t.Meta.ID == n.Memory.ID {
				continue
			}
			e := GraphEdge{From: n.Memory.ID, To: t.Meta.ID, Relationship: r.Relationship}
			if !seen[e] {
				seen[e] = true
				out.Edges = append(out.Edges, e)
			}
		}
	}
	return out, nil
}
