package memretrieve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// quantizedConfig is identityConfig with the quantised index.
func quantizedConfig() Config {
	c := cacheConfig()
	c.Quantized = true
	return c
}

// sameResults fails unless two results recall the same memories with the
// same scores, in the same order.
func sameResults(t *testing.T, what string, got, want *Result) {
	t.Helper()
	if len(got.Memories) == 0 || len(got.Memories) != len(want.Memories) {
		t.Fatalf("%s: %d memories, want %d (and more than 0)", what, len(got.Memories), len(want.Memories))
	}
	for i := range got.Memories {
		g, w := got.Memories[i], want.Memories[i]
		if g.Memory.Meta.ID != w.Memory.Meta.ID || g.Score != w.Score {
			t.Fatalf("%s: memory %d is %s scored %v, want %s scored %v", what, i, g.Memory.Meta.ID, g.Score, w.Memory.Meta.ID, w.Score)
		}
	}
}

// TestQuantizedEngine: with Config.Quantized the engine recalls what the
// exact engine recalls, with the same scores; with a FileStore it keeps no
// float32 vector in memory (every row's vector is on disk), with a
// MemStore it keeps them all.
func TestQuantizedEngine(t *testing.T) {
	storeKinds(t, func(t *testing.T, newStore func(t *testing.T) memcore.MemoryStore) {
		store := newStore(t)
		write(t, store, genMemories(300, 21)...)
		exact := newEngine(t, store, newEmbedder(t), nil, cacheConfig())
		rebuild(t, exact)
		quant := newEngine(t, store, newEmbedder(t), nil, quantizedConfig())
		rebuild(t, quant)

		idx := quant.snap.Load().idx
		_, onDisk := store.(*memcore.FileStore)
		disk, _ := idx.Quant.Source.(*diskRows)
		switch {
		case idx.Quant == nil || idx.Vecs != nil:
			t.Fatalf("the index is not quantised")
		case onDisk && (idx.Quant.Block != nil || disk == nil || len(disk.resident) != 0 || len(quant.cache.vecs) != 0):
			t.Fatalf("float32 vectors in memory with a disk cache: block %d, disk rows %v, cache %d",
				len(idx.Quant.Block), disk, len(quant.cache.vecs))
		case onDisk && slices.ContainsFunc(disk.locs, func(l diskLoc) bool { return l.file == nil }):
			t.Fatalf("a row has no place on disk")
		case !onDisk && len(idx.Quant.Block) != 300*idx.Dim:
			t.Fatalf("a MemStore's quantised index keeps %d floats, want every vector's", len(idx.Quant.Block))
		}
		for i := range 20 {
			w := userWindow(genContent(randFor(uint64(100 + i))))
			want, _ := exact.Retrieve(context.Background(), "", w)
			got, _ := quant.Retrieve(context.Background(), "", w)
			sameResults(t, fmt.Sprintf("turn %d", i), got, want)
		}
	})
}

// TestQuantizedEngineAfterTheFileIsReplaced: another process compacts the
// cache file (the records move): the quantised index notices that it cannot
// read its candidates' vectors where they were, answers with their int8
// scores, and the next build reads the file again and answers exactly.
func TestQuantizedEngineAfterTheFileIsReplaced(t *testing.T) {
	dir := t.TempDir()
	store := memcore.NewMemStore()
	ms := genMemories(120, 23)
	write(t, store, ms...)
	exact := newEngine(t, store, newEmbedder(t), nil, cacheConfig())
	rebuild(t, exact)
	emb := newEmbedder(t)
	quant := newEngine(t, store, emb, nil, quantizedConfig(), withCacheDir(dir))
	rebuild(t, quant)

	// The records in reverse order, under a new file renamed into place.
	path := filepath.Join(dir, cacheFileName(emb.Model(), nil))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st decodeState
	type rec struct {
		k contentKey
		v []float32
	}
	var recs []rec
	decodeRecords(data, emb.Model(), 0, &st, func(k contentKey, v []float32) { recs = append(recs, rec{k, v}) })
	out := appendHeaderRecord(nil, emb.Model(), st.dim)
	for i := len(recs) - 1; i >= 0; i-- {
		out, _ = appendVectorRecord(out, nil, recs[i].k, recs[i].v)
	}
	if err := os.WriteFile(path+".new", out, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}

	w := userWindow(ms[7].Content)
	want, _ := exact.Retrieve(context.Background(), "", w)
	if _, degraded := quant.snap.Load().idx.Search([][]float32{randomUnit(randFor(3), st.dim)}, 10, 1); !degraded {
		t.Fatalf("a search over the replaced file was not degraded")
	}
	got, _ := quant.Retrieve(context.Background(), "", w)
	if len(got.Memories) == 0 || got.Memories[0].Memory.Meta.ID != ms[7].Meta.ID {
		t.Fatalf("degraded search: %v; want %s first", ids(got), ms[7].Meta.ID)
	}
	if !quant.rereadCache.Load() {
		t.Fatalf("the degraded search did not ask for the cache to be read again")
	}
	before := emb.Inputs()
	rebuild(t, quant)
	if emb.Inputs() != before {
		t.Errorf("the rebuild embedded %d texts, want 0: every vector is in the new file", emb.Inputs()-before)
	}
	if _, degraded := quant.snap.Load().idx.Search([][]float32{randomUnit(randFor(3), st.dim)}, 10, 1); degraded {
		t.Fatalf("still degraded after the rebuild")
	}
	got, _ = quant.Retrieve(context.Background(), "", w)
	sameResults(t, "after the rebuild", got, want)
}

// TestQuantizedCacheSuite runs the embedding cache's tests, and some of
// the engine's, with every engine they make quantised: restarts, damage,
// compaction, model and dimension changes and sharing behave the same.
func TestQuantizedCacheSuite(t *testing.T) {
	quantizedTests = true
	defer func() { quantizedTests = false }()
	for _, tt := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"CacheRestartEmbedsNothing", TestCacheRestartEmbedsNothing},
		{"CacheInScopeFolders", TestCacheInScopeFolders},
		{"CacheModelChange", TestCacheModelChange},
		{"CacheDamageIsAMiss", TestCacheDamageIsAMiss},
		{"CacheCompaction", TestCacheCompaction},
		{"CacheDimensionChangeUnderSameModel", TestCacheDimensionChangeUnderSameModel},
		{"CacheSharedByTwoEngines", TestCacheSharedByTwoEngines},
		{"CacheChildProcess", TestCacheChildProcess},
		{"RetrieveFindsRelevantMemory", TestRetrieveFindsRelevantMemory},
		{"UnionKeepsBestScorePerMemory", TestUnionKeepsBestScorePerMemory},
		{"SupersededHitCreditedToHead", TestSupersededHitCreditedToHead},
		{"GraphExpansion", TestGraphExpansion},
		{"ConcurrentUse", TestConcurrentUse},
	} {
		t.Run(tt.name, tt.f)
	}
}

// TestQuantizedEngineAfterCompaction: compacting the cache file moves the
// records; the quantised index built after it reads its candidates from
// their new places.
func TestQuantizedEngineAfterCompaction(t *testing.T) {
	all := genMemories(400, 25)
	store := &listStore{}
	store.set(all)
	exact := newEngine(t, store, newEmbedder(t), nil, cacheConfig())
	rebuild(t, exact)
	emb := newEmbedder(t)
	quant := newEngine(t, store, emb, nil, quantizedConfig(), withCacheDir(t.TempDir()))
	rebuild(t, quant)
	before := quant.snap.Load().idx.Quant.Source.(*diskRows).locs[0].file

	store.set(all[:60]) // compacted: fewer than half the records are in use
	rebuild(t, exact)
	rebuild(t, quant)
	idx := quant.snap.Load().idx
	if after := idx.Quant.Source.(*diskRows).locs[0].file; idx.Len() != 60 || after == before {
		t.Fatalf("after compaction: %d rows, locations in the old file: %v", idx.Len(), after == before)
	}
	if emb.Inputs() != 400 {
		t.Errorf("embedded %d texts, want the 400 of the first build only", emb.Inputs())
	}
	if _, degraded := idx.Search([][]float32{randomUnit(randFor(4), idx.Dim)}, 10, 1); degraded {
		t.Errorf("search degraded after compaction")
	}
	for i := range 10 {
		w := userWindow(all[i*5].Content)
		want, _ := exact.Retrieve(context.Background(), "", w)
		got, _ := quant.Retrieve(context.Background(), "", w)
		sameResults(t, fmt.Sprintf("turn %d", i), got, want)
	}
}

// TestQuantizedEngineAfterTheCacheIsDeleted: a person deletes the cache
// folder, or the file is replaced by an empty one; the quantised index
// cannot read its candidates any more, and the next build embeds the
// memories again and answers exactly.
func TestQuantizedEngineAfterTheCacheIsDeleted(t *testing.T) {
	for _, how := range []string{"folder deleted", "file emptied"} {
		t.Run(how, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			store := memcore.NewMemStore()
			ms := genMemories(50, 27)
			write(t, store, ms...)
			exact := newEngine(t, store, newEmbedder(t), nil, cacheConfig())
			rebuild(t, exact)
			emb := newEmbedder(t)
			quant := newEngine(t, store, emb, nil, quantizedConfig(), withCacheDir(dir))
			rebuild(t, quant)
			var err error
			if how == "folder deleted" {
				err = os.RemoveAll(dir)
			} else {
				path := filepath.Join(dir, cacheFileName(emb.Model(), nil))
				if err = os.WriteFile(path+".new", nil, 0o600); err == nil {
					err = os.Rename(path+".new", path)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			w := userWindow(ms[3].Content)
			if res, _ := quant.Retrieve(context.Background(), "", w); len(res.Memories) == 0 || !quant.rereadCache.Load() {
				t.Fatalf("search over a lost cache: %d memories, reread asked %v; want memories and a reread", len(res.Memories), quant.rereadCache.Load())
			}
			before := emb.Inputs()
			rebuild(t, quant)
			if got := emb.Inputs() - before; got != len(ms) {
				t.Errorf("the rebuild embedded %d texts, want all %d again", got, len(ms))
			}
			want, _ := exact.Retrieve(context.Background(), "", w)
			got, _ := quant.Retrieve(context.Background(), "", w)
			sameResults(t, "after the rebuild", got, want)
			if quant.rereadCache.Load() {
				t.Errorf("still degraded after the rebuild")
			}
		})
	}
}
