package workspace_test

import (
	"context"
	"slices"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
)

// forked writes a fork as a git merge of two branches that each changed a
// memory leaves it: id(3) changed by id(4) and, later, by id(5), which is
// in force; and a chain that did not fork, id(6) ← id(7).
func forked(t *testing.T) *workspace.Workspace {
	t.Helper()
	ws := open(t)
	handWrite(t, ws, mem(3, memcore.ScopeRepo, "Migrations are numbered."),
		mem(4, memcore.ScopeRepo, "Migrations are named by timestamp.", 3),
		mem(5, memcore.ScopeRepo, "Migrations are made by goose create.", 3),
		mem(6, memcore.ScopeRepo, "Tests run with make test."),
		mem(7, memcore.ScopeRepo, "Tests run with go test ./....", 6))
	return ws
}

// A fork's change that is not in force is shown, marked as a parallel
// change, wherever the memory's history is: show of any of its versions,
// list --all-versions, export; and list says that the memory forked. It was
// left out of show's and export's history, and list --all-versions called
// it superseded, though nothing supersedes it.
func TestForkShowsTheParallelChange(t *testing.T) {
	ctx := context.Background()
	ws := forked(t)
	tests := []struct {
		ref          string
		wantChain    []string
		wantParallel bool
		wantHead     bool
	}{
		{id(3), []string{id(3), id(4), id(5)}, false, false},
		{id(4), []string{id(3), id(4), id(5)}, true, false},
		{id(5), []string{id(3), id(4), id(5)}, false, true},
		{id(6), []string{id(6), id(7)}, false, false},
		{id(7), []string{id(6), id(7)}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.ref[:12], func(t *testing.T) {
			d, err := ws.Show(ctx, tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			var chain, parallel []string
			for _, v := range d.Chain {
				chain = append(chain, v.ID)
				if v.Parallel {
					parallel = append(parallel, v.ID)
				}
			}
			if !slices.Equal(chain, tt.wantChain) {
				t.Errorf("chain = %v, want %v", chain, tt.wantChain)
			}
			if want := tt.wantChain[0] == id(3); want != slices.Equal(parallel, []string{id(4)}) {
				t.Errorf("parallel versions = %v, want [%s] in the forked chain only", parallel, id(4))
			}
			if d.Memory.Parallel != tt.wantParallel || d.Memory.Head != tt.wantHead {
				t.Errorf("parallel %v, head %v; want %v, %v", d.Memory.Parallel, d.Memory.Head, tt.wantParallel, tt.wantHead)
			}
		})
	}

	res, err := ws.List(ctx, workspace.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{id(5)}; !slices.Equal(res.Forked, want) {
		t.Errorf("list: forked = %v, want %v", res.Forked, want)
	}
	all, err := ws.List(ctx, workspace.ListOptions{AllVersions: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all.Memories {
		if m.Parallel != (m.ID == id(4)) {
			t.Errorf("list --all-versions: %s parallel = %v", m.ID, m.Parallel)
		}
	}

	exp, err := ws.Export(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	histories := map[string][]string{}
	for _, s := range exp.Sections {
		for _, c := range s.Chains {
			for _, v := range c.History {
				mark := v.ID
				if v.Parallel {
					mark += " (parallel)"
				}
				histories[c.Head.ID] = append(histories[c.Head.ID], mark)
			}
		}
	}
	if got, want := histories[id(5)], []string{id(3), id(4) + " (parallel)"}; !slices.Equal(got, want) {
		t.Errorf("export: history of %s = %v, want %v", id(5), got, want)
	}
	if got, want := histories[id(7)], []string{id(6)}; !slices.Equal(got, want) {
		t.Errorf("export: history of %s = %v, want %v", id(7), got, want)
	}
}
