package cli_test

import (
	"strings"
	"testing"
)

// --stale is list's own flag; on every other command it is the setting
// memory.stale.
func TestStaleFlagIsListsOrTheSettings(t *testing.T) {
	f := newFixture(t)
	r := f.run("config", "--stale", "drop")
	if r.code != 0 || !strings.Contains(r.stdout, "memory.stale") || !strings.Contains(r.stdout, "flag --stale") {
		t.Errorf("config --stale drop: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := f.run("list", "--stale"); r.code != 0 || !strings.Contains(r.stdout, "No memory here names code that moved or went away.") {
		t.Errorf("list --stale: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := f.run("config", "--stale", "hide"); r.code == 0 || !strings.Contains(r.stderr, "ignore, label or drop") {
		t.Errorf("config --stale hide: exit %d\n%s", r.code, r.stderr)
	}
}

func TestRememberAnchorFlag(t *testing.T) {
	f := newFixture(t)
	r := f.run("remember", "Orders go through GetOrder.", "--scope", "repo", "--category", "patterns", "--anchor", "internal/db/queries.go#GetOrder")
	if r.code != 0 || !strings.Contains(r.stdout, "Anchors: internal/db/queries.go#GetOrder.") ||
		!strings.Contains(r.stderr, "internal/db/queries.go#GetOrder is not in the working tree now") {
		t.Errorf("remember --anchor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := f.run("remember", "x", "--scope", "repo", "--category", "patterns", "--anchor", "/etc/passwd"); r.code != 2 || !strings.Contains(r.stderr, "is absolute") {
		t.Errorf("remember --anchor /etc/passwd: exit %d\n%s", r.code, r.stderr)
	}
	if r := f.run("validate", "--yes"); r.code != 2 || !strings.Contains(r.stderr, "--yes goes with --fix") {
		t.Errorf("validate --yes: exit %d\n%s", r.code, r.stderr)
	}
	if r := f.run("list", "--stale"); r.code != 0 || !strings.Contains(r.stdout, "internal/db/queries.go no longer exists") {
		t.Errorf("list --stale: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
