package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
	"github.com/forgemem/forgemem/memcore"
)

func TestList(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"list", []string{"list"}, cli.ExitOK},
		{"list_all_versions", []string{"list", "--all-versions", "--retired"}, cli.ExitOK},
		{"list_scope_category", []string{"list", "--scope", "repo", "--category", "architectural-decisions"}, cli.ExitOK},
		{"list_json", []string{"list", "--scope", "user", "--json"}, cli.ExitOK},
		{"list_bad_category", []string{"list", "--category", "preferences"}, cli.ExitUsage},
		{"list_bad_scope", []string{"list", "--scope", "team"}, cli.ExitUsage},
	}
	f := newFixture(t)
	f.seed()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.t = t
			f.check(tt.name, f.run(tt.args...), tt.code)
		})
	}
}

// list cuts each title to the columns a terminal gives it, not to its
// count of characters: a title of CJK characters (two columns each) is cut
// at half as many as an English one, one of accented letters written with
// combining marks (no column) at twice as many, an emoji sequence is never
// cut in two; each ends with "…" within 72 columns.
func TestListClipsTitlesToTheirWidth(t *testing.T) {
	const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467"
	tests := []struct{ title, listed string }{
		{strings.Repeat("漢", 100), strings.Repeat("漢", 35) + "…"},
		{"排他制御には楽観的ロックを使う。" + strings.Repeat("行ロックは負荷でタイムアウトした。", 5), "排他制御には楽観的ロックを使う。行ロックは負荷でタイムアウトした。行ロ…"},
		{strings.Repeat("e\u0301", 100), strings.Repeat("e\u0301", 71) + "…"},
		{strings.Repeat("👍", 50), strings.Repeat("👍", 35) + "…"},
		{strings.Repeat(family, 50), strings.Repeat(family, 35) + "…"},
		{"Short title: 短い", "Short title: 短い"},
	}
	f := newFixture(t)
	for i, tt := range tests {
		f.write(memory(i+1, memcore.ScopeUser, memcore.CategoryUserFacts, i+1, tt.title))
	}
	r := f.run("list")
	f.check("list_wide", r, cli.ExitOK)
	lines := strings.Split(r.stdout, "\n")
	for i, tt := range tests {
		row := ""
		for _, l := range lines {
			if strings.HasPrefix(l, shortID(id(i+1))) {
				row = l
			}
		}
		if !strings.HasSuffix(row, "  "+tt.listed) {
			t.Errorf("the row of %q:\n%s\nwant it to end with %q", tt.title, row, tt.listed)
		}
	}
}

// A tab inside a memory's title is shown as \t, as the hook's one-line
// text shows one, and stays in the title's cell: it never splits the
// title into a column of its own. With the STATE column too.
func TestListKeepsATabInItsTitleCell(t *testing.T) {
	f := newFixture(t)
	f.write(memory(1, memcore.ScopeRepo, memcore.CategoryProjectConventions, 1, "Indent Go with\ttabs, YAML with spaces."),
		memory(2, memcore.ScopeRepo, memcore.CategoryProjectConventions, 2, "Keep\tmigrations\tin db/migrations."))
	for _, args := range [][]string{{"list"}, {"list", "--retired"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := f.run(args...)
			if r.code != cli.ExitOK {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			lines := strings.Split(r.stdout, "\n")
			if len(lines) < 3 || strings.Contains(r.stdout, "\t") {
				t.Fatalf("list printed a tab:\n%q", r.stdout)
			}
			header := columnStarts(lines[0])
			for i, want := range []string{`Indent Go with\ttabs, YAML with spaces.`, `Keep\tmigrations\tin db/migrations.`} {
				row := lines[i+1]
				if got := columnStarts(row); !strings.HasSuffix(row, "  "+want) || !slices.Equal(got, header) {
					t.Errorf("row %q starts its cells at %v, want it to end with %q and to start them where the header does, at %v", row, got, want, header)
				}
			}
		})
	}
}

// shortID is the id as a listing shows it.
func shortID(id string) string { return id[:len("mem_")+8] }

// On a terminal a table's header is bold, and each of its columns starts
// where the column's data does: the emphasis takes no room in the table.
func TestBoldTableHeadersLineUp(t *testing.T) {
	f := newFixture(t)
	f.seed()
	if r := f.run("forget", id(5)); r.code != cli.ExitOK {
		t.Fatalf("forget: exit %d, stderr %q", r.code, r.stderr)
	}
	tests := []struct {
		name   string
		args   []string
		header string
	}{
		{"list", []string{"list"}, "ID SCOPE CATEGORY V CREATED TITLE"},
		{"list --retired", []string{"list", "--retired"}, "ID SCOPE CATEGORY V CREATED STATE TITLE"},
		{"list --pending", []string{"list", "--pending"}, "ID SCOPE CATEGORY V CREATED STATE TITLE"},
		{"config", []string{"config"}, "SETTING VALUE FROM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := cli.Env{Args: tt.args, Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Now: func() time.Time { return now }}
			env.Settings.WorkDir, env.Settings.Home = f.repo, f.home
			env.IsTerminal = func(w io.Writer) bool { return w == &stdout }
			if code := cli.Run(context.Background(), env); code != cli.ExitOK {
				t.Fatalf("exit %d, stderr %q", code, stderr.String())
			}
			lines := strings.Split(stdout.String(), "\n")
			if len(lines) < 2 || !strings.HasPrefix(lines[0], "\x1b[1m") || !strings.HasSuffix(lines[0], "\x1b[0m") {
				t.Fatalf("the header is not bold:\n%q", stdout.String())
			}
			header := ansiSGR.ReplaceAllString(lines[0], "")
			if got := strings.Join(strings.Fields(header), " "); got != tt.header {
				t.Fatalf("header %q, want %q", got, tt.header)
			}
			want := columnStarts(header)
			if got := columnStarts(lines[1]); len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
				t.Errorf("the header's columns start at %v, its data's at %v:\n%s\n%s", want, got, header, lines[1])
			}
		})
	}
}

// ansiSGR matches the printer's emphasis.
var ansiSGR = regexp.MustCompile("\x1b\\[[0-9;]*m")

// columnStarts is where each cell of an aligned line starts: cells are
// parted by two spaces or more, the table's padding.
func columnStarts(line string) []int {
	var starts []int
	for _, m := range regexp.MustCompile(`\S+( \S+)*`).FindAllStringIndex(line, -1) {
		starts = append(starts, m[0])
	}
	return starts
}

func TestListEmpty(t *testing.T) {
	f := newFixture(t)
	f.check("list_empty", f.run("list"), cli.ExitOK)
}

func TestShow(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		// stderr, when set, must be in the error output.
		stderr string
	}{
		{"show_head", []string{"show", id(2)}, cli.ExitOK, ""},
		{"show_prefix_superseded", []string{"show", "00000001"}, cli.ExitOK, ""},
		{"show_links_in", []string{"show", "mem_00000003"}, cli.ExitOK, ""},
		{"show_json", []string{"show", id(2), "--json"}, cli.ExitOK, ""},
		{"show_ambiguous", []string{"show", "0000000"}, cli.ExitUsage, "matches 6 memories; give more of the id:\n  mem_00000005-0000-4000-8000-000000000005  Prefers table-driven tests."},
		{"show_unknown", []string{"show", "mem_0bad"}, cli.ExitFailure, "no memory has the id mem_0bad"},
		{"show_no_args", []string{"show"}, cli.ExitUsage, "show needs the id of a memory"},
	}
	f := newFixture(t)
	f.seed()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.t = t
			r := f.run(tt.args...)
			f.check(tt.name, r, tt.code)
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", r.stderr, tt.stderr)
			}
		})
	}
}

// show says who stated a memory: a memory of the user's folder that says
// the user stated it is in the user's own words; a repository's that says
// so is in a contributor's (anyone who commits can write it), unless this
// user's forgemem wrote it (the last case: remember).
func TestShowSaysWhoStatedIt(t *testing.T) {
	tests := []struct {
		scope  memcore.Scope
		source memcore.Source
		want   string
	}{
		{memcore.ScopeUser, memcore.SourceUser, "user: in your own words"},
		{memcore.ScopeRepo, memcore.SourceUser, "user: in a contributor's own words, says its file in the repository"},
		{memcore.ScopeRepo, memcore.SourceAssistant, "assistant: only in the assistant's words"},
		{memcore.ScopeRepo, memcore.SourceUnknown, "unknown"},
	}
	for i, tt := range tests {
		t.Run(string(tt.scope)+"/"+tt.source.String(), func(t *testing.T) {
			f := newFixture(t)
			m := memory(i+1, tt.scope, memcore.CategoryProjectConventions, 1, "Migrations live in db/migrations.")
			m.Meta.Source = tt.source
			f.write(m)
			checkSourceRow(t, f, m.Meta.ID, tt.want)
		})
	}
	t.Run("remembered in the repository", func(t *testing.T) {
		f := newFixture(t)
		r := f.run("remember", "Migrations live in db/migrations.", "--scope", "repo", "--category", "project-conventions", "--json")
		var doc struct{ Memory struct{ ID string } }
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != cli.ExitOK {
			t.Fatalf("remember: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
		}
		checkSourceRow(t, f, doc.Memory.ID, "user: in your own words")
	})
}

// checkSourceRow checks that show of id has the row source want.
func checkSourceRow(t *testing.T, f *fixture, id, want string) {
	t.Helper()
	r := f.run("show", id)
	row := regexp.MustCompile(`(?m)^source +` + regexp.QuoteMeta(want) + `$`)
	if r.code != cli.ExitOK || !row.MatchString(r.stdout) {
		t.Errorf("show: exit %d, want the row source %q in:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}

func TestShowUnreadableFile(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.writeFile(filepath.Join(f.repoDir(), id(9)+".md"), "---\nid: [broken\n---\nText.\n")
	r := f.run("show", id(9))
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "is not read as a memory") || !strings.Contains(r.stderr, "forgemem validate") {
		t.Fatalf("exit %d, stderr %q; want 1 and the file named with the reason", r.code, r.stderr)
	}
}

func TestSearch(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"search", []string{"search", "locking", "for", "user", "updates"}, cli.ExitOK},
		{"search_limit_json", []string{"search", "--limit", "2", "--json", "tests"}, cli.ExitOK},
		{"search_bad_limit", []string{"search", "--limit", "0", "tests"}, cli.ExitUsage},
		{"search_no_text", []string{"search"}, cli.ExitUsage},
	}
	f := newFixture(t)
	f.seed()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.t = t
			f.check(tt.name, f.run(tt.args...), tt.code)
		})
	}
}

func TestGraphAndExport(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"graph_mermaid", []string{"graph"}, cli.ExitOK},
		{"graph_dot", []string{"graph", "--format", "dot"}, cli.ExitOK},
		{"graph_bad_format", []string{"graph", "--format", "svg"}, cli.ExitUsage},
		{"export", []string{"export"}, cli.ExitOK},
		{"stats", []string{"stats"}, cli.ExitOK},
		{"stats_json", []string{"stats", "--json"}, cli.ExitOK},
	}
	f := newFixture(t)
	f.seed()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.t = t
			f.check(tt.name, f.run(tt.args...), tt.code)
		})
	}
}

// TestJSONIsOneDocument checks that every --json output is one JSON value
// and nothing else.
func TestJSONIsOneDocument(t *testing.T) {
	f := newFixture(t)
	f.seed()
	for _, args := range [][]string{
		{"list", "--json"}, {"show", id(2), "--json"}, {"search", "tests", "--json"},
		{"stats", "--json"}, {"validate", "--json"},
	} {
		r := f.run(args...)
		dec := json.NewDecoder(strings.NewReader(r.stdout))
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Errorf("%v: %v in %q", args, err, r.stdout)
			continue
		}
		if dec.More() {
			t.Errorf("%v: more than one JSON document", args)
		}
	}
}

func TestOutsideARepository(t *testing.T) {
	f := newFixture(t)
	f.seed()
	elsewhere := t.TempDir()
	ctx := context.Background()
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"outside_list", []string{"list"}, cli.ExitOK, ""},
		{"outside_list_repo", []string{"list", "--scope", "repo"}, cli.ExitFailure, "the repo scope is off: not inside a git repository (no .git found above $TMP"},
		{"outside_remember_repo", []string{"remember", "Use tabs.", "--scope", "repo", "--category", "patterns"}, cli.ExitFailure, "run inside one or pass --repo-dir"},
		{"outside_remember_user", []string{"remember", "Likes short names.", "--scope", "user", "--category", "coding-preferences"}, cli.ExitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.t = t
			r := f.runIn(ctx, elsewhere, "", tt.args...)
			f.check(tt.name, r, tt.code)
			if !strings.Contains(strings.ReplaceAll(r.stderr, elsewhere, "$TMP"), tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", r.stderr, tt.stderr)
			}
		})
	}
	// --repo-dir turns the repository scope on anywhere.
	r := f.runIn(ctx, elsewhere, "", "--repo-dir", f.repoDir(), "list", "--scope", "repo")
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, "Migrations live in db/migrations") {
		t.Fatalf("--repo-dir outside a repository: exit %d, output %q", r.code, r.stdout)
	}
}

// The evidence row of show and review quotes the passage as it is, on one
// line: its quotes and backslashes unchanged, a control character escaped
// once (\x1b, not \\x1b), line breaks and tabs as spaces.
func TestEvidenceRowQuotesThePassageAsItIs(t *testing.T) {
	tests := []struct {
		name, quote, want string
	}{
		{"plain", "wrap errors with %w", `"wrap errors with %w"`},
		{"quotes and backslashes", `use fmt.Errorf("open: %w", err) and C:\tools`, `"use fmt.Errorf("open: %w", err) and C:\tools"`},
		{"an escape sequence", "quote \x1b]0;title\x07 end", `"quote \x1b]0;title\x07 end"`},
		{"line breaks and tabs", "first line\n\tsecond  line", `"first line second line"`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			m := pendingMemory(i+1, 2, memcore.SourceMixed, "source: not stated in the user's own words (source mixed)", "Errors are wrapped with %w.")
			m.Meta.Evidence.Quote = tt.quote
			f.write(m)
			row := regexp.MustCompile(`(?m)^ *evidence +` + regexp.QuoteMeta(tt.want) + `, 2025-03-02 09:58 UTC$`)
			for _, r := range []result{f.run("show", m.Meta.ID), f.runTerminal("s\n", "review")} {
				if r.code != cli.ExitOK || !row.MatchString(r.stdout) {
					t.Errorf("exit %d, want the row evidence %s in:\n%s%s", r.code, tt.want, r.stdout, r.stderr)
				}
			}
		})
	}
}

// show says who wrote a memory from its trigger and its source together:
// a memory an agent wrote through a tool (trigger manual, source agent)
// is never said to be a person's.
func TestShowWrittenByAgreesWithTheSource(t *testing.T) {
	tests := []struct {
		trigger memcore.Trigger
		source  memcore.Source
		want    string
	}{
		{memcore.TriggerManual, memcore.SourceAgent, "written by  an agent, through a tool (manual)"},
		{memcore.TriggerManual, memcore.SourceUser, "written by  a person (manual)"},
		{memcore.TriggerManual, memcore.SourceUnknown, "written by  a person (manual)"},
		{memcore.TriggerCadence, memcore.SourceAgent, "written by  capture, after a turn (cadence)"},
		{memcore.TriggerCadence, memcore.SourceUser, "written by  capture, after a turn (cadence)"},
		{memcore.TriggerCompaction, memcore.SourceAssistant, "written by  capture, at a compaction"},
	}
	for _, tt := range tests {
		t.Run(string(tt.trigger)+"/"+string(tt.source), func(t *testing.T) {
			f := newFixture(t)
			m := memory(1, memcore.ScopeUser, memcore.CategoryPatterns, 1, "Use tabs.")
			m.Meta.Trigger, m.Meta.Source = tt.trigger, tt.source
			f.write(m)
			r := f.run("show", id(1))
			if r.code != cli.ExitOK {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.want+"\n") {
				t.Errorf("show:\n%s\nwant the line %q", r.stdout, tt.want)
			}
			if tt.source == memcore.SourceAgent && strings.Contains(r.stdout, "a person") {
				t.Errorf("show says a person wrote an agent's memory:\n%s", r.stdout)
			}
		})
	}
}
