//go:build linux

package live

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"
)

// When the system's event queue overflows, the barriers whose events may
// have been dropped are released, and the next Sync reads both folders in
// full, seeing what no event announced.
func TestOverflowReadsEverythingAgain(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run")
	if err := os.Mkdir(run, 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := memcore.NewFileStore(filepath.Join(root, "repo"), filepath.Join(root, "user"), memcore.FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(store, run, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	gen, err := f.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// A barrier whose event never comes (dropped with the overflow).
	seq := f.issued.Add(1)
	waited := make(chan error, 1)
	go func() { waited <- f.await(ctx, seq) }()
	// A memory that no event announces: written behind the watcher's
	// back, as if its event had been dropped.
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	m := &memcore.MemoryFile{Meta: memcore.MemoryMeta{ID: memcore.NewMemoryID(), CreatedAt: at, UpdatedAt: at, Version: 1,
		Scope: memcore.ScopeRepo, Category: memcore.CategoryPatterns, Trigger: memcore.TriggerManual}, Content: "unannounced"}
	if err := f.w.Remove(store.Dir(memcore.ScopeRepo)); err != nil {
		t.Fatal(err)
	}
	if err := store.Write(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := f.w.Add(store.Dir(memcore.ScopeRepo)); err != nil {
		t.Fatal(err)
	}
	f.handleError(fsnotify.ErrEventOverflow)
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("await after the overflow = %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a barrier waiting when the queue overflowed was not released")
	}
	got, err := f.Sync(ctx)
	if err != nil || got == gen {
		t.Fatalf("Sync after the overflow = %d, %v; want a new generation", got, err)
	}
	all, _ := f.List(ctx)
	if len(all) != 1 || all[0].Content != "unannounced" {
		t.Errorf("List after the overflow = %v", all)
	}
}
