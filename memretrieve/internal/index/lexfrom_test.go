package index

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// lexFields is what of a Lex two indexes of the same texts share.
func lexFields(x *Lex) []any {
	return []any{x.IDs, x.terms, x.starts, x.postings, x.docs, x.termOf}
}

// NewLexFrom, extending an index text by text (and by several at once,
// new words among them), makes exactly the index NewLex makes of all the
// texts; so it does from an index whose texts changed after some row.
func TestNewLexFromEqualsNewLex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("errors wrapped migrations locking retry zerolog gateway benchmarks changelog vite goroutines staging FindByEmail db/migrations snake_case")
	tok := NewTokenizer()
	var ids []string
	var docs []*Doc
	var prev *Lex
	for i := range 300 {
		n := 1 + rng.IntN(3)
		for j := range n {
			text := make([]string, 3+rng.IntN(20))
			for k := range text {
				text[k] = words[rng.IntN(len(words))]
			}
			if rng.IntN(4) == 0 {
				text = append(text, fmt.Sprintf("newword%d_%d", i, j)) // a term no text had
			}
			ids = append(ids, fmt.Sprintf("m%d-%d", i, j))
			docs = append(docs, NewDoc(tok, strings.Join(text, " ")))
		}
		got := NewLexFrom(prev, ids, docs)
		want := NewLex(ids, docs)
		if !reflect.DeepEqual(lexFields(got), lexFields(want)) {
			t.Fatalf("step %d: the extended index differs from a new one", i)
		}
		if prev != nil && !reflect.DeepEqual(lexFields(prev), lexFields(NewLex(prev.IDs, prev.docs))) {
			t.Fatalf("step %d: NewLexFrom changed the index it extended", i)
		}
		prev = got
		ids, docs = ids[:len(ids):len(ids)], docs[:len(docs):len(docs)]
	}
	// Texts replaced, inserted or removed anywhere: the rows before the
	// first change are reused.
	for i, at := range []int{0, 3, len(docs) / 2, len(docs) - 2} {
		other := append([]*Doc(nil), docs...)
		otherIDs := append([]string(nil), ids...)
		switch i % 3 {
		case 0:
			other[at] = NewDoc(tok, fmt.Sprintf("something else entirely, brandnew%d", i))
		case 1:
			other = append(other[:at], append([]*Doc{NewDoc(tok, "inserted text newterm")}, other[at:]...)...)
			otherIDs = append(otherIDs[:at], append([]string{"inserted"}, otherIDs[at:]...)...)
		case 2:
			other, otherIDs = append(other[:at], other[at+1:]...), append(otherIDs[:at], otherIDs[at+1:]...)
		}
		if got, want := NewLexFrom(prev, otherIDs, other), NewLex(otherIDs, other); !reflect.DeepEqual(lexFields(got), lexFields(want)) {
			t.Fatalf("change %d at row %d: differs from a new index", i, at)
		}
	}
}
