package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
)

// writeTooLarge writes, as memory n of the repository, a valid memory file
// one byte over memcore.MaxFileBytes, and returns its path.
func (f *fixture) writeTooLarge(n int) string {
	f.t.Helper()
	m := memory(n, memcore.ScopeRepo, memcore.CategoryPatterns, 7, "x")
	data, err := memcore.Serialize(m)
	if err != nil {
		f.t.Fatal(err)
	}
	m.Content += strings.Repeat("x", memcore.MaxFileBytes+1-len(data))
	if data, err = memcore.Serialize(m); err != nil || len(data) != memcore.MaxFileBytes+1 {
		f.t.Fatalf("the large file is %d bytes, %v", len(data), err)
	}
	path := filepath.Join(f.repoDir(), m.Meta.ID+".md")
	f.writeFile(path, string(data))
	return path
}

// A memory file over the size cap is not read: validate names it with its
// size and the cap (kind too-large), and stats counts it by that kind.
func TestTooLargeMemoryFile(t *testing.T) {
	f := newFixture(t)
	f.seed()
	path := f.writeTooLarge(40)

	r := f.run("validate", "--json")
	if r.code != cli.ExitFailure {
		t.Errorf("validate exit %d, want 1", r.code)
	}
	var probs []workspace.Problem
	if err := json.Unmarshal([]byte(r.stdout), &probs); err != nil {
		t.Fatal(err)
	}
	size := fmt.Sprint(memcore.MaxFileBytes + 1)
	if len(probs) != 1 || probs[0].Kind != workspace.ProblemTooLarge || probs[0].Path != path ||
		!strings.Contains(probs[0].Message, size+" bytes") || !strings.Contains(probs[0].Message, fmt.Sprint(memcore.MaxFileBytes)+" bytes") {
		t.Errorf("validate --json = %+v, want one too-large problem for %s with its size (%s bytes) and the cap", probs, path, size)
	}
	if r := f.run("validate"); !strings.Contains(r.stdout, "too-large: the file is 1.0 MiB ("+size+" bytes), over the 1 MiB limit") {
		t.Errorf("validate prints:\n%s", r.stdout)
	}

	r = f.run("stats")
	if want := "Files not read: 1 (1 too-large; forgemem validate says why)"; !strings.Contains(r.stdout, want) {
		t.Errorf("stats prints:\n%s\nwant a line %q", r.stdout, want)
	}
	var st workspace.Stats
	if err := json.Unmarshal([]byte(f.run("stats", "--json").stdout), &st); err != nil {
		t.Fatal(err)
	}
	if st.Problems != 1 || len(st.Unreadable) != 1 || st.Unreadable[0] != (workspace.Count{Name: "too-large", Count: 1}) {
		t.Errorf("stats --json: unreadable_files %d, unreadable_by_kind %+v; want 1 too-large", st.Problems, st.Unreadable)
	}
}

// list, search and export never hide files they could not read without a
// word: stderr says how many, and to run validate.
func TestUnreadableFilesAreNeverSilent(t *testing.T) {
	commands := [][]string{{"list"}, {"list", "--json"}, {"search", "locking"}, {"export"}}
	f := newFixture(t)
	f.seed()
	for _, args := range commands {
		if r := f.run(args...); r.code != cli.ExitOK || r.stderr != "" {
			t.Errorf("%v with every file readable: exit %d, stderr %q; want 0 and nothing", args, r.code, r.stderr)
		}
	}
	f.writeFile(filepath.Join(f.repoDir(), id(41)+".md"), "---\nid: [broken\n---\nText.\n")
	f.writeTooLarge(42)
	// A file served repaired is read: it is not counted.
	f.writeFile(filepath.Join(f.userDir(), id(43)+".md"), "---\nid: "+id(43)+"\nversion: 1\nscope: user\ncategory: patterns\n---\n\nEdited by hand.\n")
	for _, args := range commands {
		r := f.run(args...)
		want := "forgemem " + args[0] + ": 2 files in the memory folders could not be read, so memories may be missing here; forgemem validate says why\n"
		if r.code != cli.ExitOK || r.stderr != want {
			t.Errorf("%v: exit %d, stderr %q; want 0 and %q", args, r.code, r.stderr, want)
		}
	}
	var st workspace.Stats
	if err := json.Unmarshal([]byte(f.run("stats", "--json").stdout), &st); err != nil {
		t.Fatal(err)
	}
	if want := []workspace.Count{{Name: "malformed", Count: 1}, {Name: "too-large", Count: 1}}; st.Problems != 2 || fmt.Sprint(st.Unreadable) != fmt.Sprint(want) {
		t.Errorf("stats --json: unreadable_files %d, by kind %v; want 2, %v", st.Problems, st.Unreadable, want)
	}
}

// validate never reads a file whole that a repository could make huge,
// nor waits on one that is not a regular file: the secret scan reads what
// the store would.
func TestValidateReadsNoHugeFile(t *testing.T) {
	f := newFixture(t)
	f.seed()
	huge := filepath.Join(f.repoDir(), id(44)+".md")
	fh, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Truncate(64 << 30); err != nil { // sparse: 64 GiB that would never fit in memory
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	fh.Close()
	r := f.run("validate", "--json")
	var probs []workspace.Problem
	if err := json.Unmarshal([]byte(r.stdout), &probs); err != nil {
		t.Fatalf("%v: %s %s", err, r.stdout, r.stderr)
	}
	if len(probs) != 1 || probs[0].Kind != workspace.ProblemTooLarge || !strings.Contains(probs[0].Message, "64 GiB") {
		t.Errorf("validate --json = %+v, want the 64 GiB file as too-large", probs)
	}
}
