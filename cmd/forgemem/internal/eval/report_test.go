package eval

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
)

// The report's tables line up on a terminal whatever the collections are
// called: a name in CJK, or with an emoji, takes the columns a terminal
// gives it, and every column starts at the same display column on every
// line of its table.
func TestWriteTextAlignsByDisplayWidth(t *testing.T) {
	scores := Scores{Recall: map[int]float64{5: 0.5, 10: 0.75}, Hit: map[int]float64{5: 1, 10: 1}, MRR: 0.333}
	in := Injection{Queries: 3, InjectedRate: 0.5, RelevantInInjection: 0.667, MemoriesMean: 2.5, TokensMean: 120}
	r := &Report{Ks: []int{5, 10}, Scores: scores, OnTopic: in, OffTopic: in}
	for _, name := range []string{"日本語のコレクション", "coding", "café au lait ☕", "e\u0301te\u0301"} {
		r.PerCollection = append(r.PerCollection, CollectionReport{Name: name, Scores: scores, OnTopic: in, OffTopic: in})
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	tables := strings.Split(b.String(), "\n\n")[:2] // the scores, the injections
	for n, table := range tables {
		lines := strings.Split(table, "\n")
		if len(lines) != 2+len(r.PerCollection) {
			t.Fatalf("table %d has %d lines, want a header and %d rows:\n%s", n+1, len(lines), 1+len(r.PerCollection), table)
		}
		want := cellStarts(lines[0])
		for i, l := range lines[1:] {
			if got := cellStarts(l); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("table %d, line %d starts its cells at columns %v, the header at %v:\n%s", n+1, i+2, got, want, table)
			}
		}
	}
}

// cellGap separates the cells of the report's tables, whose cells hold no
// two spaces in a row.
var cellGap = regexp.MustCompile(`  +`)

// cellStarts is the display column each cell of line starts at.
func cellStarts(line string) []int {
	starts := []int{0}
	for _, loc := range cellGap.FindAllStringIndex(line, -1) {
		starts = append(starts, termtext.Width(line[:loc[1]]))
	}
	return starts
}
