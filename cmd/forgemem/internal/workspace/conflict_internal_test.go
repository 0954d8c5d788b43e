package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

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
