package memretrieve

import (
	"slices"

	"github.com/forgemem/forgemem/memretrieve/internal/index"
)

// lexicalIndex returns the lexical index of items, every memory with
// content (nil when Config.LexicalWeight is 0). Texts tokenised by an
// earlier build are reused; those of contents no item has any more (not in
// live) are forgotten. Callers hold buildMu.
func (e *Engine) lexicalIndex(items []item, live map[contentKey]struct{}) *index.Lex {
	if e.cfg.LexicalWeight == 0 {
		return nil
	}
	var prev *index.Lex
	if s := e.snap.Load(); s != nil {
		prev = s.lex // its texts are most often the first of these
	}
	ids := make([]string, len(items))
	docs := make([]*index.Doc, len(items))
	e.lexDocsOf(items, ids, docs)
	for k := range e.lexDocs {
		if _, ok := live[k]; !ok {
			delete(e.lexDocs, k)
		}
	}
	return index.NewLexFrom(prev, ids, docs)
}

// lexDocsOf fills ids and docs with the memory id and the tokenised text
// of each of items, tokenising only texts no earlier build did.
func (e *Engine) lexDocsOf(items []item, ids []string, docs []*index.Doc) {
	tok := index.NewTokenizer()
	for i, it := range items {
		d := e.lexDocs[it.key]
		if d == nil {
			d = index.NewDoc(tok, it.m.Content)
			e.lexDocs[it.key] = d
		}
		ids[i], docs[i] = it.m.Meta.ID, d
	}
}

// extendLexical returns the lexical index of items, made from prev, the
// last build's (see extension): the texts of items[:ext.from] are prev's
// first, and only the others' are looked up (or tokenised). Nothing is
// forgotten: every text of prev is an item.
func (e *Engine) extendLexical(prev *index.Lex, items []item, ext *extension) *index.Lex {
	var ids []string
	if ext.appended {
		ids = slices.Grow(prev.IDs, len(items)-ext.from)[:len(items)]
	} else {
		ids = make([]string, len(items))
		copy(ids, prev.IDs[:ext.from])
	}
	docs := make([]*index.Doc, len(items))
	for i := range ext.from {
		docs[i] = prev.Doc(i)
	}
	e.lexDocsOf(items[ext.from:], ids[ext.from:], docs[ext.from:])
	return index.NewLexFrom(prev, ids, docs)
}

// rowsByID maps each memory id of lex to its row; nil for a nil index.
func rowsByID(lex *index.Lex) map[string]int {
	if lex == nil {
		return nil
	}
	rows := make(map[string]int, lex.Len())
	for i, id := range lex.IDs {
		rows[id] = i
	}
	return rows
}
