package memcore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// bothStores runs f against a MemStore and a FileStore.
func bothStores(t *testing.T, f func(t *testing.T, s MemoryStore)) {
	t.Run("MemStore", func(t *testing.T) { f(t, NewMemStore()) })
	t.Run("FileStore", func(t *testing.T) { f(t, newTestStore(t).FileStore) })
}

// next returns the next version of pred in scope, with content.
func next(pred *MemoryFile, scope Scope, content string) *MemoryFile {
	m := NewVersion(pred, "session-2", TriggerManual)
	m.Meta.Scope = scope
	m.Content = content
	return m
}

// conflictOf returns err's *ConflictError, failing the test unless err
// wraps ErrConflict and has one.
func conflictOf(t *testing.T, err error) *ConflictError {
	t.Helper()
	var ce *ConflictError
	if !errors.Is(err, ErrConflict) || !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *ConflictError wrapping ErrConflict", err)
	}
	return ce
}

// A second successor of one version is refused, in either scope, with the
// successor and the chain's head named, and nothing is stored; writing
// after the head then works.
func TestWriteSecondSuccessorIsConflict(t *testing.T) {
	bothStores(t, func(t *testing.T, s MemoryStore) {
		ctx := context.Background()
		v1 := memory(ScopeRepo, 0, "Indent with tabs.")
		v2 := next(v1, ScopeRepo, "Indent with four spaces.")
		for _, m := range []*MemoryFile{v1, v2} {
			if err := s.Write(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		for _, scope := range Scopes() {
			fork := next(v1, scope, "Indent with two spaces, in "+string(scope))
			err := s.Write(ctx, fork)
			ce := conflictOf(t, err)
			if ce.ID != fork.Meta.ID || ce.Predecessor != v1.Meta.ID || ce.Successor.Meta.ID != v2.Meta.ID || ce.Head.Meta.ID != v2.Meta.ID {
				t.Errorf("%s: conflict %+v; want id %s, predecessor %s, successor and head %s", scope, ce, fork.Meta.ID, v1.Meta.ID, v2.Meta.ID)
			}
			if !strings.Contains(err.Error(), v2.Meta.ID) {
				t.Errorf("%s: the message does not name the successor: %v", scope, err)
			}
			if _, err := s.Read(ctx, fork.Meta.ID); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: the refused memory was stored: %v", scope, err)
			}
		}

		// The chain grew: the conflict names the successor and the head.
		v3 := next(v2, ScopeUser, "Indent with four spaces; tabs in Makefiles.")
		if err := s.Write(ctx, v3); err != nil {
			t.Fatalf("superseding the head: %v", err)
		}
		ce := conflictOf(t, s.Write(ctx, next(v1, ScopeRepo, "late")))
		if ce.Successor.Meta.ID != v2.Meta.ID || ce.Head.Meta.ID != v3.Meta.ID || ce.Head.Content != v3.Content {
			t.Errorf("conflict names successor %s and head %s; want %s and %s", ce.Successor.Meta.ID, ce.Head.Meta.ID, v2.Meta.ID, v3.Meta.ID)
		}
		// The loser builds on the head it was given.
		retry := NewVersion(ce.Head, "session-3", TriggerManual)
		retry.Content = "late, after the winner"
		if err := s.Write(ctx, retry); err != nil {
			t.Fatalf("writing after the conflict's head: %v", err)
		}
		g := NewGraph(mustList(t, s))
		if got := ids(g.Chain(v1.Meta.ID)); !slices.Equal(got, []string{v1.Meta.ID, v2.Meta.ID, v3.Meta.ID, retry.Meta.ID}) || len(g.Forks()) != 0 {
			t.Errorf("chain %v, forks %+v; want a line of 4", got, g.Forks())
		}

		// A duplicate id is ErrAlreadyExists, even when it also supersedes.
		if err := s.Write(ctx, v2.Clone()); !errors.Is(err, ErrAlreadyExists) || errors.Is(err, ErrConflict) {
			t.Errorf("rewriting the successor itself = %v, want ErrAlreadyExists", err)
		}

		// Versions superseding an id that is not stored: one successor too.
		missing := NewMemoryID()
		orphan := memory(ScopeRepo, 9, "an orphan")
		orphan.Meta.Supersedes, orphan.Meta.Version = &missing, 2
		if err := s.Write(ctx, orphan); err != nil {
			t.Fatal(err)
		}
		other := orphan.Clone()
		other.Meta.ID = NewMemoryID()
		if ce := conflictOf(t, s.Write(ctx, other)); ce.Predecessor != missing || ce.Successor.Meta.ID != orphan.Meta.ID || ce.Head.Meta.ID != orphan.Meta.ID {
			t.Errorf("conflict %+v; want predecessor %s, successor and head %s", ce, missing, orphan.Meta.ID)
		}
	})
}

// Many goroutines supersede one version at the same moment, round after
// round: exactly one succeeds, every other gets a *ConflictError naming it,
// and the chain stays a line. FileStore is also run with two stores over
// the same folders, which share nothing in memory.
func TestConcurrentSupersedes(t *testing.T) {
	const writers, rounds = 8, 10
	run := func(t *testing.T, stores []MemoryStore) {
		ctx := context.Background()
		head := memory(ScopeRepo, 0, "version 1")
		if err := stores[0].Write(ctx, head); err != nil {
			t.Fatal(err)
		}
		for r := 0; r < rounds; r++ {
			start := make(chan struct{})
			errs := make([]error, writers)
			ms := make([]*MemoryFile, writers)
			var wg sync.WaitGroup
			for w := range writers {
				ms[w] = next(head, Scopes()[w%2], fmt.Sprintf("round %d, writer %d", r, w))
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs[w] = stores[w%len(stores)].Write(ctx, ms[w])
				}()
			}
			close(start)
			wg.Wait()
			var winner *MemoryFile
			for w, err := range errs {
				if err == nil {
					if winner != nil {
						t.Fatalf("round %d: writers %s and %s both superseded %s", r, winner.Meta.ID, ms[w].Meta.ID, head.Meta.ID)
					}
					winner = ms[w]
				}
			}
			if winner == nil {
				t.Fatalf("round %d: no writer succeeded: %v", r, errs)
			}
			for w, err := range errs {
				if err == nil {
					continue
				}
				if ce := conflictOf(t, err); ce.Successor.Meta.ID != winner.Meta.ID || ce.Head.Meta.ID != winner.Meta.ID || ce.Predecessor != head.Meta.ID {
					t.Errorf("round %d, writer %d: conflict %+v does not name the winner %s", r, w, ce, winner.Meta.ID)
				}
			}
			head = winner
		}
		g := NewGraph(mustList(t, stores[0]))
		if g.Len() != rounds+1 || len(g.Chain(head.Meta.ID)) != rounds+1 || len(g.Forks()) != 0 {
			t.Errorf("%d memories, a chain of %d, forks %+v; want a line of %d", g.Len(), len(g.Chain(head.Meta.ID)), g.Forks(), rounds+1)
		}
	}
	t.Run("MemStore", func(t *testing.T) { run(t, []MemoryStore{NewMemStore()}) })
	t.Run("FileStore", func(t *testing.T) { run(t, []MemoryStore{newTestStore(t).FileStore}) })
	t.Run("two FileStores over the same folders", func(t *testing.T) {
		ts := newTestStore(t)
		other, err := NewFileStore(ts.repo, ts.user, FileStoreConfig{})
		if err != nil {
			t.Fatal(err)
		}
		run(t, []MemoryStore{ts.FileStore, other})
	})
}

// The lock files of superseding writes live in a .locks folder of each
// memory folder, git-ignored, with the store's permissions, and are
// neither memories nor problems.
func TestFileStoreLockFolder(t *testing.T) {
	ctx := context.Background()
	ts := newTestStore(t)
	v1 := memory(ScopeRepo, 0, "first")
	ts.mustWrite(t, v1)
	for _, dir := range []string{ts.repo, ts.user} {
		if _, err := os.Lstat(filepath.Join(dir, lockDirName)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a write that supersedes nothing made %s/.locks: %v", dir, err)
		}
	}
	ts.mustWrite(t, next(v1, ScopeRepo, "second"))
	for _, dir := range []string{ts.repo, ts.user} {
		ld := filepath.Join(dir, lockDirName)
		info, err := os.Lstat(ld)
		if err != nil || !info.IsDir() {
			t.Fatalf("%s: %v, %v; want a folder", ld, info, err)
		}
		ign, err := os.ReadFile(filepath.Join(ld, ".gitignore"))
		if err != nil || !slices.Contains(strings.Split(string(ign), "\n"), "*") {
			t.Errorf("%s/.gitignore = %q, %v; want a line *", ld, ign, err)
		}
		if runtime.GOOS == "windows" {
			continue
		}
		if info.Mode().Perm() != dirPerm {
			t.Errorf("%s is %v, want %v", ld, info.Mode().Perm(), os.FileMode(dirPerm))
		}
		entries, err := os.ReadDir(ld)
		if err != nil || len(entries) != 2 {
			t.Errorf("%s holds %v, %v; want .gitignore and the lock file", ld, entries, err)
		}
		for _, e := range entries {
			if fi, err := e.Info(); err != nil || fi.Mode().Perm() != filePerm {
				t.Errorf("%s/%s: %v, %v; want mode %v", ld, e.Name(), fi.Mode(), err, os.FileMode(filePerm))
			}
		}
	}
	if ms := ts.mustList(t); len(ms) != 2 {
		t.Errorf("List = %d memories, want 2", len(ms))
	}
	if probs, err := ts.Problems(ctx); err != nil || len(probs) != 0 {
		t.Errorf("Problems = %+v, %v; want none", probs, err)
	}
}

// A .locks that is a symbolic link is never followed: a write that
// supersedes into that folder fails and touches nothing where the link
// points, a write that supersedes nothing is unaffected, a write into the
// other scope goes ahead (a write into that folder could not lock either),
// and Problems names it.
func TestFileStoreLockFolderSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	ctx := context.Background()
	ts := newTestStore(t)
	elsewhere := filepath.Join(ts.root, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(ts.repo, lockDirName)); err != nil {
		t.Fatal(err)
	}
	v1 := memory(ScopeRepo, 0, "first")
	ts.mustWrite(t, v1) // supersedes nothing: no lock needed
	err := ts.Write(ctx, next(v1, ScopeRepo, "second"))
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), lockDirName) {
		t.Errorf("superseding into the folder with a linked .locks = %v, want ErrMalformed naming .locks", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the link was followed: %s holds %v", elsewhere, entries)
	}
	if err := ts.Write(ctx, next(v1, ScopeUser, "second, in the user scope")); err != nil {
		t.Errorf("superseding into the other scope: %v", err)
	}
	probs, err := ts.Problems(ctx)
	if err != nil || len(probs) != 1 || probs[0].Path != filepath.Join(ts.repo, lockDirName) || !errors.Is(probs[0].Err, ErrMalformed) {
		t.Errorf("Problems = %+v, %v; want the linked .locks", probs, err)
	}
}

// A superseding write waits for the lock, and gives up when its context
// ends.
func TestFileStoreSupersedeWaitsForTheLock(t *testing.T) {
	ts := newTestStore(t)
	v1 := memory(ScopeRepo, 0, "first")
	ts.mustWrite(t, v1)
	ld, err := prepareLockDir(ts.repo)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := lockFolder(ld)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	v2 := next(v1, ScopeRepo, "second")
	if err := ts.Write(ctx, v2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Write while another holds the lock = %v, want context.DeadlineExceeded", err)
	}
	unlock()
	if err := ts.Write(context.Background(), v2); err != nil {
		t.Errorf("Write once the lock is free: %v", err)
	}
}

// The folder lock of the system: one holder at a time (also within one
// process), released by unlock, and a lock file that is a symbolic link is
// refused, not followed.
func TestTryLock(t *testing.T) {
	for name, lock := range map[string]func(string) (func(), error){"system": tryLock, "exclusive": tryLockExclusive} {
		t.Run(name, func(t *testing.T) {
			ld, err := prepareLockDir(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			unlock, err := lock(ld)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lock(ld); !errors.Is(err, errLockBusy) {
				t.Errorf("a second lock while held = %v, want busy", err)
			}
			unlock()
			unlock2, err := lock(ld)
			if err != nil {
				t.Fatalf("lock after unlock: %v", err)
			}
			unlock2()
		})
	}
	if runtime.GOOS == "windows" {
		return
	}
	t.Run("symbolic link", func(t *testing.T) {
		dir := t.TempDir()
		ld, err := prepareLockDir(filepath.Join(dir, "memory"))
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, "target")
		for _, name := range []string{flockName, exclusiveName} {
			if err := os.Symlink(target, filepath.Join(ld, name)); err != nil {
				t.Fatal(err)
			}
		}
		if unlock, err := tryLock(ld); err == nil || errors.Is(err, errLockBusy) {
			if unlock != nil {
				unlock()
			}
			t.Errorf("tryLock through a linked lock file = %v, want an error", err)
		}
		if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the link was followed: %v", err)
		}
	})
}

// The exclusive-create lock takes over a lock file left by a holder that
// died once it is stale, and not before.
func TestTryLockExclusiveStale(t *testing.T) {
	ld, err := prepareLockDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tryLockExclusive(ld); err != nil { // a holder that dies holding it
		t.Fatal(err)
	}
	if _, err := tryLockExclusive(ld); !errors.Is(err, errLockBusy) {
		t.Fatalf("a fresh lock file = %v, want busy", err)
	}
	old := time.Now().Add(-staleLockAge - time.Second)
	if err := os.Chtimes(filepath.Join(ld, exclusiveName), old, old); err != nil {
		t.Fatal(err)
	}
	unlock, err := tryLockExclusive(ld)
	if err != nil {
		t.Fatalf("a stale lock file = %v, want it taken over", err)
	}
	unlock()
	if _, err := os.Lstat(filepath.Join(ld, exclusiveName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unlock left the lock file: %v", err)
	}
}
