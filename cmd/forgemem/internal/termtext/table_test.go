package termtext

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"text/tabwriter"
)

// tabwriterOutput is what text/tabwriter writes for in, the Writer made as
// Table's documentation says.
func tabwriterOutput(t testing.TB, in string, gap int) string {
	t.Helper()
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, gap, ' ', 0)
	if _, err := tw.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// tableOutput is what Table writes for in, written in chunks of chunk
// bytes (all at once for 0).
func tableOutput(t testing.TB, in string, gap, chunk int) string {
	t.Helper()
	var b bytes.Buffer
	tt := NewTable(&b, gap)
	if chunk <= 0 {
		chunk = max(len(in), 1)
	}
	for s := in; s != ""; {
		n := min(chunk, len(s))
		if _, err := tt.Write([]byte(s[:n])); err != nil {
			t.Fatal(err)
		}
		s = s[n:]
	}
	if err := tt.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// tabwriterTables are ASCII tables of every shape the command writes and
// more: a header, rows of as many cells, rows of fewer or more cells
// (which start and end column blocks), empty cells, a trailing tab, lines
// of one cell, text after the last newline.
var tabwriterTables = []struct{ name, in string }{
	{"empty", ""},
	{"one cell", "alone\n"},
	{"no newline", "a\tbb\tccc"},
	{"header and rows", "SETTING\tVALUE\tFROM\nmemory.provider\tfake\tdefault\nmemory.review\tsource\trepository settings\n"},
	{"indented rows", "  repo\t/tmp/repo/.forge/memory\t3 memories\tcache 0 B\n  user\t/home/u/.forge/memory\t12 memories\tcache 4.0 KiB\n"},
	{"last cells of any width", "a\tlong last cell, not aligned\nbbbb\tx\n"},
	{"empty cells", "\tb\t\n\t\tc\na\t\t\n"},
	{"a trailing tab pads the cell before it", "a\tb\t\nccc\td\n"},
	{"fewer cells end a block", "a\tb\tc\nlonger\tx\ny\nz\tw\tv\n"},
	{"more cells start an inner block", "id\tkind\nmem_1\tuser/x\tversion 1\tTitle\nmem_22\trepo/patterns\tversion 12\tAnother title\nlast\tline\n"},
	{"blocks nested three deep", "a\tb\tc\td\nee\tff\tgg\tx\nh\ti\nj\tk\tl\tm\tn\no\n"},
	{"blank lines end blocks", "a\tb\n\nlonger\tc\n\n\n"},
	{"text after the last newline", "a\tb\nccc\td\ne\tf"},
	{"spaces kept", "  waits\tsource: agent\n  session\tsess-1\n  changes\tmem_1, in force: x\n"},
}

// For ASCII text a Table writes what text/tabwriter writes, byte for byte,
// whatever the gap and however the text is written to it.
func TestTableWritesWhatTabwriterWrites(t *testing.T) {
	for _, tt := range tabwriterTables {
		for _, gap := range []int{0, 1, 2, 3} {
			for _, chunk := range []int{0, 1, 3} {
				t.Run(fmt.Sprintf("%s/gap %d/chunk %d", tt.name, gap, chunk), func(t *testing.T) {
					want := tabwriterOutput(t, tt.in, gap)
					if got := tableOutput(t, tt.in, gap, chunk); got != want {
						t.Errorf("Table wrote\n%q\nwant, as text/tabwriter,\n%q", got, want)
					}
				})
			}
		}
	}
}

func FuzzTableWritesWhatTabwriterWrites(f *testing.F) {
	for _, tt := range tabwriterTables {
		f.Add(tt.in, 2)
	}
	f.Fuzz(func(t *testing.T, in string, gap int) {
		for i := 0; i < len(in); i++ {
			// Tabwriter counts characters, Table columns, which differ
			// beyond ASCII and for control characters (none; the command
			// escapes them); Table gives no meaning to \v and \f.
			if c := in[i]; c >= 0x7f || c < ' ' && c != '\t' && c != '\n' {
				t.Skip()
			}
		}
		gap = min(max(gap, 0), 8)
		if got, want := tableOutput(t, in, gap, 0), tabwriterOutput(t, in, gap); got != want {
			t.Errorf("Table wrote\n%q\nwant, as text/tabwriter,\n%q", got, want)
		}
	})
}

func TestTableAlignsByDisplayWidth(t *testing.T) {
	const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467" // one emoji of 5 runes, 2 columns
	in := "名前\tscope\tx\n" + "a\tuser\ty\n"
	want := "名前  scope  x\n" + "a     user   y\n"
	if got := tableOutput(t, in, 2, 0); got != want {
		t.Errorf("Table wrote\n%q\nwant\n%q", got, want)
	}

	tests := []struct {
		name string
		rows [][]string
	}{
		{"ascii", [][]string{{"ID", "KIND", "TITLE"}, {"mem_1", "user/facts", "Short"}, {"mem_22", "repo/patterns", "Longer title"}}},
		{"CJK in the first column", [][]string{{"repo", "/home/u/プロジェクト/.forge/memory", "3 memories", "cache 0 B"}, {"user", "/home/u/.forge/memory", "12 memories", "cache 4.0 KiB"}}},
		{"CJK in every column", [][]string{{"名前", "値", "どこから"}, {"memory.provider", "フェイク", "既定"}, {"x", "y", "z"}}},
		{"hangul", [][]string{{"한국어 제목", "a", "b"}, {"title", "가나다라마바사", "c"}}},
		{"emoji", [][]string{{"👍👍", "ok", "x"}, {family + " family", "ok", "y"}, {"plain", "ok", "z"}}},
		{"combining marks", [][]string{{"e\u0301te\u0301", "ok", "x"}, {"summer", "ok", "y"}, {"ca\u0300 va", "ok", "z"}}},
		{"ambiguous width", [][]string{{"±…", "ok", "x"}, {"ab", "ok", "y"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in strings.Builder
			for _, r := range tt.rows {
				in.WriteString(strings.Join(r, "\t") + "\n")
			}
			out := tableOutput(t, in.String(), 2, 0)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != len(tt.rows) {
				t.Fatalf("Table wrote %d lines, want %d:\n%s", len(lines), len(tt.rows), out)
			}
			// Each column starts 2 columns right of the widest cell of the
			// column before it, on every line.
			want := []int{0}
			for j := range len(tt.rows[0]) - 1 {
				widest := 0
				for _, r := range tt.rows {
					widest = max(widest, Width(r[j]))
				}
				want = append(want, want[j]+widest+2)
			}
			for i, l := range lines {
				if got := cellStarts(l); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("line %d starts its cells at columns %v, want %v:\n%s", i+1, got, want, out)
				}
			}
		})
	}
}

// cellGap is what separates a Table's cells written with a gap of 2: the
// cells of TestTableAlignsByDisplayWidth hold no two spaces in a row.
var cellGap = regexp.MustCompile(`  +`)

// cellStarts is the display column each cell of line starts at.
func cellStarts(line string) []int {
	starts := []int{0}
	for _, loc := range cellGap.FindAllStringIndex(line, -1) {
		starts = append(starts, Width(line[:loc[1]]))
	}
	return starts
}
