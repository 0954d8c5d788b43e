package memretrieve

import "github.com/forgemem/forgemem/memretrieve/internal/index"

// lexicalIndex returns the lexical index of items, every memory with
// content (nil when Config.LexicalWeight is 0). Texts tokenised by an
// earlier build are reused; those of contents no item has any more (not in
// live) are forgotten. Callers hold buildMu.
func (e *Engine) lexicalIndex(items []item, live map[contentKey]struct{}) *index.Lex {
	if e.cfg.LexicalWeight == 0 {
		return nil
	}
	ids := make([]string, len(items))
	docs := make([]*index.Doc, len(items))
	tok := index.NewTokenizer()
	for i, it := range items {
		d := e.lexDocs[it.key]
		if d == nil {
			d = index.NewDoc(tok, it.m.Content)
			e.lexDocs[it.key] = d
		}
		ids[i], docs[i] = it.m.Meta.ID, d
	}
	for k := range e.lexDocs {
		if _, ok := live[k]; !ok {
			delete(e.lexDocs, k)
		}
	}
	return index.NewLex(ids, docs)
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
