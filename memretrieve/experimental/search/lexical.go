package search

import (
	"fmt"

	"github.com/forgemem/forgemem/memretrieve/internal/index"
)

// LexicalIndex is the BM25 index the memretrieve engine fuses with its
// vector search. Texts are tokenised as the engine tokenises memories —
// code identifiers whole and by their parts (errors.As, snake_case,
// CamelCase, db/migrations), English words by their Porter stem, common
// English words left out. It is immutable and safe for concurrent use.
type LexicalIndex struct {
	lex *index.Lex
}

// NewLexicalIndex indexes texts; ids[i] names texts[i]. It fails when the
// lengths differ.
func NewLexicalIndex(ids, texts []string) (*LexicalIndex, error) {
	if len(ids) != len(texts) {
		return nil, fmt.Errorf("search: new lexical index: %d ids for %d texts", len(ids), len(texts))
	}
	docs := make([]*index.Doc, len(texts))
	tok := index.NewTokenizer()
	for i, t := range texts {
		docs[i] = index.NewDoc(tok, t)
	}
	return &LexicalIndex{lex: index.NewLex(append([]string(nil), ids...), docs)}, nil
}

// Len is the number of texts.
func (x *LexicalIndex) Len() int { return x.lex.Len() }

// Search returns the k best texts for queries, best first: those sharing
// at least one term with them, scored by the sum of their BM25 scores for
// each query (a term in several queries counts for each), as a turn's
// queries are. Ties go to the text indexed first.
func (x *LexicalIndex) Search(queries []string, k int) []Match {
	hits := x.lex.Search(index.NewQuery(queries), k)
	out := make([]Match, len(hits))
	for i, h := range hits {
		out[i] = Match{ID: x.lex.IDs[h.Row], Score: h.Score}
	}
	return out
}
