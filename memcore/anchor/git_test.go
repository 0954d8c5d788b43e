package anchor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// gitShop is the shop repository under git, committed; it returns the
// root and the git runner.
func gitShop(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	root := t.TempDir()
	git := needGit(t, root)
	writeTree(t, root, shop)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "shop")
	return root, git
}

func TestAnchorsRecordTheCommit(t *testing.T) {
	root, git := gitShop(t)
	c, err := New(DefaultConfig(root))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.GitProblem(); err != nil {
		t.Fatalf("GitProblem = %v", err)
	}
	head := git("rev-parse", "HEAD")
	r := c.Anchors(context.Background(), "GetOrder in internal/db/queries.go", nil, nil)
	if len(r.Anchors) != 2 {
		t.Fatalf("anchors %+v", r.Anchors)
	}
	blob := git("rev-parse", "HEAD:internal/db/queries.go")
	for _, a := range r.Anchors {
		if a.Commit != head || a.Blob != blob {
			t.Errorf("%+v: want commit %s and git's blob %s", a, head, blob)
		}
	}
}

func TestRenamesAreFollowed(t *testing.T) {
	anchors := func(c *Checker) []memcore.Anchor {
		return c.Anchors(context.Background(),
			"`GetOrder` in internal/db/queries.go; ListOrders in internal/db/orders.go; migrations in db/migrations; server in internal/api/server.go", nil, nil).Anchors
	}
	tests := []struct {
		name   string
		change func(t *testing.T, root string, git func(...string) string)
		noGit  bool
		reason string
	}{
		{"git mv keeping the content", func(t *testing.T, root string, git func(...string) string) {
			git("mv", "internal/db/queries.go", "internal/api/queries.go")
		}, false, "internal/db/queries.go was renamed to internal/api/queries.go"},
		{"git mv and an edit, committed", func(t *testing.T, root string, git func(...string) string) {
			git("mv", "internal/db/orders.go", "internal/db/listing.go")
			writeTree(t, root, map[string]string{"internal/db/listing.go": "package db\n\n// ListOrders lists.\nfunc ListOrders() {}\n"})
			git("commit", "-qam", "rename")
		}, false, "internal/db/orders.go was renamed to internal/db/listing.go"},
		{"folder renamed", func(t *testing.T, root string, git func(...string) string) {
			git("mv", "db/migrations", "db/schema")
		}, false, "db/migrations was renamed to db/schema"},
		{"renamed and the symbol deleted", func(t *testing.T, root string, git func(...string) string) {
			git("mv", "internal/api/server.go", "internal/api/http.go")
			writeTree(t, root, map[string]string{"internal/api/http.go": "package api\n\nconst defaultPort = 8080\n\nfunc NewHandler() {}\n"})
			git("add", "-A")
		}, false, "internal/api/server.go was renamed to internal/api/http.go"},
		{"moved without git", func(t *testing.T, root string, git func(...string) string) {
			if err := os.Rename(filepath.Join(root, "internal/db/queries.go"), filepath.Join(root, "internal/queries.go")); err != nil {
				t.Fatal(err)
			}
		}, false, "internal/db/queries.go no longer exists"},
		{"git mv, git turned off", func(t *testing.T, root string, git func(...string) string) {
			git("mv", "internal/db/queries.go", "internal/api/queries.go")
		}, true, "internal/db/queries.go no longer exists"},
		{"deleted", func(t *testing.T, root string, git func(...string) string) {
			git("rm", "-q", "internal/db/orders.go")
		}, false, "internal/db/orders.go no longer exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, git := gitShop(t)
			cfg := DefaultConfig(root)
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			recorded := anchors(c)
			tt.change(t, root, git)
			cfg.NoGit = tt.noGit
			later, err := New(cfg) // a later process
			if err != nil {
				t.Fatal(err)
			}
			r := later.Check(context.Background(), recorded)
			if got := r.Reason(); got != tt.reason {
				t.Errorf("Reason = %q, want %q", got, tt.reason)
			}
			// The checker that recorded the anchors sees the change too:
			// its caches follow the repository's state.
			if got := c.Check(context.Background(), recorded).Reason(); got != tt.reason && !tt.noGit {
				t.Errorf("the recording checker's Reason = %q, want %q", got, tt.reason)
			}
		})
	}
}

// A renamed file whose symbol was deleted is reported by its symbol, at
// its new name.
func TestRenamedFileLostItsSymbol(t *testing.T) {
	root, git := gitShop(t)
	c, err := New(DefaultConfig(root))
	if err != nil {
		t.Fatal(err)
	}
	recorded := c.Anchors(context.Background(), "`NewServer` starts it", nil, nil).Anchors
	git("mv", "internal/api/server.go", "internal/api/http.go")
	writeTree(t, root, map[string]string{"internal/api/http.go": "package api\n\nconst defaultPort = 8080\n\nfunc NewHandler() {}\n"})
	git("add", "-A")
	r := c.Check(context.Background(), recorded)
	want := "`NewServer` is no longer defined in internal/api/http.go (renamed from internal/api/server.go)"
	if got := r.Reason(); got != want {
		t.Errorf("Reason = %q, want %q", got, want)
	}
}

// The caller's GIT_DIR and the like never point git elsewhere.
func TestGitIgnoresTheCallersGitVariables(t *testing.T) {
	root, git := gitShop(t)
	other, _ := gitShop(t)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	c, err := New(DefaultConfig(root))
	if err != nil {
		t.Fatal(err)
	}
	rec := c.Anchors(context.Background(), "internal/db/queries.go", nil, nil).Anchors
	os.Unsetenv("GIT_DIR")
	os.Unsetenv("GIT_INDEX_FILE")
	git("mv", "internal/db/queries.go", "internal/q.go")
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	if got := c.Check(context.Background(), rec).Reason(); !strings.Contains(got, "renamed to internal/q.go") {
		t.Errorf("Reason = %q", got)
	}
}

// A root whose .git is not a repository (an empty folder) inside another
// repository never gets that repository's commit or renames.
func TestGitNeverUsesAnEnclosingRepository(t *testing.T) {
	parent, _ := gitShop(t)
	child := filepath.Join(parent, "vendored")
	writeTree(t, child, map[string]string{"lib.go": "package lib\n\nfunc LibCall() {}\n", ".git/.keep": ""})
	c, err := New(DefaultConfig(child))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range c.Anchors(context.Background(), "LibCall in lib.go", nil, nil).Anchors {
		if a.Commit != "" {
			t.Errorf("%+v: the enclosing repository's commit", a)
		}
	}
}

// What a teammate's clone does not have is no anchor: a file or folder the
// repository's .gitignore keeps out of commits, or a folder that holds no
// file. Proposed, it is dropped; named in the text, it is not recorded;
// given by a person, it is honoured. A tracked file that an ignore pattern
// matches is shared, and kept; so is everything without git but the empty
// folder.
func TestAnchorsLeaveOutWhatClonesDoNotHave(t *testing.T) {
	root, git := gitShop(t)
	writeTree(t, root, map[string]string{
		".gitignore":           ".env.local\nbuild/\n*.log\n",
		".env.local":           "DB_PASSWORD=x\n",
		"build/out.bin":        "binary\n",
		"internal/db/keep.log": "tracked on purpose\n",
	})
	git("add", "-f", "internal/db/keep.log")
	git("add", ".gitignore")
	git("commit", "-q", "-m", "ignore")
	if err := os.MkdirAll(filepath.Join(root, "db", "seeds"), 0o755); err != nil {
		t.Fatal(err)
	}
	const text = "Local secrets go in .env.local; build/out.bin is the binary; seeds go in db/seeds/; " +
		"internal/db/keep.log is kept; queries live in internal/db/queries.go."
	proposed := []memcore.Anchor{{Path: ".env.local"}, {Path: "build"}, {Path: "internal/db/queries.go", Symbol: "GetOrder"}}
	given := []memcore.Anchor{{Path: "build/out.bin"}}
	for _, tt := range []struct {
		name             string
		noGit            bool
		anchors, dropped string
	}{
		{"git", false,
			"build/out.bin\ninternal/db/queries.go#GetOrder\ninternal/db/keep.log\ninternal/db/queries.go\n",
			".env.local\nbuild\n"},
		{"no git", true,
			"build/out.bin\n.env.local\nbuild\ninternal/db/queries.go#GetOrder\ninternal/db/keep.log\ninternal/db/queries.go\n",
			""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig(root)
			cfg.NoGit = tt.noGit
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := c.Anchors(context.Background(), text, proposed, given)
			if got := anchorsText(r.Anchors); got != tt.anchors {
				t.Errorf("anchors:\n%s\nwant:\n%s", got, tt.anchors)
			}
			if got := anchorsText(r.Dropped); got != tt.dropped {
				t.Errorf("dropped:\n%s\nwant:\n%s", got, tt.dropped)
			}
		})
	}
}
