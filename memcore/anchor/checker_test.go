package anchor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// shop is a small repository: two Go packages, a configuration file, a
// folder of migrations, a command and a symbol two packages declare.
var shop = map[string]string{
	"internal/db/queries.go": "package db\n\n// GetOrder reads one order.\nfunc GetOrder(id int) error { return nil }\n\ntype Store struct{ Pool int }\n\nfunc (s *Store) Close() {}\n",
	"internal/db/orders.go":  "package db\n\nfunc ListOrders() {}\n",
	"internal/api/server.go": "package api\n\nconst defaultPort = 8080\n\nfunc NewServer() {}\n",
	"config/app.yaml":        "database:\n  max_connections: 10\n",
	"db/migrations/0001.sql": "create table orders (id int);\n",
	"cmd/tool/main.go":       "package main\n\nfunc main() {}\n",
	"pkga/a.go":              "package pkga\n\nfunc DupName() {}\n",
	"pkgb/b.go":              "package pkgb\n\nfunc DupName() {}\n",
	"README.md":              "Set retrieval_top_k to tune.\n",
}

func TestAnchorsExtractsWhatTheTreeHas(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	c := newChecker(t, root)
	tests := []struct {
		text string
		want string
	}{
		{"Call `GetOrder` through the repository layer in internal/db/queries.go; never raw SQL in handlers.",
			"internal/db/queries.go\ninternal/db/queries.go#GetOrder\n"},
		{"Migrations live in db/migrations.", "db/migrations\n"},
		{"Page with ListOrders.", "internal/db/orders.go#ListOrders\n"},
		{"`Store.Close` releases the pool; db.Store.Pool sizes it.", "internal/db/queries.go#Store.Close\ninternal/db/queries.go#db.Store.Pool\n"},
		{"Set `max_connections` (database.max_connections) in config/app.yaml.",
			"config/app.yaml\nconfig/app.yaml#max_connections\nconfig/app.yaml#database.max_connections\n"},
		{"`DupName` is declared by two packages.", ""},
		{"queries.go holds the SQL.", "internal/db/queries.go\n"},
		{"GetMissing and internal/nothing.go do not exist.", ""},
		{"`main` in cmd/tool/main.go starts it.", "cmd/tool/main.go\ncmd/tool/main.go#main\n"},
		{"`main` alone names nothing certain.", ""},
		{"e.g. v1.2, I/O and/or https://x.invalid/internal/db", ""},
		{"the `defaultPort` of internal/api", "internal/api\ninternal/api/server.go#defaultPort\n"},
		{"ListOrders lives beside GetOrder in internal/db/queries.go", "internal/db/queries.go\ninternal/db/orders.go#ListOrders\ninternal/db/queries.go#GetOrder\n"},
	}
	for _, tt := range tests {
		r := c.Anchors(context.Background(), tt.text, nil, nil)
		if got := anchorsText(r.Anchors); got != tt.want {
			t.Errorf("Anchors(%q) =\n%s\nwant\n%s", tt.text, got, tt.want)
		}
	}
}

func TestAnchorsRecordTheState(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	c := newChecker(t, root)
	r := c.Anchors(context.Background(), "Migrations in db/migrations; GetOrder in internal/db/queries.go", nil, nil)
	want := BlobID([]byte(shop["internal/db/queries.go"]))
	for _, a := range r.Anchors {
		if err := a.Validate(); err != nil {
			t.Errorf("anchor %+v: %v", a, err)
		}
		switch a.Path {
		case "internal/db/queries.go":
			if a.Blob != want {
				t.Errorf("%+v: blob %s, want %s", a, a.Blob, want)
			}
		case "db/migrations":
			if a.Blob != "" {
				t.Errorf("a folder has a blob: %+v", a)
			}
		}
		if a.Commit != "" {
			t.Errorf("%+v: a commit without git", a)
		}
	}
}

func TestAnchorsGivenAndProposed(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	c := newChecker(t, root)
	given := []memcore.Anchor{{Path: "internal/gone.go"}, {Path: "/etc/passwd"}, {Symbol: "Anything"}}
	proposed := []memcore.Anchor{
		{Path: "internal/db/queries.go", Symbol: "GetOrder"}, // in the tree
		{Path: "internal/db/queries.go", Symbol: "Invented"}, // not defined there
		{Path: "internal/invented.go"},                       // no such file
		{Symbol: "NewServer"},                                // placed in its one package
		{Symbol: "DupName"},                                  // two packages: dropped
		{Path: "../outside"},                                 // not valid
	}
	r := c.Anchors(context.Background(), "Nothing to extract here.", proposed, given)
	want := "internal/gone.go\n#Anything\ninternal/db/queries.go#GetOrder\ninternal/api/server.go#NewServer\n"
	if got := anchorsText(r.Anchors); got != want {
		t.Errorf("anchors =\n%s\nwant\n%s", got, want)
	}
	if got := anchorsText(r.Dropped); got != "internal/db/queries.go#Invented\ninternal/invented.go\n#DupName\n../outside\n" {
		t.Errorf("dropped =\n%s", got)
	}
	if got := anchorsText(r.Missing); got != "internal/gone.go\n" {
		t.Errorf("missing =\n%s", got)
	}
}

func TestAnchorsAreBounded(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	var text strings.Builder
	for i := range 40 {
		name := "f" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".txt"
		files[name] = "x"
		text.WriteString(name + " ")
	}
	writeTree(t, root, files)
	c := newChecker(t, root)
	if n := len(c.Anchors(context.Background(), text.String(), nil, nil).Anchors); n != DefaultMaxAnchors {
		t.Errorf("%d anchors, want %d", n, DefaultMaxAnchors)
	}
}

// A flood of proposals (an agent's tool call) is cut before any is looked
// up: no walk of the tree per proposal.
func TestAFloodOfAnchorsIsCut(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	c := newChecker(t, root)
	flood := make([]memcore.Anchor, 10_000)
	for i := range flood {
		flood[i] = memcore.Anchor{Symbol: fmt.Sprintf("MissingName%d", i)}
	}
	before := c.reads.Load()
	r := c.Anchors(context.Background(), "", flood, flood)
	if len(r.Dropped) != len(flood) || len(r.Anchors) != DefaultMaxAnchors {
		t.Errorf("%d dropped, %d recorded; want all %d proposals dropped and %d given kept", len(r.Dropped), len(r.Anchors), len(flood), DefaultMaxAnchors)
	}
	goFiles := 0
	for name := range shop {
		if strings.HasSuffix(name, ".go") {
			goFiles++
		}
	}
	if n := c.reads.Load() - before; n > int64(DefaultMaxAnchors*goFiles) {
		t.Errorf("%d files read for the flood, want at most %d", n, DefaultMaxAnchors*goFiles)
	}
}

func TestCheck(t *testing.T) {
	anchors := []memcore.Anchor{
		{Path: "internal/db/queries.go"},
		{Path: "internal/db/queries.go", Symbol: "GetOrder"},
		{Path: "internal/db/queries.go", Symbol: "Store.Close"},
		{Path: "db/migrations"},
		{Path: "config/app.yaml", Symbol: "max_connections"},
		{Symbol: "ListOrders"},
	}
	tests := []struct {
		name   string
		change func(t *testing.T, root string)
		want   []Status
		reason string
	}{
		{"unchanged", func(*testing.T, string) {}, []Status{Present, Present, Present, Present, Present, Present}, ""},
		{"function deleted", func(t *testing.T, root string) {
			writeTree(t, root, map[string]string{"internal/db/queries.go": "package db\n\ntype Store struct{}\n\nfunc (s *Store) Close() {}\n"})
		}, []Status{Present, Undefined, Present, Present, Present, Present}, "`GetOrder` is no longer defined in internal/db/queries.go"},
		{"function moved within its package", func(t *testing.T, root string) {
			writeTree(t, root, map[string]string{
				"internal/db/queries.go": "package db\n\ntype Store struct{}\n\nfunc (s *Store) Close() {}\n",
				"internal/db/orders.go":  "package db\n\nfunc ListOrders() {}\n\nfunc GetOrder() {}\n",
			})
		}, []Status{Present, Present, Present, Present, Present, Present}, ""},
		{"file deleted, function kept in its package", func(t *testing.T, root string) {
			rm(t, root, "internal/db/queries.go")
			writeTree(t, root, map[string]string{"internal/db/orders.go": "package db\n\nfunc ListOrders() {}\n\nfunc GetOrder() {}\n"})
		}, []Status{Gone, Moved, Gone, Present, Present, Present},
			"internal/db/queries.go no longer exists; `GetOrder` moved to internal/db/orders.go"},
		{"folder and key deleted", func(t *testing.T, root string) {
			rm(t, root, "db")
			writeTree(t, root, map[string]string{"config/app.yaml": "database:\n  pool: 10\n"})
		}, []Status{Present, Present, Present, Gone, Undefined, Present},
			"db/migrations no longer exists; `max_connections` is no longer defined in config/app.yaml"},
		{"symbol deleted everywhere", func(t *testing.T, root string) {
			writeTree(t, root, map[string]string{"internal/db/orders.go": "package db\n"})
		}, []Status{Present, Present, Present, Present, Present, Gone}, "`ListOrders` is no longer defined anywhere"},
		{"file replaced by a folder", func(t *testing.T, root string) {
			rm(t, root, "internal/db/queries.go")
			writeTree(t, root, map[string]string{"internal/db/queries.go/x.txt": "GetOrder"})
		}, []Status{Present, Present, Undefined, Present, Present, Present}, "`Store.Close` is no longer defined in internal/db/queries.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, shop)
			c := newChecker(t, root)
			if r := c.Check(context.Background(), anchors); r.Stale() {
				t.Fatalf("fresh tree: %s", r.Reason())
			}
			tt.change(t, root)
			r := c.Check(context.Background(), anchors)
			for i, f := range r.Findings {
				if f.Status != tt.want[i] {
					t.Errorf("%s: %s, want %s", f.Anchor, f.Status, tt.want[i])
				}
			}
			if got := r.Reason(); got != tt.reason {
				t.Errorf("Reason = %q, want %q", got, tt.reason)
			}
			if r.Stale() != (tt.reason != "") {
				t.Errorf("Stale = %v", r.Stale())
			}
		})
	}
}

func rm(t *testing.T, root, rel string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}

// A check of unchanged files reads none of them: the caches answer, by
// each file's size and modification time; a changed file is read again.
func TestCheckIsCachedByModificationTime(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	c := newChecker(t, root)
	anchors := []memcore.Anchor{
		{Path: "internal/db/queries.go", Symbol: "GetOrder"},
		{Path: "config/app.yaml", Symbol: "max_connections"},
		{Path: "internal/db/queries.go", Symbol: "Missing"}, // searched in its folder too
	}
	c.Check(context.Background(), anchors)
	before := c.reads.Load()
	r := c.Check(context.Background(), anchors)
	if n := c.reads.Load() - before; n != 0 {
		t.Errorf("the second check read %d files, want 0", n)
	}
	if r.Findings[0].Status != Present || r.Findings[2].Status != Undefined {
		t.Fatalf("findings %+v", r.Findings)
	}
	writeTree(t, root, map[string]string{"internal/db/queries.go": "package db\n\nfunc Missing() {}\n"})
	r = c.Check(context.Background(), anchors)
	if r.Findings[0].Status != Undefined || r.Findings[2].Status != Present {
		t.Errorf("after the edit: %s", r.Reason())
	}
}

func TestStaleChecksRepoMemoriesOnly(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	c := newChecker(t, root)
	m := &memcore.MemoryFile{Meta: memcore.MemoryMeta{Scope: memcore.ScopeRepo, Anchors: []memcore.Anchor{{Path: "gone.go"}}}}
	if got := c.Stale(context.Background(), m); got != "gone.go no longer exists" {
		t.Errorf("Stale(repo) = %q", got)
	}
	m.Meta.Scope = memcore.ScopeUser
	if got := c.Stale(context.Background(), m); got != "" {
		t.Errorf("Stale(user) = %q, want \"\": a user memory's anchors name another repository", got)
	}
	if got := c.Stale(context.Background(), nil); got != "" {
		t.Errorf("Stale(nil) = %q", got)
	}
}

func TestBlobIDIsGits(t *testing.T) {
	// git hash-object /dev/null, and of "hello\n".
	if got := BlobID(nil); got != "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391" {
		t.Errorf("BlobID(empty) = %s", got)
	}
	if got := BlobID([]byte("hello\n")); got != "ce013625030ba8dba906f756967f9e9ca394464a" {
		t.Errorf("BlobID(hello) = %s", got)
	}
}

// The search of a symbol's folder is reused while the folder, the
// anchored file and the file the symbol was found in are unchanged, and
// redone when one of them changes — also by an edit in place.
func TestFolderSearchFollowsEdits(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	c := newChecker(t, root)
	a := []memcore.Anchor{{Path: "internal/db/queries.go", Symbol: "GetOrder"}}
	status := func() Status { return c.Check(context.Background(), a).Findings[0].Status }
	if s := status(); s != Present {
		t.Fatalf("first check: %s", s)
	}
	// GetOrder moves to orders.go: both files edited in place.
	writeTree(t, root, map[string]string{
		"internal/db/queries.go": "package db\n",
		"internal/db/orders.go":  "package db\n\nfunc ListOrders() {}\n\nfunc GetOrder() {}\n",
	})
	if s := status(); s != Present {
		t.Fatalf("moved within its package: %s", s)
	}
	before := c.reads.Load()
	if s := status(); s != Present || c.reads.Load() != before {
		t.Fatalf("again: %s, %d reads", s, c.reads.Load()-before)
	}
	// Then deleted from orders.go, in place: queries.go and the folder's
	// listing are unchanged.
	writeTree(t, root, map[string]string{"internal/db/orders.go": "package db\n\nfunc ListOrders() {}\n"})
	if s := status(); s != Undefined {
		t.Errorf("deleted from the file it moved to: %s", s)
	}
}
