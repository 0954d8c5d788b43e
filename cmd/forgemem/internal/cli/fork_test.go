package cli_test

import (
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
	"github.com/forgemem/forgemem/memcore"
)

// seedFork writes what a git merge of two branches that each changed a
// memory leaves: id(40) changed by id(41) on one branch and by id(42), a
// day later, on the other; id(42) is in force.
func (f *fixture) seedFork() {
	f.t.Helper()
	repo, cat := memcore.ScopeRepo, memcore.CategoryProjectConventions
	root := memory(40, repo, cat, 2, "Migrations are numbered sequentially.")
	f.handWrite(repo, id(40), root)
	f.handWrite(repo, id(41), supersedes(memory(41, repo, cat, 3, "Migrations are named by timestamp."), root))
	f.handWrite(repo, id(42), supersedes(memory(42, repo, cat, 4, "Migrations are made by goose create."), root))
}

// Wherever a memory's history shows, the change of a fork that is not in
// force shows as a parallel change, and list says that a memory forked:
// show left it out of the history (of the version in force and of itself,
// which it called superseded), list --all-versions called it superseded,
// and list and export said nothing.
func TestForkShowsTheParallelChange(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"fork_show_parallel", []string{"show", id(41)}},
		{"fork_show_head", []string{"show", id(42)}},
		{"fork_list", []string{"list"}},
		{"fork_list_all_versions", []string{"list", "--all-versions"}},
		{"fork_export", []string{"export"}},
	}
	f := newFixture(t)
	f.seedFork()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.t = t
			f.check(tt.name, f.run(tt.args...), cli.ExitOK)
		})
	}
}
