package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/settings"
)

// raceFixture is a workspace over one chain, and a second store over the
// same folders: another session.
func raceFixture(t *testing.T) (*Workspace, *memcore.FileStore, *memcore.MemoryFile) {
	t.Helper()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o750); err != nil {
		t.Fatal(err)
	}
	s, err := settings.Load(settings.Options{WorkDir: repo, Home: filepath.Join(root, "home")})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := Open(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := memcore.NewFileStore(s.Paths.RepoDir, s.Paths.UserDir, memcore.FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	first := &memcore.MemoryFile{Meta: memcore.MemoryMeta{ID: memcore.NewMemoryID(), CreatedAt: time.Now().UTC().Truncate(time.Second),
		Version: 1, Scope: memcore.ScopeRepo, Category: memcore.CategoryPatterns}, Content: "Retry twice."}
	if err := other.Write(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	return ws, other, first
}

// otherSessionSupersedes makes the next write of the workspace find that
// another session superseded pred first, and returns that session's
// version once written.
func otherSessionSupersedes(t *testing.T, other *memcore.FileStore, pred *memcore.MemoryFile, retired bool) **memcore.MemoryFile {
	var written *memcore.MemoryFile
	testHookBeforeWrite = func() {
		testHookBeforeWrite = nil
		m := memcore.NewVersion(pred, "other", memcore.TriggerCadence)
		m.Content, m.Meta.Retired = "Retry three times.", retired
		if err := other.Write(context.Background(), m); err != nil {
			t.Errorf("the other session's write: %v", err)
		}
		written = m
	}
	t.Cleanup(func() { testHookBeforeWrite = nil })
	return &written
}

func TestRememberRetriesOnConflict(t *testing.T) {
	ws, other, first := raceFixture(t)
	theirs := otherSessionSupersedes(t, other, first, false)
	res, err := ws.Remember(context.Background(), RememberInput{Text: "Retry four times.", Supersedes: first.Meta.ID})
	if err != nil {
		t.Fatal(err)
	}
	if res.Raced != (*theirs).Meta.ID || res.Superseded != (*theirs).Meta.ID || res.Memory.Version != 3 {
		t.Fatalf("result %+v; want version 3 superseding the other session's %s", res, (*theirs).Meta.ID)
	}
	snap, err := ws.load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if forks := snap.g.Forks(); len(forks) != 0 {
		t.Fatalf("the chain forked: %+v", forks)
	}
}

func TestForgetRetriesOnConflict(t *testing.T) {
	tests := []struct {
		name        string
		theyRetire  bool
		wantAlready bool
		wantVersion int
	}{
		{"they changed it", false, false, 3},
		{"they forgot it", true, true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, other, first := raceFixture(t)
			otherSessionSupersedes(t, other, first, tt.theyRetire)
			res, err := ws.Forget(context.Background(), first.Meta.ID, "obsolete")
			if err != nil {
				t.Fatal(err)
			}
			if res.Already != tt.wantAlready || res.Memory.Version != tt.wantVersion || !res.Memory.Retired {
				t.Fatalf("result %+v; want already %v, a retired version %d", res, tt.wantAlready, tt.wantVersion)
			}
		})
	}
}

// scriptedLLM answers every call with one reply.
type scriptedLLM string

func (r scriptedLLM) Complete(ctx context.Context, _ memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	return &memcore.CompletionResponse{Text: string(r)}, ctx.Err()
}

// racedStore lets another session write its version just before the
// first write it is asked for.
type racedStore struct {
	memcore.MemoryStore
	before func()
}

func (s *racedStore) Write(ctx context.Context, m *memcore.MemoryFile) error {
	if s.before != nil {
		f := s.before
		s.before = nil
		f()
	}
	return s.MemoryStore.Write(ctx, m)
}

// raceOutcome is what a race left on the chain, with ids replaced by
// names: the chain's versions, and the edges and category of its head.
type raceOutcome struct {
	chain    []string
	edges    []string
	category memcore.Category
}

// Capture and a person's remember meet the same race — another session
// supersedes the version they change, adding a link, just before they
// write — and resolve it the same way: their version comes after the
// other session's, with its link, their own and the one they carried.
func TestCaptureAndRememberResolveARaceAlike(t *testing.T) {
	type fixture struct {
		ws      *Workspace
		v1, tgt *memcore.MemoryFile
		names   map[string]string // id → a name the outcome shows
	}
	setUp := func(t *testing.T) *fixture {
		ws, other, _ := raceFixture(t)
		f := &fixture{ws: ws, names: map[string]string{}}
		mk := func(name, content string, related ...memcore.RelatedMemory) *memcore.MemoryFile {
			m := &memcore.MemoryFile{Meta: memcore.MemoryMeta{ID: memcore.NewMemoryID(), CreatedAt: time.Now().UTC().Truncate(time.Second),
				Version: 1, Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions, Related: related}, Content: content}
			if err := other.Write(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			f.names[m.Meta.ID] = name
			return m
		}
		old := mk("old link", "Fixtures live in testdata.")
		f.tgt = mk("our link", "CI runs on every push.")
		theirLink := mk("their link", "Releases are tagged per module.")
		f.v1 = mk("v1", "Run the tests with make test.", memcore.RelatedMemory{ID: old.Meta.ID, Relationship: memcore.RelationshipRelatesTo})
		otherWrites := func() {
			m := memcore.NewVersion(f.v1, "other", memcore.TriggerCadence)
			m.Content = "Run the tests with scripts/test."
			m.Meta.Related = append(m.Meta.Related, memcore.RelatedMemory{ID: theirLink.Meta.ID, Relationship: memcore.RelationshipRefines})
			if err := other.Write(context.Background(), m); err != nil {
				t.Errorf("the other session's write: %v", err)
			}
			f.names[m.Meta.ID] = "theirs"
		}
		testHookBeforeWrite = func() { testHookBeforeWrite = nil; otherWrites() }
		t.Cleanup(func() { testHookBeforeWrite = nil })
		return f
	}
	outcome := func(t *testing.T, f *fixture, mine string) raceOutcome {
		f.names[mine] = "mine"
		all, err := f.ws.store.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		g := memcore.NewGraph(all)
		var out raceOutcome
		for _, m := range g.Chain(f.v1.Meta.ID) {
			out.chain = append(out.chain, fmt.Sprintf("%s v%d", f.names[m.Meta.ID], m.Meta.Version))
		}
		head := g.Chain(f.v1.Meta.ID)[len(out.chain)-1]
		for _, e := range head.Meta.Related {
			out.edges = append(out.edges, f.names[e.ID]+" "+string(e.Relationship))
		}
		out.category = head.Meta.Category
		return out
	}

	var got [2]raceOutcome
	t.Run("remember", func(t *testing.T) {
		f := setUp(t)
		res, err := f.ws.Remember(context.Background(), RememberInput{Text: "Run the tests with go test ./...", Supersedes: f.v1.Meta.ID,
			RelatesTo: []string{f.tgt.Meta.ID}})
		if err != nil {
			t.Fatal(err)
		}
		got[0] = outcome(t, f, res.Memory.ID)
	})
	t.Run("capture", func(t *testing.T) {
		f := setUp(t)
		before := testHookBeforeWrite
		testHookBeforeWrite = nil
		reply := fmt.Sprintf(`{"memories": [{"content": "Run the tests with go test ./...", "scope": "repo", "category": "project-conventions", "supersedes": %q, "related": [{"id": %q, "relationship": "relates-to"}]}]}`,
			f.v1.Meta.ID, f.tgt.Meta.ID)
		store := &racedStore{MemoryStore: f.ws.store, before: before}
		p, err := memcapture.NewPipeline(scriptedLLM(reply), store, memcapture.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		p.Enqueue(memcapture.TriggerEvent{Kind: memcore.TriggerCadence, SessionID: "s", Messages: []memcore.Message{
			{Role: memcore.RoleUser, Content: "We run the tests with go test ./... now."}}})
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := p.Stats(); s.MemoriesWritten != 1 || s.Conflicts != 1 {
			t.Fatalf("capture stats %+v; want one memory written after one conflict", s)
		}
		all, err := f.ws.store.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		head, _ := memcore.NewGraph(all).Head(f.v1.Meta.ID)
		got[1] = outcome(t, f, head.Meta.ID)
	})
	want := raceOutcome{
		chain:    []string{"v1 v1", "theirs v2", "mine v3"},
		edges:    []string{"old link relates-to", "their link refines", "our link relates-to"},
		category: memcore.CategoryProjectConventions,
	}
	for i, path := range []string{"remember", "capture"} {
		if fmt.Sprint(got[i]) != fmt.Sprint(want) {
			t.Errorf("%s left %+v, want %+v", path, got[i], want)
		}
	}
}
