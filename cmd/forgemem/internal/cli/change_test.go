package cli_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
	"github.com/forgemem/forgemem/memcore"
)

func TestRemember(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"remember_new", []string{"remember", "Errors are wrapped with %w.", "--scope", "repo", "--category", "project-conventions"}, cli.ExitOK, ""},
		{"remember_secret", []string{"remember", "Staging DB: postgres://app:hunter2secret@db.internal/app", "--scope", "user", "--category", "user-facts"}, cli.ExitOK, ""},
		{"remember_not_head", []string{"remember", "Use optimistic locking, retried three times.", "--supersedes", "00000001"}, cli.ExitOK, ""},
		{"remember_links", []string{"remember", "Retry optimistic updates at most three times.", "--scope", "repo", "--category", "patterns", "--refines", "00000002", "--relates-to", "00000004"}, cli.ExitOK, ""},
		{"remember_cross_scope", []string{"remember", "Follow the user's test style.", "--scope", "repo", "--category", "patterns", "--relates-to", "00000005"}, cli.ExitUsage, "a repo memory cannot link to it"},
		{"remember_cross_scope_user", []string{"remember", "Writes one migration per change.", "--scope", "user", "--category", "coding-preferences", "--relates-to", "00000004"}, cli.ExitUsage, "a user-scope memory cannot link to it, as your other repositories do not have it"},
		{"remember_duplicate", []string{"remember", "prefers   TABLE-DRIVEN tests.", "--scope", "user", "--category", "coding-preferences"}, cli.ExitFailure, "already remembered: mem_00000005"},
		{"remember_blank", []string{"remember", "  ", "--scope", "user", "--category", "patterns"}, cli.ExitUsage, "the text to remember is empty"},
		{"remember_no_scope", []string{"remember", "Something."}, cli.ExitUsage, "a new memory needs --scope and --category"},
		{"remember_bad_category", []string{"remember", "Something.", "--scope", "user", "--category", "prefs"}, cli.ExitUsage, `--category "prefs" is not one of`},
		{"remember_move_scope", []string{"remember", "Locking moves.", "--supersedes", "00000002", "--scope", "user"}, cli.ExitUsage, "a new version keeps its chain's scope (repo)"},
		{"remember_words", []string{"remember", "Remove", "a.tmp", "b.tmp", "--scope", "repo", "--category", "patterns"}, cli.ExitUsage,
			`forgemem remember: give the text to remember as one argument, in quotes (got 3: "Remove", "a.tmp", "b.tmp"): the shell changes unquoted words such as *.tmp or $HOME before forgemem sees them` + "\n"},
		{"remember_no_text", []string{"remember", "--scope", "repo", "--category", "patterns"}, cli.ExitUsage,
			`forgemem remember: give the text to remember, in quotes: forgemem remember "Migrations live in db/migrations." --scope repo --category project-conventions` + "\n"},
		{"remember_unknown", []string{"remember", "x", "--supersedes", "mem_0bad"}, cli.ExitFailure, "no memory has the id mem_0bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.seed()
			before := len(f.memoryFiles(t))
			r := f.run(tt.args...)
			f.check(tt.name, r, tt.code)
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", r.stderr, tt.stderr)
			}
			if after := len(f.memoryFiles(t)); tt.code != cli.ExitOK && after != before {
				t.Errorf("a refused remember wrote a memory: %d memory files, then %d", before, after)
			}
		})
	}
}

// memoryFiles lists the memory files of both folders.
func (f *fixture) memoryFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{f.repoDir(), f.userDir()} {
		names, err := filepath.Glob(filepath.Join(dir, "mem_*.md"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, names...)
	}
	return files
}

func TestRememberWritesAManualRedactedMemory(t *testing.T) {
	f := newFixture(t)
	f.seed()
	r := f.run("remember", "Deploy key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z and the user is ana@example.com", "--scope", "user", "--category", "user-facts")
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, "Replaced 2 secrets with [REDACTED].") {
		t.Fatalf("exit %d, output %q", r.code, r.stdout)
	}
	ms, err := f.store().ListByScope(context.Background(), memcore.ScopeUser)
	if err != nil {
		t.Fatal(err)
	}
	m := ms[len(ms)-1]
	if m.Meta.Trigger != memcore.TriggerManual || !m.Meta.CreatedAt.Equal(now) {
		t.Errorf("written with trigger %q at %v, want manual at %v", m.Meta.Trigger, m.Meta.CreatedAt, now)
	}
	if want := "Deploy key is [REDACTED] and the user is [REDACTED]"; m.Content != want {
		t.Errorf("content %q, want %q", m.Content, want)
	}
	assertNoSecretOnDisk(t, f.root, "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "ana@example.com")
}

// assertNoSecretOnDisk fails if any file under dir holds one of secrets.
func assertNoSecretOnDisk(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestForgetThenRecallSearchList(t *testing.T) {
	f := newFixture(t)
	f.seed()
	ask := conversation("How do we lock user rows for updates?")
	before := f.runIn(context.Background(), f.repo, ask, "recall")
	if !strings.Contains(before.stdout, id(2)) {
		t.Fatalf("before forgetting, recall does not show the decision:\n%s", before.stdout)
	}

	f.check("forget", f.run("forget", "00000001", "--reason", "we moved to event sourcing"), cli.ExitOK)

	after := f.runIn(context.Background(), f.repo, ask, "recall")
	if after.code != cli.ExitOK || strings.Contains(after.stdout, "locking for user updates") {
		t.Errorf("after forgetting, recall (exit %d) still shows the decision:\n%s", after.code, after.stdout)
	}
	if s := f.run("search", "optimistic locking user updates"); strings.Contains(s.stdout, "mem_00000002") {
		t.Errorf("after forgetting, search finds the decision:\n%s", s.stdout)
	}
	if l := f.run("list"); strings.Contains(l.stdout, "mem_00000002") || !strings.Contains(l.stdout, "1 forgotten memory not shown") {
		t.Errorf("after forgetting, list:\n%s", l.stdout)
	}
	f.check("forget_list_retired", f.run("list", "--retired"), cli.ExitOK)
	f.check("forget_show", f.run("show", "00000002"), cli.ExitOK)
	f.check("forget_again", f.run("forget", "00000002"), cli.ExitOK)

	// The files are all still there: history is kept.
	ms, err := f.store().ListByScope(context.Background(), memcore.ScopeRepo)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 5 {
		t.Errorf("%d repo files after forgetting, want 5 (4 and the retired version)", len(ms))
	}

	// remember --supersedes brings it back.
	f.check("forget_revive", f.run("remember", "Use optimistic locking for user updates again.", "--supersedes", "00000002"), cli.ExitOK)
	if r := f.runIn(context.Background(), f.repo, ask, "recall"); !strings.Contains(r.stdout, "optimistic locking for user updates again") {
		t.Errorf("after reviving, recall:\n%s", r.stdout)
	}
}

func TestPurge(t *testing.T) {
	f := newFixture(t)
	f.seed()
	// A search embeds every memory into the caches.
	if r := f.run("search", "locking"); r.code != cli.ExitOK {
		t.Fatalf("search: %s", r.stderr)
	}
	gone := []string{
		"Use pessimistic locking (SELECT … FOR UPDATE) for user updates.",
		"Use optimistic locking with a version column for user updates, because row locks caused timeouts under load.",
	}
	cache := filepath.Join(f.repoDir(), ".cache")
	for _, c := range gone {
		if !cacheHolds(t, cache, c) {
			t.Fatalf("the cache does not hold the vector of %q before the purge", c)
		}
	}

	dry := f.run("purge", "00000002")
	f.check("purge_without_yes", dry, cli.ExitUsage)
	if !strings.Contains(f.normalize(dry.stderr), "$REPO/.forge/memory/mem_00000001-0000-4000-8000-000000000001.md") ||
		!strings.Contains(dry.stderr, "--yes") {
		t.Errorf("without --yes, stderr does not say what would be deleted:\n%s", dry.stderr)
	}
	for _, n := range []int{1, 2} {
		if _, err := os.Stat(filepath.Join(f.repoDir(), id(n)+".md")); err != nil {
			t.Fatalf("without --yes, a file was deleted: %v", err)
		}
	}

	f.check("purge", f.run("purge", "00000002", "--yes"), cli.ExitOK)
	for _, n := range []int{1, 2} {
		if _, err := os.Stat(filepath.Join(f.repoDir(), id(n)+".md")); !os.IsNotExist(err) {
			t.Errorf("version file %d is still there: %v", n, err)
		}
	}
	for _, c := range gone {
		if cacheHolds(t, cache, c) {
			t.Errorf("the cache still holds the vector of %q", c)
		}
	}
	if !cacheHolds(t, cache, "Migrations live in db/migrations, one file per change.") {
		t.Error("the purge removed another memory's vector")
	}
	// The correction that contradicted it now has a dangling link.
	if r := f.run("validate"); r.code != cli.ExitFailure || !strings.Contains(r.stdout, "dangling-link") {
		t.Errorf("validate after the purge: exit %d\n%s", r.code, r.stdout)
	}
}

// cacheHolds reports whether a cache file in dir holds the vector of the
// content (its key, the SHA-256 of the trimmed text).
func cacheHolds(t *testing.T, dir, content string) bool {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "vectors-*.fmv"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no cache file in %s (%v)", dir, err)
	}
	key := sha256.Sum256([]byte(strings.TrimSpace(content)))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, key[:]) {
			return true
		}
	}
	return false
}
