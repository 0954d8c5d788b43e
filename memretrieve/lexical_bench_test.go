package memretrieve

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
	"github.com/forgemem/forgemem/providers/fake"
)

// benchTexts returns n generated memory texts.
func benchTexts(n int) (ids, texts []string) {
	r := rand.New(rand.NewPCG(uint64(n), 3))
	ids, texts = make([]string, n), make([]string, n)
	for i := range n {
		ids[i], texts[i] = testID(i), genContent(r)
	}
	return ids, texts
}

// BenchmarkLexicalBuild tokenises 10,000 memory texts and builds their
// BM25 index (what the first build of an engine does; later builds reuse
// the tokenised texts).
func BenchmarkLexicalBuild(b *testing.B) {
	ids, texts := benchTexts(10_000)
	b.ReportAllocs()
	for b.Loop() {
		tok := index.NewTokenizer()
		docs := make([]*index.Doc, len(texts))
		for i, t := range texts {
			docs[i] = index.NewDoc(tok, t)
		}
		index.NewLex(ids, docs)
	}
}

// BenchmarkLexicalSearch is the lexical search of a turn over 10,000
// memories: the three focused queries of a three-message window.
func BenchmarkLexicalSearch(b *testing.B) {
	ids, texts := benchTexts(10_000)
	tok := index.NewTokenizer()
	docs := make([]*index.Doc, len(texts))
	for i, t := range texts {
		docs[i] = index.NewDoc(tok, t)
	}
	ix := index.NewLex(ids, docs)
	queries := focusedQueries(benchWindow, DefaultConfig().QueryTokenLimit)
	b.ReportAllocs()
	for b.Loop() {
		if len(ix.Search(index.NewQuery(queries), 10)) == 0 {
			b.Fatal("nothing found")
		}
	}
}

// benchWindow is the window of the Retrieve benchmarks.
var benchWindow = []memcore.Message{
	{Role: memcore.RoleUser, Content: "The handler returns a bare error string; how do we usually wrap and log errors here?"},
	{Role: memcore.RoleAssistant, Content: "I will check the logging package first."},
	{Role: memcore.RoleUser, Content: "Also the migration for the users table fails under concurrent writes."},
}

// BenchmarkRetrieveLexicalCost is a whole identity turn at 10,000 memories
// (1,536-dimensional vectors) with the lexical index off and on: what the
// lexical ranking and the fusion add to a turn.
func BenchmarkRetrieveLexicalCost(b *testing.B) {
	store := benchStore(b, 10_000)
	dir := b.TempDir()
	emb := newEmbedder(b, fake.EmbedderConfig{Dimension: benchDim})
	for _, c := range []struct {
		name   string
		weight float64
	}{{"vector-only", 0}, {"hybrid", 1}} {
		cfg := identityConfig()
		cfg.LexicalWeight = c.weight
		cfg.Timeout = 30e9
		e := newEngine(b, store, emb, nil, cfg, withCacheDir(dir))
		rebuild(b, e)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := e.Retrieve(context.Background(), "", benchWindow)
				if err != nil || len(res.Memories) == 0 {
					b.Fatalf("no memories: %v", err)
				}
			}
		})
	}
}
