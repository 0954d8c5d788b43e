package memcore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// syncBuffer collects log output written from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testStore is a FileStore over root/repo and root/user, logging at debug
// level into logs.
type testStore struct {
	*FileStore
	root, repo, user string
	logs             *syncBuffer
}

func newTestStore(t *testing.T) *testStore {
	t.Helper()
	root := t.TempDir()
	ts := &testStore{root: root, repo: filepath.Join(root, "repo"), user: filepath.Join(root, "user"), logs: new(syncBuffer)}
	log := zerolog.New(ts.logs).Level(zerolog.DebugLevel)
	s, err := NewFileStore(ts.repo, ts.user, FileStoreConfig{Logger: log})
	if err != nil {
		t.Fatalf("NewFileStore: %v", err)
	}
	ts.FileStore = s
	return ts
}

// memory returns a valid memory with a new id in scope, created at
// t0 + i minutes.
func memory(scope Scope, i int, content string) *MemoryFile {
	m := sample(NewMemoryID())
	m.Meta.Scope = scope
	m.Meta.CreatedAt = t0.Add(time.Duration(i) * time.Minute)
	m.Content = content
	return m
}

func (ts *testStore) mustWrite(t *testing.T, ms ...*MemoryFile) {
	t.Helper()
	for _, m := range ms {
		if err := ts.Write(context.Background(), m); err != nil {
			t.Fatalf("Write %s: %v", m.Meta.ID, err)
		}
	}
}

func (ts *testStore) mustList(t *testing.T) []*MemoryFile {
	t.Helper()
	ms, err := ts.List(context.Background())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return ms
}

// snapshot is every file and folder under root with its contents (folders:
// "/"), to prove that nothing was touched.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			out[rel] = "/"
			return nil
		}
		b, err := os.ReadFile(path)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", root, err)
	}
	return out
}

func ids(ms []*MemoryFile) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Meta.ID
	}
	return out
}

func TestFileStoreWriteReadList(t *testing.T) {
	ts := newTestStore(t)
	ctx := context.Background()
	// Written out of order; two share a created_at, so the id breaks the tie.
	r1 := memory(ScopeRepo, 3, "repo one")
	r2 := memory(ScopeRepo, 1, "repo two")
	u1 := memory(ScopeUser, 2, "user one")
	u2 := memory(ScopeUser, 3, "user two")
	ts.mustWrite(t, r1, r2, u1, u2)

	for _, m := range []*MemoryFile{r1, r2, u1, u2} {
		got, err := ts.Read(ctx, m.Meta.ID)
		if err != nil {
			t.Fatalf("Read %s: %v", m.Meta.ID, err)
		}
		if !equalMemory(got, m) {
			t.Errorf("Read = %+v, want %+v", got, m)
		}
		path := filepath.Join(ts.Dir(m.Meta.Scope), m.Meta.ID+".md")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("the file is not at %s: %v", path, err)
		}
		if want := mustSerialize(t, m); !bytes.Equal(data, want) {
			t.Errorf("%s =\n%s\nwant\n%s", path, data, want)
		}
	}

	want := []*MemoryFile{r2, u1, r1, u2}
	if r1.Meta.ID > u2.Meta.ID {
		want = []*MemoryFile{r2, u1, u2, r1}
	}
	if got := ts.mustList(t); !slices.Equal(ids(got), ids(want)) {
		t.Errorf("List order = %v, want %v (oldest first, then by id)", ids(got), ids(want))
	}
	repo, err := ts.ListByScope(ctx, ScopeRepo)
	if err != nil || !slices.Equal(ids(repo), []string{r2.Meta.ID, r1.Meta.ID}) {
		t.Errorf("ListByScope(repo) = %v, %v", ids(repo), err)
	}
	user, err := ts.ListByScope(ctx, ScopeUser)
	if err != nil || !slices.Equal(ids(user), []string{u1.Meta.ID, u2.Meta.ID}) {
		t.Errorf("ListByScope(user) = %v, %v", ids(user), err)
	}
	if got := ts.Dir(ScopeRepo); got != ts.repo || !filepath.IsAbs(got) {
		t.Errorf("Dir(repo) = %q, want %q", got, ts.repo)
	}
	if got := ts.Dir("team"); got != "" {
		t.Errorf("Dir(team) = %q", got)
	}
}

func TestFileStoreReadNotFound(t *testing.T) {
	ts := newTestStore(t)
	ts.mustWrite(t, memory(ScopeUser, 0, "x"))
	_, err := ts.Read(context.Background(), idA)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("Read of a missing id = %v, want ErrNotFound", err)
	}
}

func TestFileStoreEmptyList(t *testing.T) {
	ts := newTestStore(t)
	ms, err := ts.List(context.Background())
	if err != nil || len(ms) != 0 {
		t.Errorf("List of an empty store = %v, %v", ms, err)
	}
}

// A corrupt or half-edited file is skipped with a log line
// naming it, and the others are unaffected.
func TestFileStoreSkipsCorruptFiles(t *testing.T) {
	ts := newTestStore(t)
	good := []*MemoryFile{memory(ScopeRepo, 0, "good repo"), memory(ScopeUser, 1, "good user")}
	ts.mustWrite(t, good...)

	full := string(mustSerialize(t, sample(idA)))
	corrupt := map[string]string{
		"half-written":         full[:len(full)/2],
		"cut in the front":     full[:40],
		"empty":                "",
		"no front matter":      "just notes\n",
		"bad YAML":             strings.Replace(full, "version: 1", "version: [", 1),
		"wrong type":           strings.Replace(full, "version: 1", "version: abc", 1),
		"breaks the schema":    strings.Replace(full, "category: coding-preferences", "category: gossip", 1),
		"binary junk":          "\x00\xff\xfe\x01---\x00",
		"unclosed":             strings.Replace(full, "---\n\n", "", 1),
		"blank content":        strings.Replace(full, "Prefers table-driven tests.", "   ", 1),
		"invalid UTF-8 body":   strings.Replace(full, "Prefers", "Pr\xffefers", 1),
		"front matter deleted": "---\n---\n\nbody\n",
	}
	var paths, badIDs, names []string
	for name, content := range corrupt {
		id := NewMemoryID()
		// Keep the file's id consistent with its name where it has one, so
		// that it is the corruption that makes it fail.
		content = strings.ReplaceAll(content, idA, id)
		path := filepath.Join(ts.repo, id+".md")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
		badIDs = append(badIDs, id)
		names = append(names, name)
	}

	got := ts.mustList(t)
	if !slices.Equal(ids(got), ids(good)) {
		t.Errorf("List = %v, want only the good ones %v", ids(got), ids(good))
	}
	logs := ts.logs.String()
	for i, p := range paths {
		if !strings.Contains(logs, p) {
			t.Errorf("%s: no log line names %s; logs:\n%s", names[i], p, logs)
		}
	}
	if n := strings.Count(logs, `"level":"warn"`); n != len(paths) {
		t.Errorf("%d warnings for %d corrupt files; logs:\n%s", n, len(paths), logs)
	}
	for i, id := range badIDs {
		_, err := ts.Read(context.Background(), id)
		if err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("%s: Read = %v, want an error saying why", names[i], err)
			continue
		}
		if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrInvalidMemory) {
			t.Errorf("%s: Read error %q is neither ErrMalformed nor ErrInvalidMemory", names[i], err)
		}
		if !strings.Contains(err.Error(), paths[i]) {
			t.Errorf("%s: Read error %q does not name the file", names[i], err)
		}
	}
	for _, m := range good {
		if r, err := ts.Read(context.Background(), m.Meta.ID); err != nil || !equalMemory(r, m) {
			t.Errorf("Read of a good memory next to corrupt ones = %v, %v", r, err)
		}
	}
}

// Ids with '/', '..', NUL or the wrong shape are
// ErrInvalidID and nothing is touched.
func TestFileStoreInvalidIDs(t *testing.T) {
	bad := []string{
		"", "../x", "mem_../../etc/passwd", "/", "\\", "..", ".", "x\x00y",
		"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633\x00",
		"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633/",
		"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633\\",
		"mem_../../../../../../../../../etc/passw",
		"../repo/mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b",
		"mem_1B4E28BA-2FA1-4D3B-A3F5-EF19B5A7633B",
		"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a763", "mem_1b4e28ba", "README",
		"/tmp/mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b",
	}
	ts := newTestStore(t)
	ts.mustWrite(t, memory(ScopeRepo, 0, "existing"))
	before := snapshot(t, ts.root)
	ctx := context.Background()
	for _, id := range bad {
		for _, scope := range Scopes() {
			m := sample(idA)
			m.Meta.ID = id
			m.Meta.Scope = scope
			if err := ts.Write(ctx, m); !errors.Is(err, ErrInvalidID) {
				t.Errorf("Write(id %q) = %v, want ErrInvalidID", id, err)
			}
		}
		if _, err := ts.Read(ctx, id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Read(%q) = %v, want ErrInvalidID", id, err)
		}
	}
	if after := snapshot(t, ts.root); !reflect.DeepEqual(after, before) {
		t.Errorf("invalid ids touched the folders:\nbefore %v\nafter  %v", keys(before), keys(after))
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestFileStoreWriteInvalidMemory(t *testing.T) {
	ts := newTestStore(t)
	before := snapshot(t, ts.root)
	m := sample(idA)
	m.Content = " \n"
	if err := ts.Write(context.Background(), m); !errors.Is(err, ErrInvalidMemory) {
		t.Errorf("Write of blank content = %v, want ErrInvalidMemory", err)
	}
	m = sample(idA)
	m.Meta.Scope = "team"
	if err := ts.Write(context.Background(), m); !errors.Is(err, ErrInvalidMemory) {
		t.Errorf("Write with scope team = %v, want ErrInvalidMemory", err)
	}
	if err := ts.Write(context.Background(), nil); !errors.Is(err, ErrInvalidMemory) {
		t.Errorf("Write(nil) = %v, want ErrInvalidMemory", err)
	}
	if after := snapshot(t, ts.root); !reflect.DeepEqual(after, before) {
		t.Errorf("a refused write touched the folders: %v", keys(after))
	}
}

// A duplicate id is ErrAlreadyExists and the original is
// byte-identical — in its own folder, in the other scope's folder, from
// another store over the same folders, and from concurrent writers.
func TestFileStoreDuplicateID(t *testing.T) {
	ctx := context.Background()
	for _, scope := range Scopes() {
		t.Run(string(scope), func(t *testing.T) {
			ts := newTestStore(t)
			orig := memory(scope, 0, "the original")
			ts.mustWrite(t, orig)
			path := filepath.Join(ts.Dir(scope), orig.Meta.ID+".md")
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, ts.root)

			other := ScopeUser
			if scope == ScopeUser {
				other = ScopeRepo
			}
			second, err := NewFileStore(ts.repo, ts.user, FileStoreConfig{})
			if err != nil {
				t.Fatal(err)
			}
			for name, try := range map[string]struct {
				store MemoryStore
				scope Scope
			}{
				"same folder":             {ts, scope},
				"other scope's folder":    {ts, other},
				"second store, same":      {second, scope},
				"second store, other one": {second, other},
			} {
				dup := orig.Clone()
				dup.Meta.Scope = try.scope
				dup.Content = "an impostor that must not win"
				if err := try.store.Write(ctx, dup); !errors.Is(err, ErrAlreadyExists) {
					t.Errorf("%s: Write of a duplicate = %v, want ErrAlreadyExists", name, err)
				}
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
				t.Errorf("the original changed:\n%s", got)
			}
			if after := snapshot(t, ts.root); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused duplicate left files behind: %v", keys(after))
			}
			if r, err := ts.Read(ctx, orig.Meta.ID); err != nil || r.Content != "the original" {
				t.Errorf("Read after duplicates = %+v, %v", r, err)
			}
		})
	}

	t.Run("hand-made file in the other folder", func(t *testing.T) {
		ts := newTestStore(t)
		m := memory(ScopeUser, 0, "by hand")
		if err := os.WriteFile(filepath.Join(ts.user, m.Meta.ID+".md"), mustSerialize(t, m), 0o600); err != nil {
			t.Fatal(err)
		}
		dup := m.Clone()
		dup.Meta.Scope = ScopeRepo
		if err := ts.Write(ctx, dup); !errors.Is(err, ErrAlreadyExists) {
			t.Errorf("Write = %v, want ErrAlreadyExists", err)
		}
		if _, err := os.Stat(filepath.Join(ts.repo, m.Meta.ID+".md")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a repo copy was written: %v", err)
		}
	})

	t.Run("concurrent writers of one id", func(t *testing.T) {
		ts := newTestStore(t)
		second, err := NewFileStore(ts.repo, ts.user, FileStoreConfig{})
		if err != nil {
			t.Fatal(err)
		}
		id := NewMemoryID()
		const writers = 16
		errs := make(chan error, writers)
		var wg sync.WaitGroup
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m := sample(id)
				m.Meta.Scope = Scopes()[i%2]
				m.Content = fmt.Sprintf("writer %d", i)
				store := MemoryStore(ts)
				if i%4 >= 2 {
					store = second
				}
				errs <- store.Write(ctx, m)
			}()
		}
		wg.Wait()
		close(errs)
		wins := 0
		for err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, ErrAlreadyExists):
				t.Errorf("Write = %v, want nil or ErrAlreadyExists", err)
			}
		}
		if wins != 1 {
			t.Errorf("%d writers succeeded, want exactly 1", wins)
		}
		if ms := ts.mustList(t); len(ms) != 1 || !strings.HasPrefix(ms[0].Content, "writer ") {
			t.Errorf("List = %+v, want the one winner", ms)
		}
	})
}

func TestFileStorePermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix permission bits")
	}
	// Work out the umask's effect from a probe folder instead of assuming it.
	allowed := umaskAllowed(t)

	root := t.TempDir()
	repo, user := filepath.Join(root, "a", "repo"), filepath.Join(root, "b", "c", "user")
	s, err := NewFileStore(repo, user, FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m := memory(ScopeUser, 0, "private")
	if err := s.Write(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{repo, user, filepath.Join(root, "b", "c")} {
		info, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := info.Mode().Perm(), fs.FileMode(0o750)&allowed; got != want {
			t.Errorf("%s has mode %v, want %v", dir, got, want)
		}
	}
	info, err := os.Stat(filepath.Join(user, m.Meta.ID+".md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != 0o600 {
		t.Errorf("memory file has mode %v, want 0600", got)
	}
	// Removing the folder makes Write create it again, 0750 as well.
	if err := os.RemoveAll(repo); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), memory(ScopeRepo, 1, "x")); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(repo); err != nil || info.Mode().Perm() != 0o750&allowed {
		t.Errorf("recreated folder: %v, %v", info, err)
	}
}

// The parse cache must not serve stale data: a hand edit (new content, new
// modification time) is seen by the next List and Read.
func TestFileStoreSeesHandEdits(t *testing.T) {
	ts := newTestStore(t)
	ctx := context.Background()
	m := memory(ScopeRepo, 0, "original text")
	ts.mustWrite(t, m)
	path := filepath.Join(ts.repo, m.Meta.ID+".md")
	if got := ts.mustList(t); len(got) != 1 || got[0].Content != "original text" {
		t.Fatalf("List = %+v", got)
	}
	if _, err := ts.Read(ctx, m.Meta.ID); err != nil {
		t.Fatal(err)
	}

	edit := func(content string, mtime time.Time) {
		t.Helper()
		e := m.Clone()
		e.Content = content
		if err := os.WriteFile(path, mustSerialize(t, e), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want string) {
		t.Helper()
		got := ts.mustList(t)
		if len(got) != 1 || got[0].Content != want {
			t.Errorf("List after the edit = %+v, want content %q", got, want)
		}
		r, err := ts.Read(ctx, m.Meta.ID)
		if err != nil || r.Content != want {
			t.Errorf("Read after the edit = %+v, %v, want content %q", r, err, want)
		}
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	edit("a longer, edited text", base)
	check("a longer, edited text")
	// Same size, different bytes: only the modification time tells.
	edit("A LONGER, EDITED TEXT", base.Add(2*time.Second))
	check("A LONGER, EDITED TEXT")
	// Edited into something unparsable: skipped, and Read says why.
	if err := os.WriteFile(path, []byte("---\nversion: [\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := ts.mustList(t); len(got) != 0 {
		t.Errorf("List served a stale copy of a now-corrupt file: %+v", got)
	}
	if _, err := ts.Read(ctx, m.Meta.ID); !errors.Is(err, ErrMalformed) {
		t.Errorf("Read of the now-corrupt file = %v, want ErrMalformed", err)
	}
}

func TestFileStoreDeletedFile(t *testing.T) {
	ts := newTestStore(t)
	a, b := memory(ScopeRepo, 0, "a"), memory(ScopeUser, 1, "b")
	ts.mustWrite(t, a, b)
	if got := ts.mustList(t); len(got) != 2 {
		t.Fatalf("List = %v", ids(got))
	}
	if err := os.Remove(filepath.Join(ts.repo, a.Meta.ID+".md")); err != nil {
		t.Fatal(err)
	}
	if got := ts.mustList(t); !slices.Equal(ids(got), []string{b.Meta.ID}) {
		t.Errorf("List after a delete = %v, want only %s", ids(got), b.Meta.ID)
	}
	if _, err := ts.Read(context.Background(), a.Meta.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read of a deleted file = %v, want ErrNotFound", err)
	}
}

func TestFileStoreIgnoresOtherFiles(t *testing.T) {
	ts := newTestStore(t)
	m := memory(ScopeRepo, 0, "real")
	ts.mustWrite(t, m)
	hidden := memory(ScopeRepo, 1, "inside .cache")
	write := func(rel, content string) {
		t.Helper()
		path := filepath.Join(ts.repo, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	valid := string(mustSerialize(t, hidden))
	write("README.md", "# Memories\n\nThese files are memories.\n")
	write("notes.txt", valid)
	write(".cache/"+hidden.Meta.ID+".md", valid)
	write("mem_bad.md", valid)
	write(strings.ToUpper(hidden.Meta.ID)+".md", valid)
	write(hidden.Meta.ID+".md.bak", valid)
	write(hidden.Meta.ID+".txt", valid)
	write(".tmp-"+hidden.Meta.ID+"-123", valid[:20])
	if err := os.Mkdir(filepath.Join(ts.repo, NewMemoryID()+".md"), 0o750); err != nil {
		t.Fatal(err)
	}
	got := ts.mustList(t)
	if !slices.Equal(ids(got), []string{m.Meta.ID}) {
		t.Errorf("List = %v, want only %s", ids(got), m.Meta.ID)
	}
	if strings.Contains(ts.logs.String(), `"level":"warn"`) {
		t.Errorf("files that are not memories were warned about:\n%s", ts.logs)
	}
	if _, err := ts.Read(context.Background(), hidden.Meta.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read found a memory outside the folder's top level: %v", err)
	}
}

func TestFileStoreSkipsMismatchedFiles(t *testing.T) {
	ts := newTestStore(t)
	good := memory(ScopeRepo, 0, "good")
	ts.mustWrite(t, good)

	other := memory(ScopeRepo, 1, "claims another id")
	wrongName := filepath.Join(ts.repo, NewMemoryID()+".md")
	wrongScope := memory(ScopeUser, 2, "a user memory in the repo folder")
	wrongScopePath := filepath.Join(ts.repo, wrongScope.Meta.ID+".md")
	for path, m := range map[string]*MemoryFile{wrongName: other, wrongScopePath: wrongScope} {
		if err := os.WriteFile(path, mustSerialize(t, m), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got := ts.mustList(t); !slices.Equal(ids(got), []string{good.Meta.ID}) {
		t.Errorf("List = %v, want only %s", ids(got), good.Meta.ID)
	}
	logs := ts.logs.String()
	for _, p := range []string{wrongName, wrongScopePath} {
		if !strings.Contains(logs, p) {
			t.Errorf("no log line names %s:\n%s", p, logs)
		}
	}
	for _, id := range []string{strings.TrimSuffix(filepath.Base(wrongName), ".md"), wrongScope.Meta.ID} {
		if _, err := ts.Read(context.Background(), id); !errors.Is(err, ErrInvalidMemory) {
			t.Errorf("Read(%s) = %v, want ErrInvalidMemory", id, err)
		}
	}
	if _, err := ts.Read(context.Background(), other.Meta.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read by the id inside a misnamed file = %v, want ErrNotFound", err)
	}
}

func TestFileStoreFolderDeleted(t *testing.T) {
	ts := newTestStore(t)
	ctx := context.Background()
	ts.mustWrite(t, memory(ScopeRepo, 0, "gone soon"), memory(ScopeUser, 1, "stays"))
	ts.mustList(t)
	if err := os.RemoveAll(ts.repo); err != nil {
		t.Fatal(err)
	}
	repo, err := ts.ListByScope(ctx, ScopeRepo)
	if err != nil || len(repo) != 0 {
		t.Errorf("ListByScope of a deleted folder = %v, %v; want empty, nil", ids(repo), err)
	}
	if all := ts.mustList(t); len(all) != 1 || all[0].Content != "stays" {
		t.Errorf("List = %+v", all)
	}
	m := memory(ScopeRepo, 2, "after the delete")
	ts.mustWrite(t, m)
	if _, err := os.Stat(filepath.Join(ts.repo, m.Meta.ID+".md")); err != nil {
		t.Errorf("Write did not recreate the folder: %v", err)
	}
	if all := ts.mustList(t); len(all) != 2 {
		t.Errorf("List = %v", ids(all))
	}
}

func TestNewFileStoreErrors(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "a")
	tests := map[string][2]string{
		"both empty":              {"", ""},
		"identical":               {a, a},
		"identical, other spells": {a, filepath.Join(root, "x", "..", "a") + string(filepath.Separator)},
	}
	for name, dirs := range tests {
		if s, err := NewFileStore(dirs[0], dirs[1], FileStoreConfig{}); err == nil {
			t.Errorf("%s: NewFileStore(%q, %q, FileStoreConfig{}) = %v, want an error", name, dirs[0], dirs[1], s)
		}
	}
	if _, err := os.Stat(a); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused NewFileStore created %s", a)
	}
	if runtime.GOOS != "windows" {
		if err := os.Mkdir(a, 0o750); err != nil {
			t.Fatal(err)
		}
		// A link above the folder (a link as the folder itself is refused
		// as unsafe, ErrUnsafeFolder).
		link := filepath.Join(root, "link")
		if err := os.Symlink(root, link); err != nil {
			t.Fatal(err)
		}
		if _, err := NewFileStore(a, filepath.Join(link, "a"), FileStoreConfig{}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewFileStore accepted one folder under two names (through a symbolic link): %v", err)
		}
	}
	// A file where a folder should be.
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFileStore(filepath.Join(file, "repo"), filepath.Join(root, "user"), FileStoreConfig{}); err == nil {
		t.Errorf("NewFileStore under a file succeeded")
	}
	// Relative folders are made absolute.
	t.Chdir(root)
	s, err := NewFileStore("rel-repo", "rel-user", FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "rel-repo"); s.Dir(ScopeRepo) != want {
		t.Errorf("Dir(repo) = %q, want %q", s.Dir(ScopeRepo), want)
	}
}

func TestFileStoreUnknownScope(t *testing.T) {
	ts := newTestStore(t)
	for _, scope := range []Scope{"", "team", "REPO"} {
		if _, err := ts.ListByScope(context.Background(), scope); !errors.Is(err, ErrUnknownScope) {
			t.Errorf("ListByScope(%q) = %v, want ErrUnknownScope", scope, err)
		}
	}
}

func TestFileStoreCancelledContext(t *testing.T) {
	ts := newTestStore(t)
	existing := memory(ScopeRepo, 0, "existing")
	ts.mustWrite(t, existing)
	before := snapshot(t, ts.root)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ts.Write(ctx, memory(ScopeRepo, 1, "x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Write = %v, want context.Canceled", err)
	}
	if _, err := ts.Read(ctx, existing.Meta.ID); !errors.Is(err, context.Canceled) {
		t.Errorf("Read = %v, want context.Canceled", err)
	}
	if _, err := ts.List(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("List = %v, want context.Canceled", err)
	}
	for _, scope := range Scopes() {
		if _, err := ts.ListByScope(ctx, scope); !errors.Is(err, context.Canceled) {
			t.Errorf("ListByScope(%s) = %v, want context.Canceled", scope, err)
		}
	}
	if after := snapshot(t, ts.root); !reflect.DeepEqual(after, before) {
		t.Errorf("a cancelled Write touched the folder: %v", keys(after))
	}
	deadline, stop := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer stop()
	if _, err := ts.List(deadline); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("List past its deadline = %v, want context.DeadlineExceeded", err)
	}
}

// A context cancelled while a Write is under way (after its temporary file
// is written) publishes nothing and leaves no temporary file.
func TestFileStoreCancelledDuringWrite(t *testing.T) {
	ts := newTestStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var tmp string
	testHookTempWritten = func(name string) { tmp = name; cancel() }
	t.Cleanup(func() { testHookTempWritten = nil })
	m := memory(ScopeRepo, 0, "cancelled")
	if err := ts.Write(ctx, m); !errors.Is(err, context.Canceled) {
		t.Errorf("Write = %v, want context.Canceled", err)
	}
	if tmp == "" || !strings.HasPrefix(filepath.Base(tmp), tmpPrefix) || filepath.Dir(tmp) != ts.repo {
		t.Errorf("temporary file %q: want a hidden file in %s", tmp, ts.repo)
	}
	if entries, _ := os.ReadDir(ts.repo); len(entries) != 0 {
		t.Errorf("folder after a cancelled write: %v", entries)
	}
}

// Copies: changing what List or Read returned does not change what the
// store (or its cache) serves next.
func TestFileStoreReturnsCopies(t *testing.T) {
	ts := newTestStore(t)
	m := full()
	m.Meta.ID = NewMemoryID()
	ts.mustWrite(t, m)
	for i := 0; i < 2; i++ {
		got := ts.mustList(t)[0]
		r, err := ts.Read(context.Background(), m.Meta.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []*MemoryFile{got, r} {
			if !equalMemory(c, m) {
				t.Fatalf("pass %d: got %+v, want %+v", i, c, m)
			}
			c.Content = "changed"
			*c.Meta.Supersedes = idE
			c.Meta.Related[0].ID = idE
			c.Meta.Extra["tags"].([]any)[0] = "changed"
			c.Meta.Extra["origin"].(map[string]any)["tool"] = "changed"
		}
	}
}

func TestFileStoreParallelism(t *testing.T) {
	ts := newTestStore(t)
	var want []*MemoryFile
	for i := 0; i < 40; i++ {
		m := memory(Scopes()[i%2], i, fmt.Sprintf("memory %d", i))
		want = append(want, m)
	}
	ts.mustWrite(t, want...)
	for _, n := range []int{1, 3, 64} {
		s, err := NewFileStore(ts.repo, ts.user, FileStoreConfig{Parallelism: n})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.List(context.Background())
		if err != nil || !slices.Equal(ids(got), ids(want)) {
			t.Errorf("Parallelism %d: List = %v, %v", n, len(got), err)
		}
	}
}

// Goroutines writing, reading and listing at once (run with -race).
func TestFileStoreConcurrentUse(t *testing.T) {
	ts := newTestStore(t)
	ctx := context.Background()
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*3)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				m := memory(Scopes()[(w+i)%2], w*each+i, fmt.Sprintf("w%d i%d", w, i))
				if err := ts.Write(ctx, m); err != nil {
					errs <- err
					continue
				}
				if r, err := ts.Read(ctx, m.Meta.ID); err != nil || r.Content != m.Content {
					errs <- fmt.Errorf("read back %s: %+v, %v", m.Meta.ID, r, err)
				}
				if _, err := ts.List(ctx); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := ts.mustList(t); len(got) != writers*each {
		t.Errorf("List has %d memories, want %d", len(got), writers*each)
	}
}

// A temporary file left by a killed writer is removed by NewFileStore once
// it is an hour old; a younger one may belong to a writer at work and stays.
func TestNewFileStoreRemovesStaleTemps(t *testing.T) {
	ts := newTestStore(t)
	old := filepath.Join(ts.repo, tmpPrefix+idA+"-111")
	young := filepath.Join(ts.user, tmpPrefix+idB+"-222")
	notOurs := filepath.Join(ts.repo, ".tmpfile-of-someone-else")
	personal := filepath.Join(ts.repo, tmpPrefix+"notes")
	lookAlike := filepath.Join(ts.user, tmpPrefix+idA+"-draft")
	for _, p := range []string{old, young, notOurs, personal, lookAlike} {
		if err := os.WriteFile(p, []byte("---\nid: "), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hourAgo := time.Now().Add(-staleTmpAge - time.Minute)
	for _, p := range []string{old, notOurs, personal, lookAlike} {
		if err := os.Chtimes(p, hourAgo, hourAgo); err != nil {
			t.Fatal(err)
		}
	}
	logs := new(syncBuffer)
	if _, err := NewFileStore(ts.repo, ts.user, FileStoreConfig{Logger: zerolog.New(logs)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a stale temporary file survived: %v", err)
	}
	if !strings.Contains(logs.String(), old) {
		t.Errorf("the removal was not logged with the path:\n%s", logs)
	}
	// Only files of exactly the shape Write makes are ever removed.
	for _, p := range []string{young, notOurs, personal, lookAlike} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

// TestFileStoreDoesNotFollowSymlinks: a link named like a memory, even one
// pointing at a valid memory file outside the folder, is skipped by List with
// a warning and refused by Read.
func TestFileStoreDoesNotFollowSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("creating symbolic links needs privileges on Windows")
	}
	ts := newTestStore(t)
	real := memory(ScopeRepo, 0, "a regular memory file")
	ts.mustWrite(t, real)
	outside := memory(ScopeRepo, 1, "a memory file outside the folder")
	target := filepath.Join(t.TempDir(), outside.Meta.ID+".md")
	if err := os.WriteFile(target, mustSerialize(t, outside), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(ts.repo, outside.Meta.ID+".md")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if got := ids(ts.mustList(t)); !slices.Equal(got, []string{real.Meta.ID}) {
		t.Errorf("List = %v, want only %s: the link must not be followed", got, real.Meta.ID)
	}
	if !strings.Contains(ts.logs.String(), "symbolic link") || !strings.Contains(ts.logs.String(), link) {
		t.Errorf("the skipped link was not logged with its path:\n%s", ts.logs)
	}
	if _, err := ts.Read(context.Background(), outside.Meta.ID); !errors.Is(err, ErrMalformed) {
		t.Errorf("Read through a symbolic link = %v, want ErrMalformed (not a regular file)", err)
	}
}

// A store with one scope off serves the other and refuses writes to the one
// that is off, as a store made outside a repository must.
func TestFileStoreScopeOff(t *testing.T) {
	ctx := context.Background()
	for _, off := range Scopes() {
		t.Run(string(off)+" off", func(t *testing.T) {
			dir := t.TempDir()
			on := ScopeUser
			repoDir, userDir := "", dir
			if off == ScopeUser {
				on, repoDir, userDir = ScopeRepo, dir, ""
			}
			s, err := NewFileStore(repoDir, userDir, FileStoreConfig{})
			if err != nil {
				t.Fatalf("NewFileStore(%q, %q, FileStoreConfig{}): %v", repoDir, userDir, err)
			}
			if got := s.Dir(off); got != "" {
				t.Errorf("Dir(%s) = %q, want \"\" for a scope that is off", off, got)
			}
			kept := memory(on, 0, "served")
			if err := s.Write(ctx, kept); err != nil {
				t.Fatalf("Write to the scope that is on: %v", err)
			}
			refused := memory(off, 1, "nowhere to go")
			if err := s.Write(ctx, refused); !errors.Is(err, ErrScopeOff) {
				t.Errorf("Write to the scope that is off = %v, want ErrScopeOff", err)
			}
			if _, err := s.ListByScope(ctx, off); !errors.Is(err, ErrScopeOff) {
				t.Errorf("ListByScope(%s) = %v, want ErrScopeOff", off, err)
			}
			if all, err := s.List(ctx); err != nil || !slices.Equal(ids(all), []string{kept.Meta.ID}) {
				t.Errorf("List = %v, %v; want only %s", ids(all), err, kept.Meta.ID)
			}
			if _, err := s.Read(ctx, refused.Meta.ID); !errors.Is(err, ErrNotFound) {
				t.Errorf("Read of a memory that was refused = %v, want ErrNotFound", err)
			}
			if probs, err := s.Problems(ctx); err != nil || len(probs) != 0 {
				t.Errorf("Problems = %v, %v; want none", probs, err)
			}
		})
	}
}

// One scope folder that cannot be read does not hide the other: List and
// Read serve what is readable, and Problems names the folder.
func TestFileStoreUnreadableFolderDoesNotHideTheOther(t *testing.T) {
	ctx := context.Background()
	tests := map[string]func(t *testing.T, dir string){
		"a file where the folder was": func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, []byte("not a folder"), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"no permission to read it": func(t *testing.T, dir string) {
			if runtime.GOOS == "windows" || os.Geteuid() == 0 {
				t.Skip("permissions do not stop this user (Windows, or root) from reading a folder")
			}
			if err := os.Chmod(dir, 0o000); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Chmod(dir, 0o750) })
		},
	}
	for name, breakFolder := range tests {
		t.Run(name, func(t *testing.T) {
			ts := newTestStore(t)
			user := memory(ScopeUser, 0, "a user memory")
			repo := memory(ScopeRepo, 1, "a repo memory")
			ts.mustWrite(t, user, repo)
			breakFolder(t, ts.repo)

			all, err := ts.List(ctx)
			if err != nil || !slices.Equal(ids(all), []string{user.Meta.ID}) {
				t.Errorf("List = %v, %v; want the user memory %s and no error", ids(all), err, user.Meta.ID)
			}
			if !strings.Contains(ts.logs.String(), "cannot be read") {
				t.Errorf("the unreadable folder was not logged:\n%s", ts.logs)
			}
			if got, err := ts.Read(ctx, user.Meta.ID); err != nil || got.Meta.ID != user.Meta.ID {
				t.Errorf("Read of the user memory = %v, %v", got, err)
			}
			if _, err := ts.Read(ctx, repo.Meta.ID); err == nil || errors.Is(err, ErrNotFound) {
				t.Errorf("Read of the unreachable repo memory = %v, want the folder's error", err)
			}
			if _, err := ts.ListByScope(ctx, ScopeRepo); err == nil {
				t.Errorf("ListByScope(repo) of an unreadable folder succeeded")
			}
			probs, err := ts.Problems(ctx)
			if err != nil || len(probs) != 1 || probs[0].Path != ts.repo || probs[0].Scope != ScopeRepo {
				t.Errorf("Problems = %+v, %v; want the repo folder %s", probs, err, ts.repo)
			}
		})
	}
}

// Problems names every file List skips, with a reason a person can act on,
// and nothing List serves.
func TestFileStoreProblems(t *testing.T) {
	ctx := context.Background()
	ts := newTestStore(t)
	good := memory(ScopeRepo, 0, "fine")
	ts.mustWrite(t, good)
	full := string(mustSerialize(t, sample(idA)))
	write := func(dir, name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	corruptID := NewMemoryID()
	corrupt := write(ts.repo, corruptID+".md", strings.ReplaceAll(full, idA, corruptID)[:40])
	mismatchID := NewMemoryID()
	mismatch := write(ts.repo, mismatchID+".md", full) // holds idA
	wrongScope := write(ts.user, idA+".md", full)      // a repo memory in the user folder
	notAnID := write(ts.repo, "notes.md", "my own notes")
	write(ts.repo, ".gitignore", "*.tmp\n") // not a .md file: not a problem
	want := map[string]error{corrupt: ErrMalformed, mismatch: ErrInvalidMemory, wrongScope: ErrInvalidMemory, notAnID: ErrInvalidID}
	if runtime.GOOS != "windows" {
		link := filepath.Join(ts.repo, NewMemoryID()+".md")
		if err := os.Symlink(filepath.Join(ts.user, idA+".md"), link); err != nil {
			t.Fatal(err)
		}
		want[link] = ErrMalformed
	}

	probs, err := ts.Problems(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]error{}
	for _, p := range probs {
		got[p.Path] = p.Err
		if p.Path == good.Meta.ID {
			t.Errorf("a served memory is reported: %+v", p)
		}
	}
	for path, kind := range want {
		switch err, ok := got[path]; {
		case !ok:
			t.Errorf("%s is not reported; problems: %+v", path, probs)
		case !errors.Is(err, kind):
			t.Errorf("%s: %v does not wrap %v", path, err, kind)
		}
	}
	if len(probs) != len(want) {
		t.Errorf("%d problems, want %d: %+v", len(probs), len(want), probs)
	}
	if !slices.IsSortedFunc(probs, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) }) {
		t.Errorf("problems are not ordered by path")
	}
}

// Skipped is what the last List skipped, reading nothing: a merge
// conflict, a file too large, a corrupt file, a folder that cannot be
// read; never a memory served, repaired or not. It follows each List.
func TestFileStoreSkipped(t *testing.T) {
	ctx := context.Background()
	ts := newTestStore(t)
	if got := ts.Skipped(); len(got) != 0 {
		t.Errorf("Skipped before any List = %+v, want nothing", got)
	}
	good, conflicted := memory(ScopeRepo, 0, "fine"), memory(ScopeUser, 1, "Use tabs.")
	ts.mustWrite(t, good, conflicted)
	conflictPath := filepath.Join(ts.user, conflicted.Meta.ID+".md")
	data, err := os.ReadFile(conflictPath)
	if err != nil {
		t.Fatal(err)
	}
	original := string(data)
	merged := strings.Replace(original, "Use tabs.", "<<<<<<< HEAD\nUse tabs.\n=======\nUse spaces.\n>>>>>>> feature", 1)
	bigPath := filepath.Join(ts.repo, NewMemoryID()+".md")
	repairedPath := filepath.Join(ts.repo, idA+".md")
	for path, content := range map[string]string{
		conflictPath: merged,
		bigPath:      strings.Repeat("x", MaxFileBytes+1),
		repairedPath: strings.Replace(string(mustSerialize(t, sample(idA))), "created_at: 2025-01-15T10:30:00Z\n", "", 1),
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	type skip struct {
		path string
		kind error
	}
	check := func(step string, want ...skip) {
		t.Helper()
		got := ts.Skipped()
		if len(got) != len(want) {
			t.Fatalf("%s: Skipped = %+v, want %d", step, got, len(want))
		}
		for i, p := range got {
			if p.Path != want[i].path || p.Served || !errors.Is(p.Err, want[i].kind) {
				t.Errorf("%s: skipped %d = {%s %v served %v}, want %s with %v", step, i, p.Path, p.Err, p.Served, want[i].path, want[i].kind)
			}
		}
	}
	if ms := ts.mustList(t); len(ms) != 2 { // good and the repaired one
		t.Fatalf("List served %v", ids(ms))
	}
	both := []skip{{bigPath, ErrTooLarge}, {conflictPath, ErrMergeConflict}}
	slices.SortFunc(both, func(a, b skip) int { return strings.Compare(a.path, b.path) })
	check("after List", both...)

	// Skipped reads nothing: the files fixed, it says what the last List
	// found until the next one.
	if err := os.WriteFile(conflictPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(bigPath); err != nil {
		t.Fatal(err)
	}
	check("before the next List", both...)
	if _, err := ts.ListByScope(ctx, ScopeUser); err != nil {
		t.Fatal(err)
	}
	check("after ListByScope(user)", skip{bigPath, ErrTooLarge})
	ts.mustList(t)
	check("after List")

	// A folder that cannot be read is skipped whole, and said: one that
	// became a symbolic link (checked before it is read, so also when the
	// tests run as root, who reads any folder) ...
	aside := ts.repo + ".real"
	if err := os.Rename(ts.repo, aside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(aside, ts.repo); err != nil {
		t.Fatal(err)
	}
	for _, m := range ts.mustList(t) {
		if m.Meta.Scope == ScopeRepo {
			t.Errorf("List served %s through a linked repo folder", m.Meta.ID)
		}
	}
	check("with the repo folder a symbolic link", skip{ts.repo, ErrUnsafeFolder})
	if err := os.Remove(ts.repo); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, ts.repo); err != nil {
		t.Fatal(err)
	}
	ts.mustList(t)
	check("with the repo folder back")

	// ... and one its mode forbids reading (not to root).
	if runtime.GOOS != "windows" && os.Getuid() != 0 {
		if err := os.Chmod(ts.repo, 0o300); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(ts.repo, 0o750) })
		ts.mustList(t)
		check("with the repo folder unreadable", skip{ts.repo, fs.ErrPermission})
	}
}

func TestFileStoreRemove(t *testing.T) {
	ctx := context.Background()
	ts := newTestStore(t)
	a, b := memory(ScopeRepo, 0, "keep"), memory(ScopeUser, 1, "a leaked secret")
	ts.mustWrite(t, a, b)
	ts.mustList(t) // fill the cache
	if err := ts.Remove(ctx, b.Meta.ID); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(ts.user, b.Meta.ID+".md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the file is still there: %v", err)
	}
	if _, err := ts.Read(ctx, b.Meta.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read after Remove = %v, want ErrNotFound", err)
	}
	if got := ids(ts.mustList(t)); !slices.Equal(got, []string{a.Meta.ID}) {
		t.Errorf("List after Remove = %v, want %v", got, []string{a.Meta.ID})
	}
	if err := ts.Remove(ctx, b.Meta.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Remove = %v, want ErrNotFound", err)
	}
	before := snapshot(t, ts.root)
	for _, bad := range []string{"../" + a.Meta.ID, "mem_x", a.Meta.ID + "/.."} {
		if err := ts.Remove(ctx, bad); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Remove(%q) = %v, want ErrInvalidID", bad, err)
		}
	}
	if after := snapshot(t, ts.root); !reflect.DeepEqual(before, after) {
		t.Errorf("Remove of bad ids touched the folders")
	}
}
