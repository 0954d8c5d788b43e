package memcore

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// graphFields is every field of a graph.
func graphFields(g *Graph) []any {
	return []any{g.all, g.byID, g.succ, g.in, g.head, g.members, g.line}
}

// With makes the graph NewGraph makes of the same memories, whatever the
// memories added: new chains, new versions (a fork, a revival, a
// retirement), versions of an id no memory has, a chain joined from its
// middle (a cycle), duplicates, links to anything, nil; one at a time and
// several at once. The graph it starts from is not changed.
func TestWithEqualsNewGraph(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var all []*MemoryFile
		g := NewGraph(nil)
		id := func(i int) string { return fmt.Sprintf("mem_%08d-0000-4000-8000-%012d", i, seed) }
		next := 0
		newMemory := func() *MemoryFile {
			next++
			m := &MemoryFile{Meta: MemoryMeta{ID: id(next), Version: 1 + rng.IntN(3), CreatedAt: t0.Add(time.Duration(rng.IntN(50)) * time.Minute),
				Scope: ScopeRepo, Category: CategoryPatterns, Retired: rng.IntN(10) == 0}, Content: "x"}
			switch r := rng.IntN(10); {
			case r < 4 && len(all) > 0: // a version of a memory
				p := all[rng.IntN(len(all))].Meta.ID
				m.Meta.Supersedes = &p
			case r == 4: // a version of an id no memory has (yet)
				p := id(next + 1 + rng.IntN(3))
				m.Meta.Supersedes = &p
			case r == 5 && len(all) > 0: // a duplicate id
				m.Meta.ID = all[rng.IntN(len(all))].Meta.ID
			case r == 6: // superseding itself
				p := m.Meta.ID
				m.Meta.Supersedes = &p
			}
			if rng.IntN(3) == 0 {
				m.Meta.Related = []RelatedMemory{{ID: id(1 + rng.IntN(next+2)), Relationship: RelationshipRelatesTo}}
			}
			return m
		}
		for step := range 150 {
			more := make([]*MemoryFile, 1+rng.IntN(3))
			for i := range more {
				if rng.IntN(40) == 0 {
					continue // nil
				}
				more[i] = newMemory()
			}
			before := graphFields(NewGraph(all))
			got := g.With(more...)
			if !reflect.DeepEqual(graphFields(g), before) {
				t.Fatalf("seed %d step %d: With changed the graph it started from", seed, step)
			}
			all = append(all, more...)
			if want := NewGraph(all); !reflect.DeepEqual(graphFields(got), graphFields(want)) {
				t.Fatalf("seed %d step %d: With differs from NewGraph", seed, step)
			}
			g = got
			for i := len(all) - 1; i >= 0; i-- {
				if all[i] == nil {
					all = append(all[:i], all[i+1:]...)
				}
			}
		}
	}
}
