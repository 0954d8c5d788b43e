package memretrieve

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// checkQuantized checks the code and scale quantize gives v: every code in
// −127…127, every value within half a step of code·scale (and a little for
// rounding), the largest magnitude coded as ±127, and matchesCode true.
func checkQuantized(t *testing.T, v []float32) {
	t.Helper()
	code := make([]int8, len(v))
	scale := quantize(v, code)
	var m float32
	for _, f := range v {
		m = max(m, abs32(f))
	}
	if m == 0 {
		if scale != 0 || slices.ContainsFunc(code, func(c int8) bool { return c != 0 }) {
			t.Fatalf("zero vector: scale %v, code %v; want 0 and zeros", scale, code)
		}
		return
	}
	if want := float32(float64(m) / 127); scale != want {
		t.Fatalf("scale %v, want the largest magnitude over 127, %v", scale, want)
	}
	big := false
	for i, f := range v {
		c := code[i]
		if c < -127 {
			t.Fatalf("code %d is -128: the quantisation is symmetric", i)
		}
		// Half a step, and the rounding of a subnormal scale.
		if d := math.Abs(float64(f) - float64(c)*float64(scale)); d > float64(scale)*0.5001+127*0x1p-149 {
			t.Fatalf("value %d = %v coded %d·%v: off by %v, more than half a step", i, f, c, scale, d)
		}
		big = big || c == 127 || c == -127
	}
	if !big {
		t.Fatalf("no value coded ±127 in %v", code)
	}
	if !matchesCode(v, code, scale) {
		t.Fatalf("matchesCode rejects the vector its code was made from")
	}
}

func TestQuantize(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, v := range [][]float32{
		{}, {0, 0, 0}, {1}, {-1}, {0.5, -0.5}, {3, -1, 0.25, 1e-9},
		{1e-38, -3e-39, 2e-38}, // subnormal scales
		{math.MaxFloat32, -math.MaxFloat32 / 3},
		randomUnit(r, 1536), randomUnit(r, 7),
	} {
		checkQuantized(t, v)
	}
	// Another vector does not match the code.
	a, b := randomUnit(r, 64), randomUnit(r, 64)
	code := make([]int8, 64)
	scale := quantize(a, code)
	if matchesCode(b, code, scale) {
		t.Errorf("matchesCode accepts an unrelated vector")
	}
	if matchesCode(a[:63], code, scale) {
		t.Errorf("matchesCode accepts a vector of another length")
	}
}

func FuzzQuantize(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 191}, uint8(0))
	f.Add([]byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, _ uint8) {
		v := make([]float32, len(data)/4)
		for i := range v {
			x := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return // index vectors are finite (normalize refuses others)
			}
			v[i] = x
		}
		checkQuantized(t, v)
	})
}

// clusteredVectors returns n unit vectors of dim values around clusters
// centres (so that many vectors are close to one another, unlike uniform
// random ones), and queries drawn the same way.
func clusteredVectors(r *rand.Rand, n, queries, dim, clusters int, spread float64) (vecs, qs [][]float32) {
	centres := make([][]float32, clusters)
	for i := range centres {
		centres[i] = randomUnit(r, dim)
	}
	draw := func() []float32 {
		c := centres[r.IntN(clusters)]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64()*spread/math.Sqrt(float64(dim)))
		}
		normalize(v)
		return v
	}
	for range n {
		vecs = append(vecs, draw())
	}
	for range queries {
		qs = append(qs, draw())
	}
	return vecs, qs
}

// TestQuantizedIndex: a quantised Index returns the exact index's matches,
// with the same scores, for single and batched queries, on one goroutine
// and on several; and when every row is a candidate the results are equal
// by construction.
func TestQuantizedIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, tc := range []struct {
		name       string
		n, dim, k  int
		clusters   int
		spread     float64
		wantRecall float64
	}{
		{"every row a candidate", 100, 32, 25, 5, 0.5, 1},
		{"uniform", 3000, 96, 10, 3000, 10, 0.99},
		{"clustered", 3000, 256, 10, 30, 0.6, 0.99},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vecs, qs := clusteredVectors(r, tc.n, 40, tc.dim, tc.clusters, tc.spread)
			ids := make([]string, tc.n)
			for i := range ids {
				ids[i] = fmt.Sprint(i)
			}
			for _, par := range []int{1, 3} {
				exact, err := NewIndex(ids, vecs, WithParallelism(par))
				if err != nil {
					t.Fatal(err)
				}
				quant, err := NewIndex(ids, vecs, WithParallelism(par), WithQuantized(true))
				if err != nil {
					t.Fatal(err)
				}
				if quant.Len() != tc.n || quant.Dim() != tc.dim {
					t.Fatalf("Len, Dim = %d, %d", quant.Len(), quant.Dim())
				}
				want, err := exact.SearchBatch(qs, tc.k)
				if err != nil {
					t.Fatal(err)
				}
				got, err := quant.SearchBatch(qs, tc.k)
				if err != nil {
					t.Fatal(err)
				}
				found, same := 0, 0
				for qi := range qs {
					one, err := quant.Search(qs[qi], tc.k)
					if err != nil || !slices.Equal(one, got[qi]) {
						t.Fatalf("query %d: Search = %v, %v; SearchBatch = %v", qi, one, err, got[qi])
					}
					found += recallCount(got[qi], want[qi])
					if slices.Equal(got[qi], want[qi]) {
						same++
					}
					// Every score is the exact index's score for that id.
					for _, m := range got[qi] {
						i := slices.IndexFunc(want[qi], func(w Match) bool { return w.ID == m.ID })
						if i >= 0 && want[qi][i].Score != m.Score {
							t.Fatalf("query %d: %s scored %v, the exact index %v", qi, m.ID, m.Score, want[qi][i].Score)
						}
					}
				}
				recall := float64(found) / float64(len(qs)*tc.k)
				if recall < tc.wantRecall {
					t.Errorf("par %d: recall@%d = %.3f, want at least %.2f", par, tc.k, recall, tc.wantRecall)
				}
				if tc.wantRecall == 1 && same != len(qs) {
					t.Errorf("par %d: %d of %d result lists equal the exact ones", par, same, len(qs))
				}
			}
		})
	}
}

// recallCount is how many of want's ids got holds.
func recallCount(got, want []Match) int {
	n := 0
	for _, w := range want {
		if slices.ContainsFunc(got, func(m Match) bool { return m.ID == w.ID }) {
			n++
		}
	}
	return n
}

// quantizedConfig is identityConfig with the quantised index.
func quantizedConfig() Config {
	c := identityConfig()
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
		exact := newEngine(t, store, newEmbedder(t), nil, identityConfig())
		rebuild(t, exact)
		quant := newEngine(t, store, newEmbedder(t), nil, quantizedConfig())
		rebuild(t, quant)

		idx := quant.snap.Load().idx
		_, onDisk := store.(*memcore.FileStore)
		switch {
		case idx.quant == nil || idx.vecs != nil:
			t.Fatalf("the index is not quantised")
		case onDisk && (idx.quant.block != nil || len(idx.quant.resident) != 0 || len(quant.cache.vecs) != 0):
			t.Fatalf("float32 vectors in memory with a disk cache: block %d, resident %d, cache %d",
				len(idx.quant.block), len(idx.quant.resident), len(quant.cache.vecs))
		case onDisk && slices.ContainsFunc(idx.quant.locs, func(l diskLoc) bool { return l.file == nil }):
			t.Fatalf("a row has no place on disk")
		case !onDisk && len(idx.quant.block) != 300*idx.dim:
			t.Fatalf("a MemStore's quantised index keeps %d floats, want every vector's", len(idx.quant.block))
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
	exact := newEngine(t, store, newEmbedder(t), nil, identityConfig())
	rebuild(t, exact)
	emb := newEmbedder(t)
	quant := newEngine(t, store, emb, nil, quantizedConfig(), WithCacheDir(dir))
	rebuild(t, quant)

	// The records in reverse order, under a new file renamed into place.
	path := filepath.Join(dir, cacheFileName(emb.Model()))
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
	if _, degraded := quant.snap.Load().idx.search([][]float32{randomUnit(randFor(3), st.dim)}, 10, 1); !degraded {
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
	if _, degraded := quant.snap.Load().idx.search([][]float32{randomUnit(randFor(3), st.dim)}, 10, 1); degraded {
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
	exact := newEngine(t, store, newEmbedder(t), nil, identityConfig())
	rebuild(t, exact)
	emb := newEmbedder(t)
	quant := newEngine(t, store, emb, nil, quantizedConfig(), WithCacheDir(t.TempDir()))
	rebuild(t, quant)
	before := quant.snap.Load().idx.quant.locs[0].file

	store.set(all[:60]) // compacted: fewer than half the records are in use
	rebuild(t, exact)
	rebuild(t, quant)
	idx := quant.snap.Load().idx
	if idx.len() != 60 || idx.quant.locs[0].file == before {
		t.Fatalf("after compaction: %d rows, locations in the old file: %v", idx.len(), idx.quant.locs[0].file == before)
	}
	if emb.Inputs() != 400 {
		t.Errorf("embedded %d texts, want the 400 of the first build only", emb.Inputs())
	}
	if _, degraded := idx.search([][]float32{randomUnit(randFor(4), idx.dim)}, 10, 1); degraded {
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
			exact := newEngine(t, store, newEmbedder(t), nil, identityConfig())
			rebuild(t, exact)
			emb := newEmbedder(t)
			quant := newEngine(t, store, emb, nil, quantizedConfig(), WithCacheDir(dir))
			rebuild(t, quant)
			var err error
			if how == "folder deleted" {
				err = os.RemoveAll(dir)
			} else {
				path := filepath.Join(dir, cacheFileName(emb.Model()))
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
