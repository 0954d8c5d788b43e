//go:build linux

package live_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/live"
	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

// world is a repository's and a user's memory folders, a private barrier
// folder, a FileStore and the live view of the folders.
type world struct {
	t          *testing.T
	repo, user string
	barrier    string
	store      *memcore.FileStore
	f          *live.Folders
	// skips counts the reasons of the files check saw skipped.
	skips map[string]int
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, repo: filepath.Join(root, "repo", ".forge", "memory"), user: filepath.Join(root, "home", ".forge", "memory"),
		barrier: filepath.Join(root, "run"), skips: map[string]int{}}
	if err := os.Mkdir(w.barrier, 0o700); err != nil {
		t.Fatal(err)
	}
	var err error
	if w.store, err = memcore.NewFileStore(w.repo, w.user, memcore.FileStoreConfig{}); err != nil {
		t.Fatal(err)
	}
	if w.f, err = live.Open(w.store, w.barrier, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.f.Close() })
	return w
}

// memory returns a new memory of scope, created at minute i.
func memory(scope memcore.Scope, i int, content string) *memcore.MemoryFile {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	return &memcore.MemoryFile{Meta: memcore.MemoryMeta{ID: memcore.NewMemoryID(), CreatedAt: at, UpdatedAt: at, Version: 1,
		Scope: scope, Category: memcore.CategoryPatterns, Trigger: memcore.TriggerManual}, Content: content}
}

func (w *world) dir(scope memcore.Scope) string {
	if scope == memcore.ScopeUser {
		return w.user
	}
	return w.repo
}

func (w *world) path(m *memcore.MemoryFile) string {
	return filepath.Join(w.dir(m.Meta.Scope), m.Meta.ID+".md")
}

// check syncs and compares List with a new FileStore's List.
func (w *world) check(step string) {
	w.t.Helper()
	if _, err := w.f.Sync(context.Background()); err != nil {
		w.t.Fatalf("%s: Sync: %v", step, err)
	}
	got, err := w.f.List(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	fresh, err := memcore.NewFileStore(w.repo, w.user, memcore.FileStoreConfig{})
	if err != nil {
		w.t.Fatal(err)
	}
	want, err := fresh.List(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		w.t.Fatalf("%s: List differs from a new FileStore's:\n got %d: %s\nwant %d: %s", step, len(got), ids(got), len(want), ids(want))
	}
	// Skipped names the memory files a new FileStore's Problems says List
	// skips, for the same reason.
	probs, err := fresh.Problems(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	var wantSkipped []string
	for _, p := range probs {
		dir, base := filepath.Split(p.Path)
		id, _ := strings.CutSuffix(base, ".md")
		if !p.Served && memcore.ValidateID(id) == nil && (filepath.Clean(dir) == w.repo || filepath.Clean(dir) == w.user) {
			wantSkipped = append(wantSkipped, p.Path+" "+skipKind(p.Err))
		}
	}
	var gotSkipped []string
	for _, p := range w.f.Skipped() {
		gotSkipped = append(gotSkipped, p.Path+" "+skipKind(p.Err))
		w.skips[skipKind(p.Err)]++
	}
	if !reflect.DeepEqual(gotSkipped, wantSkipped) {
		w.t.Fatalf("%s: Skipped differs from a new FileStore's Problems:\n got %q\nwant %q", step, gotSkipped, wantSkipped)
	}
}

// skipKind names the reason a file is skipped.
func skipKind(err error) string {
	for _, k := range []error{memcore.ErrTooLarge, memcore.ErrMergeConflict, memcore.ErrMalformed, memcore.ErrInvalidMemory} {
		if errors.Is(err, k) {
			return k.Error()
		}
	}
	return "other: " + err.Error()
}

func ids(ms []*memcore.MemoryFile) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%s %s %q; ", m.Meta.Scope, m.Meta.ID[:12], m.Content)
	}
	return b.String()
}

// After every kind of change — a write, a new version, a hand edit at the
// same size within the same clock tick, a deletion, a rename, a corrupt
// file, a link, a file in a sub-folder — List equals a new FileStore's.
func TestFoldersAgreeWithANewFileStore(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	var written []*memcore.MemoryFile
	pick := func() *memcore.MemoryFile { return written[rng.IntN(len(written))] }
	ops := []struct {
		name string
		do   func(i int)
	}{
		{"write", func(i int) {
			m := memory(memcore.Scopes()[i%2], i%7, fmt.Sprintf("memory %d", i)) // ties of created_at
			if err := w.store.Write(ctx, m); err != nil {
				t.Fatal(err)
			}
			written = append(written, m)
		}},
		{"new version", func(i int) {
			heads := memcore.NewGraph(written).Heads()
			head := heads[rng.IntN(len(heads))]
			v := memcore.NewVersion(head, "s", memcore.TriggerManual)
			v.Content = fmt.Sprintf("changed %d", i)
			if err := w.store.Write(ctx, v); err == nil {
				written = append(written, v)
			}
		}},
		{"hand edit, same size, same tick", func(i int) {
			m := pick()
			path := w.path(m)
			info, err := os.Stat(path)
			if err != nil {
				return
			}
			e := m.Clone()
			e.Content = strings.ToUpper(m.Content)
			data, _ := memcore.Serialize(e)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{"delete", func(int) { _ = os.Remove(w.path(pick())) }},
		{"rename away", func(int) { p := w.path(pick()); _ = os.Rename(p, p+".bak") }},
		{"corrupt", func(int) {
			_ = os.WriteFile(filepath.Join(w.repo, memcore.NewMemoryID()+".md"), []byte("---\nversion: [\n"), 0o600)
		}},
		{"link", func(int) {
			if m := pick(); m.Meta.Scope == memcore.ScopeUser {
				_ = os.Symlink(w.path(m), filepath.Join(w.repo, memcore.NewMemoryID()+".md"))
			}
		}},
		{"the same id in the other scope", func(int) {
			c := pick().Clone()
			c.Meta.Scope = memcore.ScopeUser
			if c.Meta.Scope == pick().Meta.Scope {
				c.Meta.Scope = memcore.ScopeRepo
			}
			c.Meta.Supersedes, c.Meta.Related = nil, nil
			data, err := memcore.Serialize(c)
			if err != nil {
				t.Fatal(err)
			}
			_ = os.WriteFile(w.path(c), data, 0o600)
		}},
		{"merge conflict", func(int) {
			path := w.path(pick())
			data, err := os.ReadFile(path)
			if err != nil {
				return
			}
			merged := strings.Replace(string(data), "\n---\n", "\n---\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feature\n", 1)
			_ = os.WriteFile(path, []byte(merged), 0o600)
		}},
		{"too large", func(int) {
			_ = os.WriteFile(w.path(pick()), []byte(strings.Repeat("x", memcore.MaxFileBytes+1)), 0o600)
		}},
		{"not a memory", func(i int) {
			_ = os.WriteFile(filepath.Join(w.repo, fmt.Sprintf("notes-%d.md", i)), []byte("notes"), 0o600)
			_ = os.MkdirAll(filepath.Join(w.repo, ".cache"), 0o750)
			_ = os.WriteFile(filepath.Join(w.repo, ".cache", memcore.NewMemoryID()+".md"), []byte("x"), 0o600)
		}},
	}
	for i := range 400 {
		op := ops[0]
		if len(written) > 3 {
			op = ops[rng.IntN(len(ops))]
		}
		op.do(i)
		w.check(fmt.Sprintf("step %d (%s)", i, op.name))
	}
	for _, k := range []error{memcore.ErrTooLarge, memcore.ErrMergeConflict, memcore.ErrMalformed} {
		if w.skips[k.Error()] == 0 {
			t.Errorf("no step left a file skipped for %v (skipped: %v): the comparison of Skipped means little", k, w.skips)
		}
	}
}

// A view opened over folders that hold files List skips names them from
// the start, and follows them as they are fixed and broken again; files
// not named <memory id>.md are not its business.
func TestSkippedFromTheStart(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	repo, user, barrier := filepath.Join(root, "repo"), filepath.Join(root, "user"), filepath.Join(root, "run")
	if err := os.Mkdir(barrier, 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := memcore.NewFileStore(repo, user, memcore.FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m := memory(memcore.ScopeRepo, 0, "Use tabs.")
	if err := store.Write(ctx, m); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(repo, m.Meta.ID+".md")
	clean, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	merged := strings.Replace(string(clean), "Use tabs.", "<<<<<<< HEAD\nUse tabs.\n=======\nUse spaces.\n>>>>>>> feature", 1)
	if err := os.WriteFile(path, []byte(merged), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "notes.md"), []byte("<<<<<<< HEAD\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := live.Open(store, barrier, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	skipped := func(step string, want ...string) {
		t.Helper()
		if _, err := f.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range f.Skipped() {
			if !errors.Is(p.Err, memcore.ErrMergeConflict) {
				t.Errorf("%s: %s skipped for %v, want a merge conflict", step, p.Path, p.Err)
			}
			got = append(got, p.Path)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Skipped = %q, want %q", step, got, want)
		}
	}
	skipped("opened", path)
	if err := os.WriteFile(path, clean, 0o600); err != nil {
		t.Fatal(err)
	}
	skipped("resolved")
	if err := os.WriteFile(path, []byte(merged), 0o600); err != nil {
		t.Fatal(err)
	}
	skipped("merged again", path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	skipped("removed")
}

// The generation changes when, and only when, what List serves changed.
func TestGenerationCountsChanges(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	g0, err := w.f.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := memory(memcore.ScopeRepo, 1, "the build runs make check")
	if err := w.store.Write(ctx, m); err != nil {
		t.Fatal(err)
	}
	g1, _ := w.f.Sync(ctx)
	if g1 == g0 {
		t.Errorf("a new memory left the generation at %d", g1)
	}
	now := time.Now()
	if err := os.Chtimes(w.path(m), now, now); err != nil { // an event, no change
		t.Fatal(err)
	}
	if g2, _ := w.f.Sync(ctx); g2 != g1 {
		t.Errorf("a touch changed the generation from %d to %d", g1, g2)
	}
}

// A memory written by another process is served by the next Sync, every
// time.
func TestSyncSeesAnotherProcessWrite(t *testing.T) {
	if os.Getenv("LIVE_TEST_WRITE") != "" {
		return
	}
	w := newWorld(t)
	ctx := context.Background()
	for i := range 20 {
		content := fmt.Sprintf("written by another process, round %d", i)
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWrite$")
		cmd.Env = append(os.Environ(), "LIVE_TEST_WRITE="+w.repo, "LIVE_TEST_USER="+w.user, "LIVE_TEST_CONTENT="+content)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("writer: %v\n%s", err, out)
		}
		if _, err := w.f.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		all, _ := w.f.List(ctx)
		if len(all) != i+1 || all[len(all)-1].Content != content {
			t.Fatalf("round %d: List after the writer exited = %s", i, ids(all))
		}
	}
}

// TestHelperWrite is the other process of TestSyncSeesAnotherProcessWrite.
func TestHelperWrite(t *testing.T) {
	repo := os.Getenv("LIVE_TEST_WRITE")
	if repo == "" {
		t.Skip("run by TestSyncSeesAnotherProcessWrite")
	}
	store, err := memcore.NewFileStore(repo, os.Getenv("LIVE_TEST_USER"), memcore.FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := store.List(context.Background())
	if err := store.Write(context.Background(), memory(memcore.ScopeRepo, len(all), os.Getenv("LIVE_TEST_CONTENT"))); err != nil {
		t.Fatal(err)
	}
}

// A memory folder or the barrier folder that goes away ends the view:
// Sync says so, for good.
func TestLostFolder(t *testing.T) {
	for _, gone := range []string{"repo", "user", "barrier"} {
		t.Run(gone, func(t *testing.T) {
			w := newWorld(t)
			dir := map[string]string{"repo": w.repo, "user": w.user, "barrier": w.barrier}[gone]
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := w.f.Sync(context.Background()); !errors.Is(err, live.ErrLost) {
					t.Fatalf("Sync after the %s folder was removed = %v, want ErrLost", gone, err)
				}
			}
		})
	}
}

// Changed gets a value when a memory file changes.
func TestChangedSignalsAWrite(t *testing.T) {
	w := newWorld(t)
	select { // nothing yet
	case <-w.f.Changed():
		t.Fatal("Changed before any change")
	default:
	}
	if err := w.store.Write(context.Background(), memory(memcore.ScopeUser, 0, "tabs")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.f.Changed():
	case <-time.After(time.Minute):
		t.Fatal("no signal on Changed within a minute of a write")
	}
}

// Shrinking says whether every change waiting is a memory file going away.
func TestShrinking(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	waitChanged := func(step string) {
		t.Helper()
		select {
		case <-w.f.Changed():
		case <-time.After(time.Minute):
			t.Fatalf("%s: no signal on Changed within a minute", step)
		}
	}
	sync := func() {
		t.Helper()
		if _, err := w.f.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		select { // what the Sync read needs no other signal
		case <-w.f.Changed():
		default:
		}
	}
	a, b := memory(memcore.ScopeRepo, 0, "tabs"), memory(memcore.ScopeUser, 1, "spaces")
	for _, m := range []*memcore.MemoryFile{a, b} {
		if err := w.store.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	waitChanged("two writes")
	if w.f.Shrinking() {
		t.Error("Shrinking after two memories were written")
	}
	sync()
	if w.f.Shrinking() {
		t.Error("Shrinking with nothing waiting")
	}
	if err := os.Remove(w.path(a)); err != nil {
		t.Fatal(err)
	}
	waitChanged("a removal")
	if !w.f.Shrinking() {
		t.Error("not Shrinking after a memory file was removed")
	}
	if err := w.store.Write(ctx, memory(memcore.ScopeRepo, 2, "a new one")); err != nil {
		t.Fatal(err)
	}
	waitChanged("a write after the removal")
	if w.f.Shrinking() {
		t.Error("Shrinking after a removal and a write")
	}
	sync()
	if err := os.Remove(w.path(b)); err != nil {
		t.Fatal(err)
	}
	waitChanged("another removal")
	if !w.f.Shrinking() {
		t.Error("not Shrinking after the Sync and another removal")
	}
}

// A Sync whose context ended returns its error; the next Sync still
// serves what changed.
func TestSyncCancelled(t *testing.T) {
	w := newWorld(t)
	if err := w.store.Write(context.Background(), memory(memcore.ScopeRepo, 0, "kept for the next Sync")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.f.Sync(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sync with a cancelled context = %v", err)
	}
	w.check("after a cancelled Sync")
}
