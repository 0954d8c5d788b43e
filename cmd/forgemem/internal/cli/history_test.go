package cli_test

import (
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
)

// A memory forgotten and brought back with the same text shows, in the
// recalled block, show and export, the forgetting and the bringing back as
// what they are — never as changes of its text ("changed 2 times").
func TestForgettingIsNotAChangeOfText(t *testing.T) {
	f := newFixture(t)
	f.seed()
	const text = "Migrations live in db/migrations, one file per change."
	for _, args := range [][]string{
		{"forget", id(4), "--reason", "we moved to Atlas"},
		{"remember", text, "--supersedes", id(4)},
	} {
		if r := f.run(args...); r.code != cli.ExitOK {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	recall := f.runIn(t.Context(), f.repo, conversation("Where do the migrations live?"), "recall")
	show := f.run("show", id(4))
	export := f.run("export")
	for _, c := range []struct {
		name, out string
		want      []string
	}{
		{"recall", recall.stdout, []string{
			"History, oldest first (forgotten once, then brought back):\n",
			"  - version 1, 2025-03-03: " + text + "\n",
			"  - version 2, 2025-03-10: forgotten (we moved to Atlas).\n",
			"  - version 3, 2025-03-10, brought back: the current text above.\n",
		}},
		{"show", normalizeSpaces(show.stdout), []string{
			"v2 mem_NEW00001 2025-03-10 (forgotten: we moved to Atlas)",
			"v3 mem_NEW00002 2025-03-10 " + text + " (brought back)",
		}},
		{"export", export.stdout, []string{
			"version 3, 2025-03-10, manual, brought back after it was forgotten*",
			"(`" + id(4) + "`): " + text + "\n",
			"): forgotten: we moved to Atlas\n",
		}},
	} {
		out := f.normalize(c.out)
		if strings.Contains(out, "changed 2 times") {
			t.Errorf("%s counts the forgetting as changes:\n%s", c.name, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q:\n%s", c.name, w, out)
			}
		}
	}
}

// normalizeSpaces turns runs of spaces (a table's alignment) into one.
func normalizeSpaces(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}
