package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
)

// validate says what a file of a memory folder that is not named by a
// memory id is, when it can tell — what git mergetool leaves beside a
// memory it resolves (its copies while it runs, the .orig backup after),
// a copy of a memory, a memory renamed by hand — and what to do with it;
// it said "rename or move it" of each, and nothing of a .orig backup,
// which a git add commits with the memories. A copy of a memory whose file
// is there is not counted among the files that could not be read (list,
// search and export say memories may be missing for those); the others
// are.
func TestValidateSaysWhatAFileThatIsNotAMemoryIs(t *testing.T) {
	ctx := context.Background()
	ws := open(t)
	m := mem(1, memcore.ScopeRepo, "Database access goes through the repository layer.")
	handWrite(t, ws, m)
	data, err := memcore.Serialize(m)
	if err != nil {
		t.Fatal(err)
	}
	renamed, err := memcore.Serialize(mem(2, memcore.ScopeRepo, "Migrations live in db/migrations."))
	if err != nil {
		t.Fatal(err)
	}
	conflicted := strings.Replace(string(data), "Database access goes through the repository layer.\n",
		"<<<<<<< HEAD\nDatabase access goes through the repository layer.\n=======\nDatabase access goes through sqlc.\n>>>>>>> theirs\n", 1)
	tests := []struct {
		name, content string
		want          string
		counted       bool // among the files that could not be read
	}{
		{id(1) + "_BACKUP_4242.md", conflicted, "a copy of " + id(1) + ", with the conflict, that git mergetool made while resolving a merge conflict in it, not a memory: the tool deletes it when it ends, so delete it if the tool did not finish", false},
		{id(1) + "_BASE_4242.md", string(data), "a copy of " + id(1) + ", as the two branches' common ancestor had it, that git mergetool made", false},
		{id(1) + "_LOCAL_4242.md", string(data), "a copy of " + id(1) + ", as your branch had it, that git mergetool made", false},
		{id(1) + "_REMOTE_4242.md", string(data), "a copy of " + id(1) + ", as the branch merged had it, that git mergetool made", false},
		{id(1) + ".md.orig", conflicted, "the backup of " + id(1) + ".md that git mergetool keeps, as the file was before its merge conflict was resolved, not a memory: delete it (git config mergetool.keepBackup false stops them)", false},
		{id(1) + " (copy).md", string(data), "a copy of " + id(1) + ", whose file is " + id(1) + ".md: only that file is read as the memory, so carry over what this one changes, if anything, and delete it", false},
		{"migrations.md", string(renamed), "the file holds " + id(2) + ", but only a file named " + id(2) + ".md is read as that memory: rename it to " + id(2) + ".md", true},
		{"README.md", "# Our memories\n", "the file name is not <memory id>.md, so it is not read as a memory; rename or move it", true},
	}
	dir := ws.Store().Dir(memcore.ScopeRepo)
	wantCount := 0
	for _, tt := range tests {
		if err := os.WriteFile(filepath.Join(dir, tt.name), []byte(tt.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if tt.counted {
			wantCount++
		}
	}
	probs, err := ws.Validate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]workspace.Problem{}
	for _, p := range probs {
		got[filepath.Base(p.Path)] = p
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := got[tt.name]
			if !ok {
				t.Fatalf("validate says nothing of %s", tt.name)
			}
			if p.Kind != workspace.ProblemNotAMemory || p.ID != "" || !strings.Contains(p.Message, tt.want) {
				t.Errorf("%s: %s (id %q): %s\nwant not-a-memory, no id: %s", tt.name, p.Kind, p.ID, p.Message, tt.want)
			}
		})
	}
	if n, err := ws.UnreadableCount(ctx); err != nil || n != wantCount {
		t.Errorf("UnreadableCount = %d, %v; want %d", n, err, wantCount)
	}
}
