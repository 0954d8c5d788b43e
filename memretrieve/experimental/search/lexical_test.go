package search

import "testing"

func TestLexicalIndex(t *testing.T) {
	if _, err := NewLexicalIndex([]string{"a"}, nil); err == nil {
		t.Error("NewLexicalIndex with 1 id and 0 texts: no error")
	}
	ix, err := NewLexicalIndex([]string{"a", "b", "c"}, []string{"kestrel nightly builds", "kestrel", "other words"})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 3 {
		t.Errorf("Len = %d, want 3", ix.Len())
	}
	got := ix.Search([]string{"kestrel"}, 5)
	// The shorter text holding the word ranks first (BM25's length
	// normalisation); the third shares nothing and is left out.
	if len(got) != 2 || got[0].ID != "b" || got[1].ID != "a" || !(got[0].Score > got[1].Score) || got[1].Score <= 0 {
		t.Errorf("Search = %+v, want b then a, scores above 0", got)
	}
	if got := ix.Search([]string{"kestrel"}, 1); len(got) != 1 || got[0].ID != "b" {
		t.Errorf("Search k=1 = %+v, want b", got)
	}
	if got := ix.Search(nil, 5); len(got) != 0 {
		t.Errorf("Search without queries = %+v, want nothing", got)
	}
}
