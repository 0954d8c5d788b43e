package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A convention that names a file and a function is labelled once the
// function is deleted, and repaired once the file is renamed — through the
// built command, in a git repository, offline (the fake provider).
func TestStaleMemoryThroughTheCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	w := &world{t: t, home: t.TempDir()}
	dir := filepath.Join(t.TempDir(), "shop")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(withoutGit(os.Environ()), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	const queries = "package db\n\n// GetOrder reads one order.\nfunc GetOrder(id int) error { return nil }\n\nfunc ListOrders() {}\n"
	queriesGo := filepath.Join(dir, "internal", "db", "queries.go")
	writeFile(t, queriesGo, queries)
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "shop")

	out := w.ok(dir, "", "remember", "Orders are read with `GetOrder` in internal/db/queries.go, never with raw SQL in handlers.",
		"--scope", "repo", "--category", "project-conventions")
	contains(t, "remember", out, "Anchors: internal/db/queries.go, internal/db/queries.go#GetOrder.")
	first := remembered(t, out)
	contains(t, "validate", w.ok(dir, "", "validate"), "No problems found.")

	// The function is deleted.
	writeFile(t, queriesGo, "package db\n\nfunc ListOrders() {}\n")
	stdout, _, code := w.run(dir, "", "validate", "--json")
	var probs []map[string]any
	if err := json.Unmarshal([]byte(stdout), &probs); err != nil || code != 1 {
		t.Fatalf("validate --json: exit %d, %v\n%s", code, err, stdout)
	}
	if len(probs) != 1 || probs[0]["kind"] != "stale" || probs[0]["status"] != "undefined" ||
		probs[0]["anchor"].(map[string]any)["symbol"] != "GetOrder" {
		t.Errorf("validate --json: %s", stdout)
	}
	const label = "May be outdated: `GetOrder` is no longer defined in internal/db/queries.go."
	contains(t, "recall", w.recall(dir, "how do I read an order with GetOrder"), label)
	contains(t, "list --stale", w.ok(dir, "", "list", "--stale"), "may be outdated: `GetOrder` is no longer defined in internal/db/queries.go")

	// It comes back, and the file is renamed with git.
	writeFile(t, queriesGo, queries)
	git("mv", "internal/db/queries.go", "internal/db/orders.go")
	stdout, _, code = w.run(dir, "", "validate")
	if code != 1 || !strings.Contains(stdout, "stale: internal/db/queries.go was renamed to internal/db/orders.go") {
		t.Errorf("validate after the rename: exit %d\n%s", code, stdout)
	}
	stdout, stderr, code := w.run(dir, "", "validate", "--fix")
	if code != 2 || !strings.Contains(stderr, "--yes") {
		t.Errorf("validate --fix: exit %d, want 2 (a dry run)\n%s", code, stderr)
	}
	contains(t, "validate --fix", stdout,
		"internal/db/queries.go was renamed to internal/db/orders.go",
		"- Orders are read with `GetOrder` in internal/db/queries.go, never with raw SQL in handlers.",
		"+ Orders are read with `GetOrder` in internal/db/orders.go, never with raw SQL in handlers.")
	// The new version is written; neither it nor the memory's first
	// version is committed: both are to be.
	out = w.ok(dir, "", "validate", "--fix", "--yes")
	written := regexp.MustCompile(`written as (mem_[0-9a-f-]{36})`).FindStringSubmatch(out)
	if written == nil {
		t.Fatalf("validate --fix --yes wrote nothing:\n%s", out)
	}
	contains(t, "validate --fix --yes", out, "Commit .forge/memory/"+first+".md and .forge/memory/"+written[1]+
		".md for the repository's other clones to have them.")
	contains(t, "validate", w.ok(dir, "", "validate"), "No problems found.")
	if recalled := w.recall(dir, "how do I read an order with GetOrder"); strings.Contains(recalled, "May be outdated") ||
		!strings.Contains(recalled, "internal/db/orders.go") {
		t.Errorf("recall after the fix:\n%s", recalled)
	}
}

// withoutGit returns env without its GIT_* variables, for a test's own git
// commands: a git hook or git rebase -x running the tests sets GIT_DIR,
// which would point them at the repository being worked on.
func withoutGit(env []string) []string {
	return slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
}
