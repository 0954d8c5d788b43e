package memretrieve

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// keptStore is a store that hands out the same memories from one List to
// the next, as a host that keeps them in memory does (the forgemem
// command's live view of the folders): a change replaces a memory, never
// edits it.
type keptStore struct {
	*memcore.MemStore
	mu  sync.Mutex
	all []*memcore.MemoryFile
}

func (s *keptStore) List(ctx context.Context) ([]*memcore.MemoryFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.all), nil
}

func (s *keptStore) set(all []*memcore.MemoryFile) {
	s.mu.Lock()
	s.all = slices.Clone(all)
	s.mu.Unlock()
}

// snapshotFields is what of a snapshot two engines of the same memories
// must agree on.
func snapshotFields(s *snapshot) []any {
	var lex []any
	if s.lex != nil {
		lex = []any{s.lex.IDs, s.lex.Len()}
		for i := range s.lex.Len() {
			lex = append(lex, s.lex.Doc(i))
		}
	}
	return []any{s.graph.Memories(), s.graph.Heads(), s.idx.Dim, s.idx.IDs, s.idx.Vecs, lex, s.lexRows, s.cal}
}

// An engine that follows a store from build to build — extending its
// indexes after new memories (new chains, new versions, versions that wait
// for review, texts another memory has), making them again after anything
// else (a forgotten chain, an edit, a deletion) — holds, after each build,
// the graph, the indexes, the calibration and the answers of an engine
// built afresh on the same memories.
func TestFollowingEngineAgreesWithANewOne(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"gated", identityConfig()},
		{"ungated", ungated(identityConfig())},
		{"vector only", vectorOnly(identityConfig())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			emb, err := fake.NewEmbedder(fake.EmbedderConfig{Dimension: 64})
			if err != nil {
				t.Fatal(err)
			}
			store := &keptStore{MemStore: memcore.NewMemStore()}
			all := genMemories(120, 3)
			sortByCreation(all)
			store.set(all)
			following := newEngine(t, store, emb, nil, tc.cfg)
			rng := randFor(9)
			for step := range 40 {
				switch r := rng.IntN(12); {
				case r == 10: // a version that waits for review
					heads := memcore.NewGraph(all).Heads()
					h := heads[rng.IntN(len(heads))]
					v := supersede(mem(memcore.NewMemoryID(), h.Meta.Scope, h.Meta.Category, h.Meta.Version+1, 400+step, "pending: "+genContent(rng)), h)
					v.Meta.Status = memcore.StatusPending
					all = append(all, v)
				case r == 11: // a memory saying what another says
					all = append(all, mem(memcore.NewMemoryID(), memcore.ScopeUser, memcore.CategoryPatterns, 1, 400+step, all[rng.IntN(len(all))].Content))
				case r < 3: // one or more new memories, last in the order
					for range 1 + rng.IntN(3) {
						all = append(all, mem(memcore.NewMemoryID(), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 400+step, fmt.Sprintf("%s (new %d)", genContent(rng), step)))
					}
				case r < 5: // new memories within the newest's second: their ids order them among the last
					newest := memcore.NewGraph(all).Memories()[len(all)-1].Meta.CreatedAt
					for range 1 + rng.IntN(3) {
						m := mem(memcore.NewMemoryID(), memcore.ScopeUser, memcore.CategoryPatterns, 1, 0, fmt.Sprintf("%s (same second %d)", genContent(rng), step))
						m.Meta.CreatedAt, m.Meta.UpdatedAt = newest, newest
						all = append(all, m)
					}
				case r < 7: // a new version
					heads := memcore.NewGraph(all).Heads()
					v := mem(memcore.NewMemoryID(), heads[0].Meta.Scope, heads[0].Meta.Category, heads[0].Meta.Version+1, 400+step, fmt.Sprintf("changed %d: %s", step, genContent(rng)))
					all = append(all, supersede(v, heads[rng.IntN(len(heads))]))
				case r == 7: // forgotten: a retired version
					heads := memcore.NewGraph(all).Heads()
					h := heads[rng.IntN(len(heads))]
					v := supersede(mem(memcore.NewMemoryID(), h.Meta.Scope, h.Meta.Category, h.Meta.Version+1, 400+step, h.Content), h)
					v.Meta.Retired = true
					all = append(all, v)
				case r == 8: // a hand edit in the middle: a new memory value
					i := rng.IntN(len(all))
					c := all[i].Clone()
					c.Content += " (edited)"
					all[i] = c
				default: // a file deleted
					i := rng.IntN(len(all))
					all = append(all[:i:i], all[i+1:]...)
				}
				sortByCreation(all) // as a store lists them
				store.set(all)
				rebuild(t, following)
				if following.snap.Load().gen != following.last.gen {
					t.Fatalf("step %d: the snapshot is not the last build's", step)
				}
				fresh := newEngine(t, store, emb, nil, tc.cfg)
				rebuild(t, fresh)
				if !reflect.DeepEqual(snapshotFields(following.snap.Load()), snapshotFields(fresh.snap.Load())) {
					t.Fatalf("step %d: the following engine snapshot differs: %s", step, diffFields(snapshotFields(following.snap.Load()), snapshotFields(fresh.snap.Load())))
				}
				for _, q := range []string{genContent(rng), "tests errors", all[len(all)-1].Content} {
					a, _ := following.Retrieve(ctx, "", userWindow(q))
					b, _ := fresh.Retrieve(ctx, "", userWindow(q))
					if a.Injection != b.Injection || !reflect.DeepEqual(ids(a), ids(b)) || !reflect.DeepEqual(a.Ranked, b.Ranked) {
						t.Fatalf("step %d, %q: the following engine answered %v, a new one %v", step, q, ids(a), ids(b))
					}
				}
			}
			if following.extended.Load() < 10 {
				t.Errorf("%d builds extended the last one's indexes; the test wants at least 10", following.extended.Load())
			}
		})
	}
}

// sortByCreation orders ms as a store lists them: oldest first by
// created_at, then by id.
func sortByCreation(ms []*memcore.MemoryFile) {
	slices.SortFunc(ms, func(a, b *memcore.MemoryFile) int {
		if c := a.Meta.CreatedAt.Compare(b.Meta.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Meta.ID, b.Meta.ID)
	})
}

// diffFields names the fields of a and b (snapshotFields) that differ.
func diffFields(a, b []any) string {
	names := []string{"memories", "heads", "dimension", "vector ids", "vectors", "lexical index", "lexical rows", "calibration"}
	var out []string
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			out = append(out, names[i])
		}
	}
	return strings.Join(out, ", ")
}
