package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
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

// settleEdit matches an edit validate's advice on a fork gives: the
// supersedes and version to set in a file.
var settleEdit = regexp.MustCompile(`supersedes: (mem_[0-9a-f-]{36}) and version: (\d+) in (mem_[0-9a-f]{8})'s file`)

// validate names the change of a fork that is in force — the one on the
// line to the chain's head, which is not the best of the two successors
// when the other branch went on to a later version — and its two edits,
// each followed, settle the fork: no fork is reported, the chain is a line
// with no parallel change, and its head is the one the edit said. The
// advice was to "forget one branch", which forgets the whole memory.
func TestValidateSaysHowToSettleAFork(t *testing.T) {
	ctx := context.Background()
	wentOn := mem(8, memcore.ScopeRepo, "Migrations are named by timestamp, in UTC.", 4)
	wentOn.Meta.Version = 3
	tests := []struct {
		name     string
		ms       []*memcore.MemoryFile
		inForce  string // what the message says is in force
		wantEdit []string
		// wantHeads are the heads after each edit.
		wantHeads []string
	}{
		{"one change on each branch", []*memcore.MemoryFile{
			mem(3, memcore.ScopeRepo, "Migrations are numbered."),
			mem(4, memcore.ScopeRepo, "Migrations are named by timestamp.", 3),
			mem(5, memcore.ScopeRepo, "Migrations are made by goose create.", 3),
		}, "mem_00000005 is in force, the other change is not",
			[]string{"supersedes: " + id(4) + " and version: 3 in mem_00000005's file keep mem_00000005 in force",
				"supersedes: " + id(5) + " and version: 3 in mem_00000004's file make mem_00000004 current instead"},
			[]string{id(5), id(4)}},
		{"the branch of the older change went on", []*memcore.MemoryFile{
			mem(3, memcore.ScopeRepo, "Migrations are numbered."),
			mem(4, memcore.ScopeRepo, "Migrations are named by timestamp.", 3),
			mem(5, memcore.ScopeRepo, "Migrations are made by goose create.", 3),
			wentOn,
		}, "mem_00000004 is in force (up to its version 3, mem_00000008), the other change is not",
			[]string{"supersedes: " + id(5) + " and version: 3 in mem_00000004's file keep mem_00000008 in force",
				"supersedes: " + id(8) + " and version: 4 in mem_00000005's file make mem_00000005 current instead"},
			[]string{id(8), id(5)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := open(t)
			handWrite(t, ws, tt.ms...)
			fork := forkProblem(t, ws)
			if fork == nil {
				t.Fatal("validate reports no fork")
			}
			for _, want := range append([]string{tt.inForce}, tt.wantEdit...) {
				if !strings.Contains(fork.Message, want) {
					t.Errorf("the fork's message does not say %q:\n%s", want, fork.Message)
				}
			}
			edits := settleEdit.FindAllStringSubmatch(fork.Message, -1)
			if len(edits) != len(tt.wantHeads) {
				t.Fatalf("%d edits in the message, want %d:\n%s", len(edits), len(tt.wantHeads), fork.Message)
			}
			for i, e := range edits {
				ws := open(t)
				handWrite(t, ws, tt.ms...)
				applyEdit(t, ws, e[3], e[1], e[2])
				if p := forkProblem(t, ws); p != nil {
					t.Errorf("after %q, validate still reports the fork: %s", e[0], p.Message)
				}
				d, err := ws.Show(ctx, id(3))
				if err != nil {
					t.Fatal(err)
				}
				if head := d.Chain[len(d.Chain)-1]; head.ID != tt.wantHeads[i] {
					t.Errorf("after %q, the head is %s, want %s", e[0], head.ID, tt.wantHeads[i])
				}
				for _, v := range d.Chain {
					if v.Parallel {
						t.Errorf("after %q, %s is still a parallel change", e[0], v.ID)
					}
				}
			}
		})
	}
}

// Two branches that made one change alike (two teammates approving one
// memory) fork the chain with one text: validate says so, and that
// deleting the copy not in force settles it; recall shows it once.
func TestForkOfOneChangeIsSettledByDeletingTheCopy(t *testing.T) {
	ctx := context.Background()
	ws := open(t)
	text := "Migrations are named by timestamp."
	handWrite(t, ws, mem(3, memcore.ScopeRepo, "Migrations are numbered."), mem(4, memcore.ScopeRepo, text, 3), mem(5, memcore.ScopeRepo, text, 3))
	fork := forkProblem(t, ws)
	if fork == nil {
		t.Fatal("validate reports no fork")
	}
	copyPath := filepath.Join(ws.Store().Dir(memcore.ScopeRepo), id(4)+".md")
	for _, want := range []string{"mem_00000005 is in force", "both made the same change", "delete mem_00000004, the copy not in force (git rm " + copyPath + ")"} {
		if !strings.Contains(fork.Message, want) {
			t.Errorf("the fork's message does not say %q:\n%s", want, fork.Message)
		}
	}
	if strings.Contains(fork.Message, "supersedes:") {
		t.Errorf("the fork's message asks for an edit a deletion makes needless:\n%s", fork.Message)
	}
	res := recallText(t, ws, "How are migrations named, by timestamp?")
	if strings.Contains(res.Injection, "parallel change") {
		t.Errorf("recall shows the same change twice:\n%s", res.Injection)
	}
	if err := os.Remove(copyPath); err != nil {
		t.Fatal(err)
	}
	if p := forkProblem(t, ws); p != nil {
		t.Errorf("after deleting the copy, validate still reports the fork: %s", p.Message)
	}
	if d, err := ws.Show(ctx, id(3)); err != nil || d.Chain[len(d.Chain)-1].ID != id(5) {
		t.Errorf("after deleting the copy: %+v, %v; want the chain to end at %s", d, err, id(5))
	}
}

// forkProblem is the fork validate reports, or nil.
func forkProblem(t *testing.T, ws *workspace.Workspace) *workspace.Problem {
	t.Helper()
	probs, err := ws.Validate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		if p.Kind == workspace.ProblemFork {
			return &p
		}
	}
	return nil
}

// applyEdit sets supersedes and version in the repository's file of the
// memory whose id starts with short, as a person editing it would.
func applyEdit(t *testing.T, ws *workspace.Workspace, short, supersedes, version string) {
	t.Helper()
	dir := ws.Store().Dir(memcore.ScopeRepo)
	paths, err := filepath.Glob(filepath.Join(dir, short+"-*.md"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("the file of %s: %v %v", short, paths, err)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	m, err := memcore.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	m.Meta.Supersedes = &supersedes
	if m.Meta.Version, err = strconv.Atoi(version); err != nil {
		t.Fatal(err)
	}
	handWrite(t, ws, m)
}

// forget of the change of a fork that is not in force is refused, naming
// the version in force, and writes nothing: forgetting the chain would
// forget that version too. forget of the version in force forgets the
// memory.
func TestForgetRefusesAParallelChange(t *testing.T) {
	ctx := context.Background()
	ws := forked(t)
	_, err := ws.Forget(ctx, id(4), "")
	if !errors.Is(err, workspace.ErrInvalidInput) || !strings.Contains(err.Error(), "mem_00000004 is a parallel change that is not in force: mem_00000005") ||
		!strings.Contains(err.Error(), "forget mem_00000005 does that") {
		t.Fatalf("forget of the parallel change: %v", err)
	}
	all, err := ws.List(ctx, workspace.ListOptions{AllVersions: true, Retired: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Memories) != 5 {
		t.Errorf("forget of the parallel change wrote something: %d versions, want 5", len(all.Memories))
	}
	res, err := ws.Forget(ctx, id(5), "")
	if err != nil || res.Retired != id(5) {
		t.Fatalf("forget of the version in force: %+v, %v", res, err)
	}
}
