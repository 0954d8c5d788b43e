package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
)

// damage adds to the fixture's folders one example of every problem
// validate reports.
func (f *fixture) damage() {
	repo, user := memcore.ScopeRepo, memcore.ScopeUser
	// A file that does not parse.
	f.writeFile(filepath.Join(f.repoDir(), id(20)+".md"), "---\nid: [unclosed\n---\nHalf-edited.\n")
	// An id that differs from the file name.
	f.handWrite(repo, id(21), memory(22, repo, memcore.CategoryPatterns, 7, "Renamed by hand."))
	// A dangling supersedes and a dangling link.
	f.handWrite(repo, id(23), supersedes(memory(23, repo, memcore.CategoryPatterns, 7, "Its predecessor was deleted."), memory(98, repo, memcore.CategoryPatterns, 1, "x")))
	f.handWrite(repo, id(24), link(memory(24, repo, memcore.CategoryPatterns, 7, "Links to a deleted memory."), memcore.RelationshipRefines, id(99)))
	// A supersedes cycle.
	a, b := memory(25, repo, memcore.CategoryPatterns, 8, "Cycle, first."), memory(26, repo, memcore.CategoryPatterns, 8, "Cycle, second.")
	f.handWrite(repo, id(25), supersedes(a, b))
	f.handWrite(repo, id(26), supersedes(memory(26, repo, memcore.CategoryPatterns, 8, "Cycle, second."), memory(25, repo, memcore.CategoryPatterns, 8, "")))
	// A fork: two versions supersede one.
	root := memory(27, repo, memcore.CategoryPatterns, 9, "Fork root.")
	f.handWrite(repo, id(27), root)
	f.handWrite(repo, id(28), supersedes(memory(28, repo, memcore.CategoryPatterns, 10, "Fork, one branch."), root))
	f.handWrite(repo, id(29), supersedes(memory(29, repo, memcore.CategoryPatterns, 11, "Fork, the other branch."), root))
	// A leaked secret, written by hand (capture would have redacted it).
	f.handWrite(user, id(30), memory(30, user, memcore.CategoryUserFacts, 12, "Deploys with the token ghp_abcdefghijklmnopqrstuvwxyz0123456789."))
	// A repo memory pointing at a user-scope one.
	f.handWrite(repo, id(31), link(memory(31, repo, memcore.CategoryPatterns, 12, "Follows the user's style."), memcore.RelationshipRelatesTo, id(5)))
	// A memory file that is a symbolic link, never followed.
	if err := mkSymlink("/etc/hostname", filepath.Join(f.repoDir(), id(35)+".md")); err != nil {
		f.t.Fatal(err)
	}
	// A user memory pointing at a repo one.
	f.handWrite(user, id(34), link(memory(34, user, memcore.CategoryCodingPreferences, 12, "Keeps to this repository's migrations."), memcore.RelationshipRelatesTo, id(4)))
	// A user memory in the repository's folder, and a note that is not a memory.
	f.handWrite(repo, id(32), memory(32, user, memcore.CategoryUserFacts, 12, "Misplaced."))
	f.writeFile(filepath.Join(f.repoDir(), "README.md"), "# Our memories\n")
	// A merge of two branches that both changed a memory.
	f.writeFile(filepath.Join(f.repoDir(), id(36)+".md"), "---\nid: "+id(36)+"\ncreated_at: 2025-01-01T00:00:00Z\nversion: 1\nscope: repo\ncategory: patterns\n---\n\n"+
		"<<<<<<< HEAD\nRelease on Fridays.\n=======\nRelease on Mondays.\n>>>>>>> release-days\n")
	// A hand edit that left an escape sequence in a memory's text: read,
	// shown escaped, reported.
	f.handWrite(repo, id(37), memory(37, repo, memcore.CategoryPatterns, 12, "Logs in \x1b[31mred\x1b[0m on failure."))
	// A hand edit that lost created_at: served, repaired.
	edited := filepath.Join(f.userDir(), id(33)+".md")
	f.writeFile(edited, "---\nid: "+id(33)+"\nversion: 1\nscope: user\ncategory: patterns\n---\n\nEdited by hand.\n")
	if err := os.Chtimes(edited, now, now); err != nil { // the repair dates it by its modification time
		f.t.Fatal(err)
	}
}

func TestValidate(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.t = t
	f.check("validate_clean", f.run("validate"), cli.ExitOK)

	f.damage()
	f.check("validate", f.run("validate"), cli.ExitFailure)
	r := f.run("validate", "--json")
	f.check("validate_json", r, cli.ExitFailure)

	var probs []workspace.Problem
	if err := json.Unmarshal([]byte(r.stdout), &probs); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, p := range probs {
		kinds = append(kinds, string(p.Kind))
		if p.Path == "" || p.Scope == "" || p.Message == "" {
			t.Errorf("problem %+v lacks a path, scope or message", p)
		}
		if strings.Contains(p.Message, "ghp_") {
			t.Errorf("a problem shows the secret: %s", p.Message)
		}
	}
	for _, want := range []workspace.ProblemKind{
		workspace.ProblemMalformed, workspace.ProblemIDMismatch, workspace.ProblemDanglingSupersedes,
		workspace.ProblemDanglingLink, workspace.ProblemCycle, workspace.ProblemFork, workspace.ProblemSecret,
		workspace.ProblemCrossScope, workspace.ProblemScopeMismatch, workspace.ProblemNotAMemory, workspace.ProblemRepaired,
		workspace.ProblemMergeConflict, workspace.ProblemUnsafeCharacter,
	} {
		if !slices.Contains(kinds, string(want)) {
			t.Errorf("no %s problem among %v", want, kinds)
		}
	}
}

// stats lines its folders' columns up on a terminal when a folder's path
// holds CJK characters, two columns each: the counts and the cache size
// start at the same display column on every scope's line.
func TestStatsAlignsPathsByDisplayWidth(t *testing.T) {
	f := newFixture(t)
	f.home = filepath.Join(f.root, "ホームフォルダ")
	if err := os.MkdirAll(f.home, 0o750); err != nil {
		t.Fatal(err)
	}
	f.seed()
	r, rows := statsScopeRows(t, f)
	if len(rows) != 2 || !strings.Contains(rows[1], "ホームフォルダ") {
		t.Fatalf("stats printed\n%s\nwant a line for each scope, the user's naming its folder", r.stdout)
	}
	checkSameCellStarts(t, rows)
}

// A tab in a memory folder's path is shown as \t in stats' table, as the
// hook's one-line text shows one, and stays in the path's cell: the
// scopes' lines still start their cells at the same columns.
func TestStatsKeepsATabInAPathCell(t *testing.T) {
	f := newFixture(t)
	f.repo = filepath.Join(f.root, "my\trepo")
	if err := os.MkdirAll(filepath.Join(f.repo, ".git"), 0o750); err != nil {
		t.Fatal(err)
	}
	f.seed()
	r, rows := statsScopeRows(t, f)
	want := filepath.Join(f.root, `my\trepo`, ".forge", "memory")
	if len(rows) != 2 || !strings.Contains(rows[0], "  "+want+"  ") || strings.Contains(r.stdout, "\t") {
		t.Fatalf("stats printed\n%s\nwant a line for each scope, the repository's naming its folder as %s, and no tab", r.stdout, want)
	}
	checkSameCellStarts(t, rows)
}

// statsScopeRows runs stats in f and returns its result and its table's
// lines of the two scopes.
func statsScopeRows(t *testing.T, f *fixture) (result, []string) {
	t.Helper()
	r := f.run("stats")
	if r.code != cli.ExitOK {
		t.Fatalf("stats: exit %d, %s", r.code, r.stderr)
	}
	var rows []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "  repo  ") || strings.HasPrefix(l, "  user  ") {
			rows = append(rows, l)
		}
	}
	return r, rows
}

// checkSameCellStarts checks that stats' two scope lines start their 4
// cells at the same display columns.
func checkSameCellStarts(t *testing.T, rows []string) {
	t.Helper()
	repo, user := cellStarts(rows[0]), cellStarts(rows[1])
	if len(repo) != 4 || fmt.Sprint(repo) != fmt.Sprint(user) {
		t.Errorf("stats starts the cells of its scopes' lines at columns %v and %v, want the same 4:\n%s\n%s", repo, user, rows[0], rows[1])
	}
}

// cellGap separates the cells of a table whose cells hold no two spaces in
// a row.
var cellGap = regexp.MustCompile(`  +`)

// cellStarts is the display column each cell of an indented table line
// starts at.
func cellStarts(line string) []int {
	var starts []int
	for _, loc := range cellGap.FindAllStringIndex(line, -1) {
		starts = append(starts, termtext.Width(line[:loc[1]]))
	}
	return starts
}

// stats names what a memory file does not record — its trigger, the
// reason it waits for review — as its text does, "unrecorded", in --json
// too, and each count of --json is in the text under the same name.
func TestStatsNamesWhatIsNotRecorded(t *testing.T) {
	f := newFixture(t)
	f.seed()
	bare := memory(7, memcore.ScopeRepo, memcore.CategoryPatterns, 7, "Written by hand, saying neither its trigger nor why it waits.")
	bare.Meta.Trigger, bare.Meta.Status = "", memcore.StatusPending
	f.handWrite(memcore.ScopeRepo, id(7), bare)

	text := f.run("stats")
	r := f.run("stats", "--json")
	if text.code != cli.ExitOK || r.code != cli.ExitOK {
		t.Fatalf("stats: exit %d and %d, stderr %q %q", text.code, r.code, text.stderr, r.stderr)
	}
	var st workspace.Stats
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		counts []workspace.Count
		line   string // the text's line of these counts
		want   workspace.Count
	}{
		{"triggers", st.Triggers, "Written by trigger:", workspace.Count{Name: workspace.Unrecorded, Count: 1}},
		{"waiting_by_rule", st.WaitingByRule, "Waiting for your review:", workspace.Count{Name: workspace.Unrecorded, Count: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Contains(tt.counts, tt.want) {
				t.Errorf("stats --json %s: %+v, want %+v among them", tt.name, tt.counts, tt.want)
			}
			var line string
			for _, l := range strings.Split(text.stdout, "\n") {
				if strings.HasPrefix(l, tt.line) {
					line = l
				}
			}
			for _, c := range tt.counts {
				if c.Name == "" {
					t.Errorf("stats --json %s has a count without a name: %+v", tt.name, tt.counts)
				}
				if !strings.Contains(line, c.Name+" "+fmt.Sprint(c.Count)) && !strings.Contains(line, fmt.Sprint(c.Count)+" "+c.Name) {
					t.Errorf("stats --json %s has %s %d, the text does not: %q", tt.name, c.Name, c.Count, line)
				}
			}
		})
	}
}
