package demo

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
)

// wrap breaks at the columns a terminal gives text: a CJK character takes
// two, a combining mark none.
func TestWrapCountsColumns(t *testing.T) {
	tests := []struct {
		name, line string
		n          int
		want       []string
	}{
		{"empty", "", 10, []string{""}},
		{"ascii", "one two three four", 9, []string{"one two", "three", "four"}},
		{"ascii exactly", "one two", 7, []string{"one two"}},
		{"CJK", "漢字 テスト 確認", 9, []string{"漢字", "テスト", "確認"}},
		{"CJK that fits", "漢字 確認", 9, []string{"漢字 確認"}},
		{"combining marks take none", "e\u0301te\u0301 e\u0301te\u0301", 7, []string{"e\u0301te\u0301 e\u0301te\u0301"}},
		{"a word wider than n stays whole", "漢字漢字漢字 a", 4, []string{"漢字漢字漢字", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wrap(tt.line, tt.n); !slices.Equal(got, tt.want) {
				t.Errorf("wrap(%q, %d) = %q, want %q", tt.line, tt.n, got, tt.want)
			}
		})
	}
}

// labelled indents the lines after the first to the label's width in
// columns, and heading's rule ends at the demo's width, whatever the
// characters of their text.
func TestLabelledAndHeadingLineUp(t *testing.T) {
	var out bytes.Buffer
	p := &printer{w: &out}
	p.labelled("記憶: ", strings.Repeat("漢字 ", 60))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("labelled wrote one line, want several:\n%s", out.String())
	}
	indent := strings.Repeat(" ", termtext.Width("記憶: "))
	for i, l := range lines {
		if w := termtext.Width(l); w > width {
			t.Errorf("line %d is %d columns wide, more than %d:\n%s", i+1, w, width, l)
		}
		if i > 0 && (!strings.HasPrefix(l, indent) || strings.HasPrefix(l, indent+" ")) {
			t.Errorf("line %d is not indented to the label's %d columns:\n%s", i+1, len(indent), l)
		}
	}

	out.Reset()
	p.heading("セッション 1")
	if w := termtext.Width(strings.TrimSpace(out.String())); w != width {
		t.Errorf("the heading is %d columns wide, want %d:\n%s", w, width, out.String())
	}
}
