package cli_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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

// list, search, export and recall never hide files they could not read
// without a word: stderr says how many, and to run validate.
func TestUnreadableFilesAreNeverSilent(t *testing.T) {
	commands := [][]string{{"list"}, {"list", "--json"}, {"search", "locking"}, {"export"}, {"recall", "-m", "locking"}}
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
	// recall --json counts them in its document.
	var doc struct {
		Unreadable int `json:"unreadable_files"`
	}
	if r := f.run("recall", "-m", "locking", "--json"); json.Unmarshal([]byte(r.stdout), &doc) != nil || doc.Unreadable != 2 {
		t.Errorf("recall --json: %q; want unreadable_files 2", r.stdout)
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

// remember takes at most workspace.MaxContentRunes characters of text,
// however many bytes they take: more is a usage error saying the limit
// and what to do, and nothing is written.
func TestRememberRefusesTooMuchText(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		code   int
		stderr string
	}{
		{"at the limit", strings.Repeat("a", workspace.MaxContentRunes), cli.ExitOK, ""},
		{"at the limit in 4-byte characters", strings.Repeat("𝄞", workspace.MaxContentRunes), cli.ExitOK, ""},
		{"one character over", strings.Repeat("é", workspace.MaxContentRunes+1), cli.ExitUsage,
			"the text to remember is 65537 characters long, over the limit of 65536 characters: a memory is one short statement"},
		{"50 MB", strings.Repeat("a", 50<<20), cli.ExitUsage, "over the limit of 65536 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			r := f.run("remember", tt.text, "--scope", "user", "--category", "patterns")
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %.300q; want %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
			ms, err := f.store().List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if written := len(ms) == 1; written != (tt.code == cli.ExitOK) {
				t.Errorf("%d memories written", len(ms))
			}
		})
	}
}

// forget, purge and the ids remember writes (--supersedes, links) need at
// least four hexadecimal digits of an id, even when a shorter prefix
// matches the only memory there is; show, which only reads, takes any
// unique prefix.
func TestShortPrefixesDoNotChangeMemories(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"forget mem_", []string{"forget", "mem_"}, cli.ExitUsage, `"mem_" is too short a prefix to forget a memory by: give at least 4 hexadecimal digits`},
		{"forget one digit", []string{"forget", "0"}, cli.ExitUsage, `"0" is too short a prefix to forget`},
		{"forget three digits", []string{"forget", "mem_000"}, cli.ExitUsage, "too short a prefix to forget"},
		{"purge", []string{"purge", "mem_", "--yes"}, cli.ExitUsage, "too short a prefix to purge"},
		{"purge dry run", []string{"purge", "00"}, cli.ExitUsage, "too short a prefix to purge"},
		{"supersedes", []string{"remember", "New text.", "--supersedes", "000"}, cli.ExitUsage, "too short a prefix to supersede"},
		{"link", []string{"remember", "New text.", "--scope", "repo", "--category", "patterns", "--refines", "mem_0"}, cli.ExitUsage, "too short a prefix to link to"},
		{"show reads", []string{"show", "0"}, cli.ExitOK, ""},
		{"forget four digits", []string{"forget", "0000"}, cli.ExitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			only := memory(1, memcore.ScopeRepo, memcore.CategoryPatterns, 2, "The only memory there is.")
			f.write(only)
			r := f.run(tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tt.code, tt.want)
			}
			ms, err := f.store().List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if changed := len(ms) != 1; changed != (tt.name == "forget four digits") {
				t.Errorf("%d memory files after the command", len(ms))
			}
		})
	}
}

// Every command that takes an id treats a bad one the same way: a prefix
// several memories' ids start with, or one too short to change or delete
// by, is a usage error (exit 2), since the id given cannot name one
// memory; an id no memory has is a failure (exit 1). Nothing is changed.
func TestBadIDsExitTheSameEverywhere(t *testing.T) {
	commands := [][]string{
		{"show", "ID"},
		{"forget", "ID"},
		{"purge", "ID"},
		{"purge", "ID", "--yes"},
		{"remember", "New text.", "--supersedes", "ID"},
		{"remember", "New text.", "--scope", "repo", "--category", "patterns", "--relates-to", "ID"},
		{"remember", "New text.", "--scope", "repo", "--category", "patterns", "--refines", "ID"},
		{"remember", "New text.", "--scope", "repo", "--category", "patterns", "--contradicts", "ID"},
		{"review", "--approve", "ID"},
		{"review", "--reject", "ID"},
	}
	ids := []struct {
		name, id string
		code     int
		want     string // in stderr
	}{
		{"ambiguous", "00000", cli.ExitUsage, "ambiguous memory id: 00000 matches 6 memories; give more of the id"},
		{"ambiguous with mem_", "mem_0000", cli.ExitUsage, "ambiguous memory id: mem_0000 matches 6 memories"},
		{"no match", "mem_0bad", cli.ExitFailure, "no memory has the id mem_0bad"},
		{"no match, a whole id", "mem_0000000a-0000-4000-8000-00000000000a", cli.ExitFailure, "no memory has the id"},
	}
	f := newFixture(t)
	f.seed()
	before := f.memoryFiles(t)
	for _, c := range commands {
		for _, tt := range append(ids, struct {
			name, id string
			code     int
			want     string
		}{"too short", "000", cli.ExitUsage, "too short a prefix"}) {
			args := slices.Clone(c)
			args[slices.Index(args, "ID")] = tt.id
			if c[0] == "show" && tt.name == "too short" {
				// show takes any prefix: this one several ids start with.
				tt.want = "ambiguous memory id"
			}
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				r := f.run(args...)
				if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
					t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tt.code, tt.want)
				}
				if r.stdout != "" {
					t.Errorf("stdout %q, want nothing", r.stdout)
				}
			})
		}
	}
	if after := f.memoryFiles(t); !slices.Equal(after, before) {
		t.Errorf("the memory files changed:\n%v\nthen\n%v", before, after)
	}
}

// A link given to a superseded version names its chain's current version,
// and so does an edge a new version carries from the version it
// supersedes: no stored edge names a superseded version.
func TestLinksNameTheCurrentVersion(t *testing.T) {
	f := newFixture(t)
	f.seed() // id(1) is superseded by id(2)
	old := link(memory(50, memcore.ScopeRepo, memcore.CategoryPatterns, 7, "Retry updates that lose a race."), memcore.RelationshipRelatesTo, id(1))
	f.handWrite(memcore.ScopeRepo, id(50), old)

	r := f.run("remember", "Log every retried update.", "--scope", "repo", "--category", "patterns", "--refines", id(1), "--contradicts", "00000002")
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, "mem_00000001 is an earlier version of its memory, so the link names the current version.") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = f.run("remember", "Retry updates that lose a race, three times.", "--supersedes", id(50))
	if r.code != cli.ExitOK {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	ms, err := f.store().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	g := memcore.NewGraph(ms)
	for _, m := range ms {
		if m.Meta.Trigger != memcore.TriggerManual {
			continue // the fixture's, and the hand-written one
		}
		for _, e := range m.Meta.Related {
			if g.IsSuperseded(e.ID) {
				t.Errorf("%s (%q) links to %s, a superseded version", m.Meta.ID, m.Content, e.ID)
			}
		}
		if len(m.Meta.Related) == 0 {
			t.Errorf("%s (%q) lost its links", m.Meta.ID, m.Content)
		}
	}
	if r := f.run("export"); strings.Contains(r.stdout, "refines `"+id(1)) || strings.Contains(r.stdout, "relates-to `"+id(1)) {
		t.Errorf("export prints a link to the superseded %s:\n%s", id(1), r.stdout)
	}
}

// A memory folder, or the .forge folder holding it, that is a symbolic
// link — a repository can commit one pointing anywhere — is refused with
// an error naming it and saying what to do; nothing is read or written
// where it points.
func TestLinkedMemoryFoldersAreRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("creating symbolic links needs privileges on Windows")
	}
	tests := []struct {
		name string
		// link returns the path to make a link (to an empty folder), and
		// the flag that names another folder.
		link  func(f *fixture) (path, flag string)
		scope string
	}{
		{"repo .forge", func(f *fixture) (string, string) { return filepath.Join(f.repo, ".forge"), "--repo-dir" }, "repo"},
		{"repo memory folder", func(f *fixture) (string, string) { return f.repoDir(), "--repo-dir" }, "repo"},
		{"user .forge", func(f *fixture) (string, string) { return filepath.Join(f.home, ".forge"), "--user-dir" }, "user"},
		{"user memory folder", func(f *fixture) (string, string) { return f.userDir(), "--user-dir" }, "user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			path, flag := tt.link(f)
			target := filepath.Join(f.root, "elsewhere")
			if err := os.MkdirAll(target, 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"list"},
				{"remember", "Written through a link.", "--scope", tt.scope, "--category", "patterns"},
				{"worker"},
			} {
				r := f.run(args...)
				want := path + " is a symbolic link, which forgemem never follows"
				if r.code != cli.ExitFailure || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, flag) {
					t.Errorf("%v: exit %d, stderr %q; want 1 and an error naming %s and %s", args, r.code, r.stderr, path, flag)
				}
			}
			entries, err := os.ReadDir(target)
			if err != nil || len(entries) != 0 {
				t.Errorf("%d entries were made where the link points (%v)", len(entries), err)
			}
		})
	}
}

// A huge argument where an id or a search text goes is never echoed back
// whole: the error quotes its beginning.
func TestLongArgumentsAreNotEchoed(t *testing.T) {
	f := newFixture(t)
	f.seed()
	big := strings.Repeat("word ", 14000)
	for _, args := range [][]string{{"show", big}, {"forget", big}, {"purge", big}, {"review", "--approve", big}} {
		r := f.run(args...)
		if r.code == cli.ExitOK || len(r.stderr) > 400 || !strings.Contains(r.stderr, `"word word word word wor…" is not a memory id`) {
			t.Errorf("%s of a 70 KB argument: exit %d, %d bytes of stderr: %.300q", args[0], r.code, len(r.stderr), r.stderr)
		}
	}
	if r := f.run("search", "zzqqxx "+big); r.code != cli.ExitOK || len(r.stdout)+len(r.stderr) > 4096 {
		t.Errorf("search of a 70 KB text: exit %d, %d bytes out: %.300q", r.code, len(r.stdout)+len(r.stderr), r.stdout)
	}
}

// remember writes a memory too large for the injection token budget in
// force (memory.injection_token_budget), and warns on stderr that it is
// never recalled whole into a prompt, with its size, the budget and what to
// do; a memory that fits, with the budget in force, gets no warning.
func TestRememberWarnsOfAMemoryOverTheInjectionBudget(t *testing.T) {
	tests := []struct {
		name  string
		env   []string
		runes int
		// want is what the warning says; nil for no warning.
		want []string
	}{
		{"under the default budget", nil, 3924, nil},
		{"over the default budget", nil, 7846, []string{
			"forgemem: warning: the memory is never recalled whole into a prompt with the injection token budget in force",
			"over memory.injection_token_budget (2000)",
			"split it into shorter memories, or raise memory.injection_token_budget"}},
		{"at the limit", nil, workspace.MaxContentRunes, []string{"over memory.injection_token_budget (2000)"}},
		{"over the default budget, under a raised one", []string{"FORGEMEM_INJECTION_TOKEN_BUDGET=4000"}, 7846, nil},
		{"under the default budget, over a lowered one", []string{"FORGEMEM_INJECTION_TOKEN_BUDGET=500"}, 3924,
			[]string{"over memory.injection_token_budget (500)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, asJSON := range []bool{false, true} {
				f := newFixture(t)
				f.env = tt.env
				args := []string{"remember", strings.Repeat("a", tt.runes), "--scope", "user", "--category", "patterns"}
				if asJSON {
					args = append(args, "--json")
				}
				r := f.run(args...)
				if r.code != cli.ExitOK {
					t.Fatalf("exit %d, stderr %.300q", r.code, r.stderr)
				}
				if warned := strings.Contains(r.stderr, "warning"); warned != (tt.want != nil) {
					t.Fatalf("--json %t: stderr %.300q, want a warning %t", asJSON, r.stderr, tt.want != nil)
				}
				for _, w := range tt.want {
					if !strings.Contains(r.stderr, w) {
						t.Errorf("--json %t: stderr %.300q, want %q", asJSON, r.stderr, w)
					}
				}
			}
		})
	}
}

// remember, forget --reason and review --reject --reason refuse text
// holding a control character other than tab and line breaks (a shell's
// $'\e[31m' passes one), a bidirectional formatting or an invisible
// character as a usage error naming the character and where it is, and
// write nothing; line breaks are written "\n", and emoji joined by U+200D
// are text.
func TestControlCharactersAreUsageErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
		// written is the text or reason written, "" when nothing is.
		written string
	}{
		{"remember an escape sequence", []string{"remember", "Prefers \x1b[31mtabs.", "--scope", "user", "--category", "patterns"}, cli.ExitUsage,
			"forgemem remember: invalid input: the text to remember holds a control character U+001B at character 9; remove it", ""},
		{"remember a C1 character", []string{"remember", "Prefers\u0085tabs.", "--scope", "user", "--category", "patterns"}, cli.ExitUsage,
			"the text to remember holds a control character U+0085 at character 8; remove it", ""},
		{"remember CRLF", []string{"remember", "Prefers tabs.\r\nIn Go too.", "--scope", "user", "--category", "patterns"}, cli.ExitOK, "",
			"Prefers tabs.\nIn Go too."},
		{"forget with a bell", []string{"forget", id(1), "--reason", "wrong\a"}, cli.ExitUsage,
			"the reason holds a control character U+0007 at character 6; remove it", ""},
		{"forget with CRLF", []string{"forget", id(1), "--reason", "wrong\r\nnow"}, cli.ExitOK, "", "wrong\nnow"},
		{"reject with an escape sequence", []string{"review", "--reject", id(2), "--reason", "\x1b]0;title\a"}, cli.ExitUsage,
			"the reason holds a control character U+001B at character 1; remove it", ""},
		{"remember a right-to-left override", []string{"remember", "Admins are \u202eenon\u202c.", "--scope", "user", "--category", "patterns"}, cli.ExitUsage,
			"the text to remember holds a bidirectional formatting character U+202E at character 12; remove it", ""},
		{"remember emoji joined by U+200D", []string{"remember", "The team 👨\u200d👩\u200d👧 ships.", "--scope", "user", "--category", "patterns"}, cli.ExitOK, "",
			"The team 👨\u200d👩\u200d👧 ships."},
		{"reject with a zero-width space", []string{"review", "--reject", id(2), "--reason", "not\u200bours"}, cli.ExitUsage,
			"the reason holds an invisible character U+200B at character 4; remove it", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := spaceAndRebaseFixture(t)
			r := f.run(tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
			ms, err := f.store().List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if tt.written == "" {
				if len(ms) != 2 {
					t.Errorf("%d versions in the folders, want the 2 there were", len(ms))
				}
				return
			}
			var got []string
			for _, m := range ms {
				if m.Meta.ID != id(1) && m.Meta.ID != id(2) {
					got = append(got, cmp.Or(m.Meta.RetiredReason, m.Content))
				}
			}
			if len(got) != 1 || got[0] != tt.written {
				t.Errorf("wrote %q, want one version with %q", got, tt.written)
			}
		})
	}
}

// forget --reason and review --reject --reason take at most
// workspace.MaxReasonRunes characters, as MCP's memory_forget does: more
// is a usage error saying the limit, and nothing is written.
func TestReasonsAreBounded(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"forget at the limit", []string{"forget", id(1), "--reason", strings.Repeat("𝄞", workspace.MaxReasonRunes)}, cli.ExitOK, ""},
		{"forget one character over", []string{"forget", id(1), "--reason", strings.Repeat("a", workspace.MaxReasonRunes+1)}, cli.ExitUsage,
			"forgemem forget: invalid input: the reason is 1001 characters long, over the limit of 1000 characters; say why in a sentence"},
		{"reject at the limit", []string{"review", "--reject", id(2), "--reason", strings.Repeat("a", workspace.MaxReasonRunes)}, cli.ExitOK, ""},
		{"reject one character over", []string{"review", "--reject", id(2), "--reason", strings.Repeat("é", workspace.MaxReasonRunes+1)}, cli.ExitUsage,
			"the reason is 1001 characters long, over the limit of 1000 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := spaceAndRebaseFixture(t)
			r := f.run(tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %.300q; want %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
			ms, err := f.store().List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if written := len(ms) == 3; written != (tt.code == cli.ExitOK) {
				t.Errorf("%d versions written", len(ms)-2)
			}
		})
	}
}

// spaceAndRebaseFixture is a fixture with two memories: id(1), in force,
// and id(2), which waits for review.
func spaceAndRebaseFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	f.write(memory(1, memcore.ScopeRepo, memcore.CategoryPatterns, 1, "Prefers spaces."),
		pendingMemory(2, 2, memcore.SourceAgent, "source: not stated in the user's own words (source agent)", "Prefers rebase merges."))
	return f
}
