package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/settings"
)

// longLived is a workspace kept open across operations, as the MCP server
// keeps one, and a second store over the same folders: another process.
func longLived(t *testing.T) (*Workspace, *memcore.FileStore) {
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
	t.Cleanup(func() { _ = ws.Close(context.Background()) })
	other, err := memcore.NewFileStore(s.Paths.RepoDir, s.Paths.UserDir, memcore.FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return ws, other
}

func newMemory(content string) *memcore.MemoryFile {
	return &memcore.MemoryFile{Meta: memcore.MemoryMeta{ID: memcore.NewMemoryID(), CreatedAt: time.Now().UTC().Truncate(time.Second),
		Version: 1, Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions}, Content: content}
}

// The index is built once and kept while nothing changes, and every change
// to the folders made elsewhere — a write by another process, a file
// edited in place, a file deleted — is seen by the next search.
func TestIndexRebuiltOnlyWhenTheFoldersChange(t *testing.T) {
	ws, other := longLived(t)
	ctx := context.Background()
	first := newMemory("Migrations live in db/migrations.")
	if err := other.Write(ctx, first); err != nil {
		t.Fatal(err)
	}
	search := func(query string) string {
		t.Helper()
		res, err := ws.Search(ctx, query, 10)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, h := range res.Hits {
			b.WriteString(h.Memory.Content + "\n")
		}
		return b.String()
	}
	path := filepath.Join(other.Dir(memcore.ScopeRepo), first.Meta.ID+".md")
	steps := []struct {
		name   string
		change func()
		query  string
		want   string
		builds int64
	}{
		{"first search builds", nil, "migrations", "db/migrations", 1},
		{"unchanged folders: no build", nil, "migrations", "db/migrations", 1},
		{"again unchanged", nil, "where do migrations live", "db/migrations", 1},
		{"another process writes a memory", func() {
			if err := other.Write(ctx, newMemory("Release notes go in CHANGELOG.md under Unreleased.")); err != nil {
				t.Fatal(err)
			}
		}, "release notes changelog", "CHANGELOG.md", 2},
		{"a person edits a file in place", func() {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			edited := strings.Replace(string(data), "db/migrations", "sql/migrations, numbered", 1)
			if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "migrations", "sql/migrations, numbered", 3},
		{"unchanged after the edit", nil, "migrations", "sql/migrations", 3},
		{"a file is deleted", func() {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, "migrations", "", 4},
	}
	for _, st := range steps {
		if st.change != nil {
			st.change()
		}
		got := search(st.query)
		if st.want == "" && strings.Contains(got, "migrations live") || st.want != "" && !strings.Contains(got, st.want) {
			t.Errorf("%s: search %q found\n%s\nwant %q", st.name, st.query, got, st.want)
		}
		if n := ws.builds.Load(); n != st.builds {
			t.Errorf("%s: %d index builds so far, want %d", st.name, n, st.builds)
		}
	}
}
