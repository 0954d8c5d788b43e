package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
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
	} {
		if !slices.Contains(kinds, string(want)) {
			t.Errorf("no %s problem among %v", want, kinds)
		}
	}
}
