package memcapture

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// replyClassifier answers every call with one classifier reply.
type replyClassifier string

func (r replyClassifier) Complete(ctx context.Context, _ memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &memcore.CompletionResponse{Text: string(r)}, nil
}

// racingStore makes the passes of several pipelines overlap: each
// pipeline's store lets no write through until every pipeline has listed
// the memories its pass builds on, so all of them decide what to supersede
// from the same state, and their writes then race.
type racingStore struct {
	memcore.MemoryStore
	listed *sync.WaitGroup // one count per pipeline
	once   sync.Once
	// flatten, when set, hides the *memcore.ConflictError behind a plain
	// error wrapping memcore.ErrConflict, as a store that gives no details.
	flatten bool
}

func (s *racingStore) List(ctx context.Context) ([]*memcore.MemoryFile, error) {
	ms, err := s.MemoryStore.List(ctx)
	s.once.Do(s.listed.Done)
	return ms, err
}

func (s *racingStore) Write(ctx context.Context, m *memcore.MemoryFile) error {
	s.listed.Wait()
	err := s.MemoryStore.Write(ctx, m)
	if s.flatten && errors.Is(err, memcore.ErrConflict) {
		return fmt.Errorf("conflict without details: %w", memcore.ErrConflict)
	}
	return err
}

// Two pipelines — two agent sessions, in one process or two — are told to
// supersede the same memory in passes that overlap. The store lets one
// through; the other's write is refused, re-pointed to the winner's version
// and written after it: the chain is a line of three, with a conflict
// counted. Had both said the same, the second would be a duplicate.
func TestTwoPipelinesSupersedeOneMemory(t *testing.T) {
	stores := []struct {
		name    string
		open    func(t *testing.T) [2]memcore.MemoryStore
		flatten bool
	}{
		{name: "MemStore", open: func(*testing.T) [2]memcore.MemoryStore {
			s := memcore.NewMemStore()
			return [2]memcore.MemoryStore{s, s}
		}},
		{name: "two FileStores over the same folders", open: func(t *testing.T) [2]memcore.MemoryStore {
			a := newFileStore(t)
			b, err := memcore.NewFileStore(a.Dir(memcore.ScopeRepo), a.Dir(memcore.ScopeUser), memcore.FileStoreConfig{})
			if err != nil {
				t.Fatal(err)
			}
			return [2]memcore.MemoryStore{a, b}
		}},
		{name: "a store that names no head", flatten: true, open: func(*testing.T) [2]memcore.MemoryStore {
			s := memcore.NewMemStore()
			return [2]memcore.MemoryStore{s, s}
		}},
	}
	for _, st := range stores {
		for _, tt := range []struct {
			name     string
			contents [2]string
			chain    int // versions in the chain afterwards
		}{
			{"different changes", [2]string{"Indent YAML with two spaces.", "Indent YAML with four spaces."}, 3},
			{"the same change", [2]string{"Indent YAML with two spaces.", "indent  YAML with two SPACES."}, 2},
		} {
			t.Run(st.name+"/"+tt.name, func(t *testing.T) {
				stores := st.open(t)
				other := seed(t, stores[0], "Linked note about fixtures.", memcore.ScopeRepo, memcore.CategoryPatterns, t0, nil)
				v1 := seed(t, stores[0], "Indent YAML with tabs.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0.Add(time.Minute), nil,
					memcore.RelatedMemory{ID: other.Meta.ID, Relationship: memcore.RelationshipRelatesTo})
				var listed sync.WaitGroup
				listed.Add(2)
				var ps [2]*Pipeline
				for i := range ps {
					llm := replyClassifier(reply(mem{"content": tt.contents[i], "scope": "repo", "category": "project-conventions", "supersedes": v1.Meta.ID}))
					ps[i] = startPipeline(t, llm, &racingStore{MemoryStore: stores[i], listed: &listed, flatten: st.flatten}, Config{})
				}
				for i, p := range ps {
					p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, SessionID: fmt.Sprintf("session-%d", i), Messages: win("How do we indent YAML?", "With spaces.")})
				}
				var conflicts, duplicates, written uint64
				for _, p := range ps {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					if err := p.Close(ctx); err != nil {
						t.Fatalf("Close: %v (a pass never listed or never wrote)", err)
					}
					cancel()
					s := p.Stats()
					conflicts, duplicates, written = conflicts+s.Conflicts, duplicates+s.Duplicates, written+s.MemoriesWritten
					if s.StoreErrors != 0 {
						t.Errorf("stats %+v: store errors", s)
					}
				}
				if conflicts != 1 || written != uint64(tt.chain-1) || duplicates != uint64(3-tt.chain) {
					t.Errorf("%d conflicts, %d written, %d duplicates; want 1, %d, %d", conflicts, written, duplicates, tt.chain-1, 3-tt.chain)
				}

				g := memcore.NewGraph(listAll(t, stores[0]))
				if forks := g.Forks(); len(forks) != 0 {
					t.Fatalf("the chain forked: %+v", forks)
				}
				chain := g.Chain(v1.Meta.ID)
				if len(chain) != tt.chain || g.Len() != tt.chain+1 {
					t.Fatalf("a chain of %d among %d memories, want a line of %d", len(chain), g.Len(), tt.chain)
				}
				var contents []string
				for i, m := range chain {
					contents = append(contents, m.Content)
					if m.Meta.Version != i+1 {
						t.Errorf("version %d of the chain is numbered %d", i+1, m.Meta.Version)
					}
					if want := []memcore.RelatedMemory{{ID: other.Meta.ID, Relationship: memcore.RelationshipRelatesTo}}; !slices.Equal(m.Meta.Related, want) {
						t.Errorf("version %d has edges %v, want %v carried forward", i+1, m.Meta.Related, want)
					}
				}
				for _, c := range tt.contents[:tt.chain-1] {
					if !slices.ContainsFunc(contents, func(s string) bool { return memcore.SameContent(s, c) }) {
						t.Errorf("chain %q lacks %q", contents, c)
					}
				}
			})
		}
	}
}

// A memory of a pass that a later memory of the same pass supersedes, and
// that turns out a duplicate of the winner's version after a conflict,
// leaves its successor pointing at the winner's version.
func TestConflictDuplicateKeepsItsSuccessorOnTheChain(t *testing.T) {
	store := memcore.NewMemStore()
	v1 := seed(t, store, "Use make test.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
	winner := memcore.NewVersion(v1, "other-session", memcore.TriggerCadence)
	winner.Content = "Use scripts/test."
	p := newPipeline(t, replyClassifier(nothing), store, Config{})

	// Both made in one pass on top of v1, as build would; the winner is
	// written in between, by another session.
	dup := memcore.NewVersion(v1, "s", memcore.TriggerCadence)
	dup.Content = "use   Scripts/test."
	after := memcore.NewVersion(dup, "s", memcore.TriggerCadence)
	after.Content = "Use scripts/test; it runs every module."
	if err := store.Write(context.Background(), winner); err != nil {
		t.Fatal(err)
	}
	if n := p.write(context.Background(), []*memcore.MemoryFile{dup, after}, p.log); n != 1 {
		t.Fatalf("%d written, want 1", n)
	}
	if s := p.Stats(); s.Conflicts != 1 || s.Duplicates != 1 || s.StoreErrors != 0 {
		t.Errorf("stats %+v; want one conflict, one duplicate, no store error", s)
	}
	got := memoryIDs(memcore.NewGraph(listAll(t, store)).Chain(v1.Meta.ID))
	if want := []string{v1.Meta.ID, winner.Meta.ID, after.Meta.ID}; !slices.Equal(got, want) {
		t.Errorf("chain %v, want %v", got, want)
	}
}

func memoryIDs(ms []*memcore.MemoryFile) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Meta.ID
	}
	return out
}
