package memcore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// node is a memory for graph shapes: version v, created at t0 + min minutes,
// superseding sup ("" for none), with the given related edges.
func node(id string, v, min int, sup string, related ...RelatedMemory) *MemoryFile {
	m := sample(id)
	m.Meta.Version = v
	m.Meta.CreatedAt = t0.Add(time.Duration(min) * time.Minute)
	if sup != "" {
		m.Meta.Supersedes = &sup
	}
	m.Meta.Related = related
	m.Content = "memory " + id
	return m
}

func rel(id string, r Relationship) RelatedMemory { return RelatedMemory{ID: id, Relationship: r} }

// Short ids for graph shapes; only NewGraph sees them, which does not
// validate.
const (
	gA = "A"
	gB = "B"
	gC = "C"
	gD = "D"
	gE = "E"
	gF = "F"
	gG = "G"
	gX = "X" // never in a graph: a dangling link
)

func TestGraphChains(t *testing.T) {
	tests := []struct {
		name       string
		memories   []*MemoryFile
		heads      map[string]string   // id → Head(id)
		chains     map[string][]string // id → Chain(id)
		history    []string            // History of the chain of the first memory; "*" marks Lost
		forks      []string            // Forks(): "id>successor,successor"
		superseded []string            // the ids IsSuperseded reports
		allHeads   []string            // Heads()
	}{
		{
			name:       "single memory",
			memories:   []*MemoryFile{node(gA, 1, 0, "")},
			heads:      map[string]string{gA: gA},
			chains:     map[string][]string{gA: {gA}},
			allHeads:   []string{gA},
			superseded: nil,
		},
		{
			name:       "linear chain",
			memories:   []*MemoryFile{node(gC, 3, 2, gB), node(gA, 1, 0, ""), node(gB, 2, 1, gA)},
			heads:      map[string]string{gA: gC, gB: gC, gC: gC},
			chains:     map[string][]string{gA: {gA, gB, gC}, gB: {gA, gB, gC}, gC: {gA, gB, gC}},
			history:    []string{gA, gB},
			superseded: []string{gA, gB},
			allHeads:   []string{gC},
		},
		{
			name:     "versions of one second keep their order",
			memories: []*MemoryFile{node(gA, 1, 0, ""), node(gC, 3, 1, gB), node(gB, 2, 1, gA), node(gD, 4, 1, gC)},
			heads:    map[string]string{gA: gD},
			chains:   map[string][]string{gB: {gA, gB, gC, gD}},
			history:  []string{gA, gB, gC},
			allHeads: []string{gD}, superseded: []string{gA, gB, gC},
		},
		{
			name:       "fork: highest version wins",
			memories:   []*MemoryFile{node(gA, 1, 0, ""), node(gC, 3, 1, gA), node(gB, 2, 9, gA)},
			heads:      map[string]string{gA: gC, gB: gC, gC: gC},
			chains:     map[string][]string{gA: {gA, gC}, gB: {gA, gC}, gC: {gA, gC}},
			history:    []string{gA, gB + "*"},
			forks:      []string{"A>C,B"},
			superseded: []string{gA},
			allHeads:   []string{gC},
		},
		{
			name:     "fork: same version, newest wins",
			memories: []*MemoryFile{node(gA, 1, 0, ""), node(gB, 2, 5, gA), node(gC, 2, 9, gA)},
			heads:    map[string]string{gA: gC, gB: gC},
			chains:   map[string][]string{gA: {gA, gC}, gB: {gA, gC}},
			history:  []string{gA, gB + "*"},
			forks:    []string{"A>C,B"},
			allHeads: []string{gC}, superseded: []string{gA},
		},
		{
			name:     "fork: same version and time, greatest id wins",
			memories: []*MemoryFile{node(gA, 1, 0, ""), node(gC, 2, 5, gA), node(gB, 2, 5, gA)},
			heads:    map[string]string{gA: gC, gB: gC},
			chains:   map[string][]string{gA: {gA, gC}},
			history:  []string{gA, gB + "*"},
			forks:    []string{"A>C,B"},
			allHeads: []string{gC}, superseded: []string{gA},
		},
		{
			name: "fork below the head: the best tip heads the chain, the other branch is history",
			memories: []*MemoryFile{
				node(gA, 1, 0, ""), node(gB, 2, 1, gA), node(gC, 2, 2, gA), node(gD, 3, 3, gB),
			},
			heads:    map[string]string{gA: gD, gB: gD, gC: gD, gD: gD},
			chains:   map[string][]string{gA: {gA, gB, gD}, gC: {gA, gB, gD}, gD: {gA, gB, gD}},
			history:  []string{gA, gB, gC + "*"},
			forks:    []string{"A>C,B"},
			allHeads: []string{gD}, superseded: []string{gA, gB},
		},
		{
			name: "fork with a branch of two versions",
			memories: []*MemoryFile{
				node(gA, 1, 0, ""), node(gB, 2, 1, gA), node(gC, 3, 2, gB), node(gD, 2, 3, gA), node(gE, 3, 4, gD),
			},
			heads:    map[string]string{gA: gE, gB: gE, gC: gE},
			chains:   map[string][]string{gC: {gA, gD, gE}},
			history:  []string{gA, gB + "*", gC + "*", gD},
			forks:    []string{"A>D,B"},
			allHeads: []string{gE}, superseded: []string{gA, gB, gD},
		},
		{
			name:     "2-cycle: the best member heads it",
			memories: []*MemoryFile{node(gA, 1, 0, gB), node(gB, 2, 1, gA)},
			heads:    map[string]string{gA: gB, gB: gB},
			chains:   map[string][]string{gA: {gA, gB}, gB: {gA, gB}},
			history:  []string{gA},
			allHeads: []string{gB}, superseded: []string{gA, gB},
		},
		{
			name:     "3-cycle",
			memories: []*MemoryFile{node(gA, 1, 0, gC), node(gB, 2, 1, gA), node(gC, 3, 2, gB)},
			heads:    map[string]string{gA: gC, gB: gC, gC: gC},
			chains:   map[string][]string{gA: {gA, gB, gC}, gB: {gA, gB, gC}, gC: {gA, gB, gC}},
			history:  []string{gA, gB},
			allHeads: []string{gC}, superseded: []string{gA, gB, gC},
		},
		{
			name:     "cycle with a tail",
			memories: []*MemoryFile{node(gA, 1, 0, gB), node(gB, 2, 1, gA), node(gC, 3, 2, gB)},
			// C is the only tip.
			heads:    map[string]string{gA: gC, gB: gC, gC: gC},
			chains:   map[string][]string{gA: {gA, gB, gC}, gB: {gA, gB, gC}, gC: {gA, gB, gC}},
			history:  []string{gA, gB},
			forks:    []string{"B>C,A"},
			allHeads: []string{gC}, superseded: []string{gA, gB},
		},
		{
			name:     "self-supersede",
			memories: []*MemoryFile{node(gA, 1, 0, gA), node(gB, 2, 1, gA)},
			heads:    map[string]string{gA: gB, gB: gB},
			chains:   map[string][]string{gA: {gA, gB}, gB: {gA, gB}},
			history:  []string{gA},
			allHeads: []string{gB}, superseded: []string{gA},
		},
		{
			name:     "dangling supersedes",
			memories: []*MemoryFile{node(gB, 2, 1, gX), node(gC, 3, 2, gB)},
			heads:    map[string]string{gB: gC, gC: gC, gX: ""},
			chains:   map[string][]string{gB: {gB, gC}, gC: {gB, gC}, gX: nil},
			history:  []string{gB},
			allHeads: []string{gC}, superseded: []string{gB, gX},
		},
		{
			name:     "two versions superseding one missing id are one chain",
			memories: []*MemoryFile{node(gB, 2, 1, gX), node(gC, 2, 2, gX)},
			heads:    map[string]string{gB: gC, gC: gC},
			chains:   map[string][]string{gB: {gC}},
			history:  []string{gB + "*"},
			forks:    []string{"X>C,B"},
			allHeads: []string{gC}, superseded: []string{gX},
		},
		{
			name:     "duplicate ids: the first wins",
			memories: []*MemoryFile{node(gA, 1, 0, ""), node(gB, 2, 1, gA), node(gA, 7, 5, gB), nil},
			heads:    map[string]string{gA: gB, gB: gB},
			chains:   map[string][]string{gA: {gA, gB}},
			history:  []string{gA},
			allHeads: []string{gB}, superseded: []string{gA},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGraph(tt.memories)
			for id, want := range tt.heads {
				h, ok := g.Head(id)
				if want == "" {
					if ok || h != nil {
						t.Errorf("Head(%s) = %v, %v; want nil, false", id, h, ok)
					}
					continue
				}
				if !ok || h.Meta.ID != want {
					t.Errorf("Head(%s) = %v, %v; want %s", id, h, ok, want)
				}
			}
			for id, want := range tt.chains {
				if got := ids(g.Chain(id)); !slices.Equal(got, want) {
					t.Errorf("Chain(%s) = %v, want %v", id, got, want)
				}
			}
			if got := historyIDs(g.History(tt.memories[0].Meta.ID)); !slices.Equal(got, tt.history) {
				t.Errorf("History(%s) = %v, want %v", tt.memories[0].Meta.ID, got, tt.history)
			}
			var forks []string
			for _, f := range g.Forks() {
				forks = append(forks, f.ID+">"+strings.Join(ids(f.Successors), ","))
				if m, _ := g.Memory(f.ID); m != f.Memory {
					t.Errorf("Fork %s: Memory = %v, want the graph's", f.ID, f.Memory)
				}
			}
			if !slices.Equal(forks, tt.forks) {
				t.Errorf("Forks() = %v, want %v", forks, tt.forks)
			}
			for _, id := range []string{gA, gB, gC, gD, gX} {
				if got, want := g.IsSuperseded(id), slices.Contains(tt.superseded, id); got != want {
					t.Errorf("IsSuperseded(%s) = %v, want %v", id, got, want)
				}
			}
			if got := ids(g.Heads()); !slices.Equal(got, tt.allHeads) && !(len(got) == 0 && len(tt.allHeads) == 0) {
				t.Errorf("Heads() = %v, want %v", got, tt.allHeads)
			}
		})
	}
}

// historyIDs renders a History as ids, "*" marking the lost versions.
func historyIDs(h []PastVersion) []string {
	var out []string
	for _, v := range h {
		id := v.Memory.Meta.ID
		if v.Lost {
			id += "*"
		}
		out = append(out, id)
	}
	return out
}

func TestGraphDuplicatesAndLookup(t *testing.T) {
	first, second := node(gA, 1, 0, ""), node(gA, 2, 1, "")
	g := NewGraph([]*MemoryFile{first, nil, node(gB, 1, 0, ""), second})
	if g.Len() != 2 {
		t.Errorf("Len = %d, want 2", g.Len())
	}
	if m, ok := g.Memory(gA); !ok || m != first {
		t.Errorf("Memory(A) = %v, %v; want the first given", m, ok)
	}
	if _, ok := g.Memory(gX); ok {
		t.Error("Memory(X) found a memory that is not in the graph")
	}
	ms := g.Memories()
	if got := ids(ms); !slices.Equal(got, []string{gA, gB}) {
		t.Errorf("Memories() = %v", got)
	}
	ms[0] = nil // a copy: changing it does not change the graph
	if got := ids(g.Memories()); !slices.Equal(got, []string{gA, gB}) {
		t.Errorf("Memories() after changing the returned slice = %v", got)
	}
	empty := NewGraph(nil)
	if empty.Len() != 0 || empty.Heads() != nil || empty.Chain(gA) != nil || empty.Neighbors(gA, 3) != nil {
		t.Error("an empty graph answered with memories")
	}
}

func TestGraphNeighbors(t *testing.T) {
	// A refines B (on A); C contradicts A (on C); B relates to D (on B);
	// E refines D (on E); F supersedes A (the chain, not an edge); G links
	// to A twice; A and B also link to ids not in the graph.
	g := NewGraph([]*MemoryFile{
		node(gA, 1, 0, "", rel(gB, RelationshipRefines), rel(gX, RelationshipRelatesTo)),
		node(gB, 1, 1, "", rel(gD, RelationshipRelatesTo), rel(gA, RelationshipContradicts), rel(gX, RelationshipRefines)),
		node(gC, 1, 2, "", rel(gA, RelationshipContradicts)),
		node(gD, 1, 3, ""),
		node(gE, 1, 4, "", rel(gD, RelationshipRefines)),
		node(gF, 2, 5, gA),
		node(gG, 1, 6, "", rel(gA, RelationshipRelatesTo), rel(gA, RelationshipRefines)),
	})
	type nb struct {
		ID       string
		Rel      Relationship
		From     string
		Incoming bool
		Hops     int
	}
	flat := func(ns []Neighbor) []nb {
		var out []nb
		for _, n := range ns {
			out = append(out, nb{n.Memory.Meta.ID, n.Relationship, n.From, n.Incoming, n.Hops})
		}
		return out
	}
	hop1 := []nb{
		{gB, RelationshipRefines, gA, false, 1},
		{gC, RelationshipContradicts, gA, true, 1},
		{gG, RelationshipRelatesTo, gA, true, 1},
	}
	hop2 := append(slices.Clone(hop1), nb{gD, RelationshipRelatesTo, gB, false, 2})
	hop3 := append(slices.Clone(hop2), nb{gE, RelationshipRefines, gD, true, 3})
	tests := []struct {
		id   string
		hops int
		want []nb
	}{
		{gA, 0, nil},
		{gA, -1, nil},
		{gA, 1, hop1},
		{gA, 2, hop2},
		{gA, 3, hop3},
		{gA, 10, hop3},
		{gX, 2, nil},
		{gF, 3, nil}, // superseding A makes F no neighbour of anything
		{gE, 1, []nb{{gD, RelationshipRefines, gE, false, 1}}},
		{gD, 1, []nb{{gB, RelationshipRelatesTo, gD, true, 1}, {gE, RelationshipRefines, gD, true, 1}}},
		{gD, 2, []nb{
			{gB, RelationshipRelatesTo, gD, true, 1}, {gE, RelationshipRefines, gD, true, 1},
			{gA, RelationshipContradicts, gB, false, 2},
		}},
	}
	for _, tt := range tests {
		got := flat(g.Neighbors(tt.id, tt.hops))
		if !slices.Equal(got, tt.want) {
			t.Errorf("Neighbors(%s, %d) =\n%v\nwant\n%v", tt.id, tt.hops, got, tt.want)
		}
	}
	// The Memory field is the graph's memory itself.
	for _, n := range g.Neighbors(gA, 3) {
		if m, _ := g.Memory(n.Memory.Meta.ID); m != n.Memory {
			t.Errorf("Neighbor %s is not the graph's memory", n.Memory.Meta.ID)
		}
	}
}

// Every traversal terminates on arbitrary hand-made shapes — random
// supersedes and related links among a few ids, with cycles, forks,
// self-links, duplicates and dangling ids — and its answers are sane.
func TestGraphTerminatesOnRandomShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pool := []string{gA, gB, gC, gD, gE, gF, gG, gX}
	rels := []Relationship{RelationshipRefines, RelationshipContradicts, RelationshipRelatesTo}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for round := 0; round < 300; round++ {
			var ms []*MemoryFile
			for i := r.IntN(10); i >= 0; i-- {
				sup := ""
				if r.IntN(3) > 0 {
					sup = pool[r.IntN(len(pool))]
				}
				var related []RelatedMemory
				for j := r.IntN(4); j > 0; j-- {
					related = append(related, rel(pool[r.IntN(len(pool))], rels[r.IntN(len(rels))]))
				}
				ms = append(ms, node(pool[r.IntN(len(pool)-1)], r.IntN(3)+1, r.IntN(3), sup, related...))
			}
			g := NewGraph(ms)
			for _, id := range pool {
				checkGraphAnswers(t, g, id, fmt.Sprintf("round %d", round))
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a graph traversal did not terminate")
	}
}

func checkGraphAnswers(t *testing.T, g *Graph, id, where string) {
	_, in := g.Memory(id)
	head, ok := g.Head(id)
	if ok != in {
		t.Errorf("%s: Head(%s) found = %v, in graph = %v", where, id, ok, in)
		return
	}
	chain := g.Chain(id)
	if !in {
		if chain != nil {
			t.Errorf("%s: Chain(%s) of a missing id = %v", where, id, ids(chain))
		}
		return
	}
	// The chain's members are its head and its history, each once; the
	// chain is the line among them to the head, the other versions are
	// marked lost; id is one of them, and all have id's head.
	hist := g.History(id)
	members := []string{head.Meta.ID}
	for _, v := range hist {
		members = append(members, v.Memory.Meta.ID)
		if slices.Contains(ids(chain), v.Memory.Meta.ID) == v.Lost {
			t.Errorf("%s: History(%s) marks %s lost = %v, chain %v", where, id, v.Memory.Meta.ID, v.Lost, ids(chain))
		}
	}
	if len(members) > g.Len() || len(compactSorted(members)) != len(members) || !slices.Contains(members, id) {
		t.Errorf("%s: Head(%s) = %s and History %v: want each member once, %s among them", where, id, head.Meta.ID, historyIDs(hist), id)
	}
	if got := ids(chain); len(compactSorted(got)) != len(got) || slices.ContainsFunc(got, func(c string) bool { return !slices.Contains(members, c) }) {
		t.Errorf("%s: Chain(%s) = %v: want each memory once, all members of the chain %v", where, id, got, members)
	}
	if chain[len(chain)-1] != head {
		t.Errorf("%s: Chain(%s) = %v does not end at its head %s", where, id, ids(chain), head.Meta.ID)
	}
	for _, m := range members {
		if h, _ := g.Head(m); h != head {
			t.Errorf("%s: Head(%s) = %s, but Head(%s) = %s: one chain, two heads", where, m, h.Meta.ID, id, head.Meta.ID)
		}
	}
	if !slices.ContainsFunc(g.Heads(), func(m *MemoryFile) bool { return m == head }) {
		t.Errorf("%s: Head(%s) = %s is not among Heads()", where, id, head.Meta.ID)
	}
	seen := map[string]bool{}
	last := 0
	for _, n := range g.Neighbors(id, 3) {
		nid := n.Memory.Meta.ID
		if nid == id || seen[nid] || n.Hops < last || n.Hops < 1 || n.Hops > 3 {
			t.Errorf("%s: Neighbors(%s, 3) has %s at hop %d (after hop %d)", where, id, nid, n.Hops, last)
		}
		seen[nid] = true
		last = n.Hops
	}
}

func compactSorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

func TestGraphConcurrentUse(t *testing.T) {
	g := NewGraph([]*MemoryFile{
		node(gA, 1, 0, "", rel(gB, RelationshipRefines)), node(gB, 1, 1, ""), node(gC, 2, 2, gA),
	})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, id := range []string{gA, gB, gC} {
				checkGraphAnswers(t, g, id, "concurrent")
				g.Heads()
				g.Memories()
			}
		}()
	}
	wg.Wait()
}

func TestGraphIsRetired(t *testing.T) {
	retire := func(m *MemoryFile) *MemoryFile { m.Meta.Retired = true; return m }
	tests := []struct {
		name     string
		memories []*MemoryFile
		retired  map[string]bool // id → IsRetired(id)
	}{
		{
			name:     "a live chain",
			memories: []*MemoryFile{node(gA, 1, 0, ""), node(gB, 2, 1, gA)},
			retired:  map[string]bool{gA: false, gB: false, gX: false},
		},
		{
			name:     "retired head retires the whole chain",
			memories: []*MemoryFile{node(gA, 1, 0, ""), retire(node(gB, 2, 1, gA))},
			retired:  map[string]bool{gA: true, gB: true},
		},
		{
			name:     "a later version revives it",
			memories: []*MemoryFile{node(gA, 1, 0, ""), retire(node(gB, 2, 1, gA)), node(gC, 3, 2, gB)},
			retired:  map[string]bool{gA: false, gB: false, gC: false},
		},
		{
			name:     "a retired old version does not retire the chain",
			memories: []*MemoryFile{retire(node(gA, 1, 0, "")), node(gB, 2, 1, gA)},
			retired:  map[string]bool{gA: false, gB: false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGraph(tt.memories)
			for id, want := range tt.retired {
				if got := g.IsRetired(id); got != want {
					t.Errorf("IsRetired(%s) = %v, want %v", id, got, want)
				}
			}
		})
	}
}

func TestGraphLive(t *testing.T) {
	retire := func(m *MemoryFile) *MemoryFile { m.Meta.Retired = true; return m }
	ms := []*MemoryFile{
		node(gA, 1, 0, ""), retire(node(gB, 2, 1, gA)), // retired chain A→B
		node(gC, 1, 2, "", rel(gA, RelationshipRefines)), // links into it
		retire(node(gD, 1, 3, "")), node(gE, 2, 4, gD),   // revived chain D→E
	}
	g := NewGraph(ms)
	if got, want := ids(g.Live()), []string{gC, gD, gE}; !slices.Equal(got, want) {
		t.Errorf("Live = %v, want %v", got, want)
	}
	live := NewGraph(g.Live())
	if nb := live.Neighbors(gC, 1); len(nb) != 0 {
		t.Errorf("a live memory still reaches the retired chain: %+v", nb)
	}
}

// Every reader resolves a forked chain the same way, in whatever order it
// listed the memories: the same head, line and history.
func TestGraphForkResolutionIgnoresOrder(t *testing.T) {
	ms := []*MemoryFile{
		node(gA, 1, 0, ""), node(gB, 2, 1, gA), node(gC, 2, 1, gA), node(gD, 3, 2, gC),
		node(gE, 3, 2, gB), node(gF, 2, 3, gA),
	}
	want := NewGraph(ms)
	wantHead, _ := want.Head(gA)
	if wantHead.Meta.ID != gE { // D and E tie on version and time: the greater id
		t.Fatalf("Head = %s, want %s", wantHead.Meta.ID, gE)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 50; i++ {
		shuffled := slices.Clone(ms)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		g := NewGraph(shuffled)
		for _, m := range ms {
			id := m.Meta.ID
			if h, _ := g.Head(id); h != wantHead {
				t.Fatalf("order %v: Head(%s) = %s, want %s", ids(shuffled), id, h.Meta.ID, wantHead.Meta.ID)
			}
			if got, w := ids(g.Chain(id)), ids(want.Chain(id)); !slices.Equal(got, w) {
				t.Fatalf("order %v: Chain(%s) = %v, want %v", ids(shuffled), id, got, w)
			}
			if got, w := historyIDs(g.History(id)), historyIDs(want.History(id)); !slices.Equal(got, w) {
				t.Fatalf("order %v: History(%s) = %v, want %v", ids(shuffled), id, got, w)
			}
		}
	}
	if got := historyIDs(want.History(gA)); !slices.Equal(got, []string{gA, gB, gC + "*", gD + "*", gF + "*"}) {
		t.Errorf("History = %v", got)
	}
}
