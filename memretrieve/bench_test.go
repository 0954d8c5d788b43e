package memretrieve

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
	"github.com/forgemem/forgemem/memretrieve/internal/vecmath"
	"github.com/forgemem/forgemem/providers/fake"
	"github.com/rs/zerolog"
)

const benchDim = 1536

// benchFlatIndexes caches the big random indexes across benchmarks.
var benchFlatIndexes sync.Map

func benchFlatIndex(n int) *index.Flat {
	if x, ok := benchFlatIndexes.Load(n); ok {
		return x.(*index.Flat)
	}
	r := rand.New(rand.NewPCG(uint64(n), 99))
	x := &index.Flat{Dim: benchDim, IDs: make([]string, n), Vecs: make([]float32, n*benchDim)}
	for i := range x.Vecs {
		x.Vecs[i] = float32(r.Float64()*2 - 1)
	}
	for i := range n {
		index.Normalize(x.Vecs[i*benchDim : (i+1)*benchDim])
	}
	benchFlatIndexes.Store(n, x)
	return x
}

// BenchmarkSearch is the top-10 search of one query over n vectors of 1,536
// dimensions, with the default parallelism and on one goroutine.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		x := benchFlatIndex(n)
		q := randomUnit(rand.New(rand.NewPCG(1, 1)), benchDim)
		for _, par := range []int{runtime.GOMAXPROCS(0), 1} {
			b.Run(fmt.Sprintf("n=%d/par=%d", n, par), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(n * benchDim * 4))
				for b.Loop() {
					x.Search([][]float32{q}, 10, par)
				}
			})
		}
	}
}

// BenchmarkSearchFiveQueries is the search of a HyDE turn: five hypotheses
// scored in one pass.
func BenchmarkSearchFiveQueries(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		x := benchFlatIndex(n)
		r := rand.New(rand.NewPCG(2, 2))
		qs := make([][]float32, 5)
		for i := range qs {
			qs[i] = randomUnit(r, benchDim)
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				x.Search(qs, 10, runtime.GOMAXPROCS(0))
			}
		})
	}
}

// benchQuantIndexes caches the quantised indexes across benchmarks.
var benchQuantIndexes sync.Map

// benchQuantIndex is benchFlatIndex(n) quantised, its float32 vectors
// resident (as an experimental search.Index holds them) or, with onDisk, in
// a cache file the re-rank reads, as an engine with a disk cache does.
func benchQuantIndex(b *testing.B, n int, onDisk bool) *index.Flat {
	key := fmt.Sprint(n, onDisk)
	if x, ok := benchQuantIndexes.Load(key); ok {
		return x.(*index.Flat)
	}
	src := benchFlatIndex(n)
	codes, scales := index.QuantizeBlock(src.Vecs, benchDim)
	x := &index.Flat{Dim: benchDim, IDs: src.IDs, Quant: &index.Quant{Codes: codes, Scales: scales}}
	if !onDisk {
		x.Quant.Block = src.Vecs
		benchQuantIndexes.Store(key, x)
		return x
	}
	dir, err := os.MkdirTemp("", "memretrieve-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	c := newVecCache("bench", nil, map[memcore.Scope]string{memcore.ScopeRepo: dir}, true, zerolog.Nop())
	c.setDim(benchDim)
	keys := make([]contentKey, n)
	for lo := 0; lo < n; lo += 1000 {
		hi := min(lo+1000, n)
		vecs := make([][]float32, 0, hi-lo)
		for r := lo; r < hi; r++ {
			binary.LittleEndian.PutUint64(keys[r][:], uint64(r))
			vecs = append(vecs, src.Vecs[r*benchDim:(r+1)*benchDim])
		}
		c.put(memcore.ScopeRepo, keys[lo:hi], vecs)
	}
	disk := &diskRows{codes: codes, scales: scales, locs: make([]diskLoc, n)}
	for r, k := range keys {
		if disk.locs[r] = c.codes[k].loc; disk.locs[r].file == nil {
			b.Fatal("a vector was not written to the cache file")
		}
	}
	x.Quant.Source = disk
	benchQuantIndexes.Store(key, x)
	return x
}

// BenchmarkSearchQuantized is BenchmarkSearch over the quantised index: the
// int8 scan, then the re-rank of 40 candidates with their float32 vectors,
// resident ("mem", an experimental search.Index) or read from a cache file
// ("disk", the engine with Config.Quantized; the file is in the page
// cache). SetBytes is the int8 block's size.
func BenchmarkSearchQuantized(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		q := randomUnit(rand.New(rand.NewPCG(1, 1)), benchDim)
		for _, where := range []string{"mem", "disk"} {
			x := benchQuantIndex(b, n, where == "disk")
			for _, par := range []int{runtime.GOMAXPROCS(0), 1} {
				b.Run(fmt.Sprintf("n=%d/rerank=%s/par=%d", n, where, par), func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(n * benchDim))
					for b.Loop() {
						if _, degraded := x.Search([][]float32{q}, 10, par); degraded {
							b.Fatal("degraded search")
						}
					}
				})
			}
		}
	}
}

// naiveDot is the plain loop a reader would write first.
func naiveDot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

var sink float32

// BenchmarkScanFloor scores one query against every row of the index's
// block on one goroutine, with no heap: with the plain loop ("naive") and
// with vecmath.Dot, the kernel the index uses ("vecmath", named by
// vecmath.Kernel in the sub-benchmark). Against BenchmarkSearch's par=1 it
// shows what the heap and the bookkeeping cost; the memory-bandwidth floor
// (every core streaming the block) is vecmath's BenchmarkStreamFloor and
// membench's stream floor.
func BenchmarkScanFloor(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		x := benchFlatIndex(n)
		q := randomUnit(rand.New(rand.NewPCG(1, 1)), benchDim)
		for _, f := range []struct {
			name string
			dot  func(a, b []float32) float32
		}{{"naive", naiveDot}, {"vecmath-" + vecmath.Kernel(), vecmath.Dot}} {
			b.Run(fmt.Sprintf("n=%d/%s", n, f.name), func(b *testing.B) {
				b.SetBytes(int64(n * benchDim * 4))
				for b.Loop() {
					var best float32
					for r := range n {
						if s := f.dot(x.Vecs[r*benchDim:(r+1)*benchDim], q); s > best {
							best = s
						}
					}
					sink = best
				}
			})
		}
	}
}

// benchStore returns a MemStore of n memories, with every tenth one a new
// version of the one before and every fifth related to another.
func benchStore(b *testing.B, n int) *memcore.MemStore {
	b.Helper()
	store := memcore.NewMemStore()
	ms := genMemories(n, 2024)
	for i, m := range ms {
		if i%10 == 9 {
			supersede(m, ms[i-1])
			m.Meta.Scope, m.Meta.Version = ms[i-1].Meta.Scope, 2
		}
		if i%5 == 4 && i > 10 {
			relate(m, memcore.RelationshipRelatesTo, ms[i-7].Meta.ID)
		}
	}
	write(b, store, ms...)
	return store
}

// BenchmarkRetrieve is a whole turn at 10,000 memories with zero-latency
// fake providers (1,536-dimensional vectors): identity mode, LLM mode with a
// scripted reply of five hypotheses, and a turn served from the per-turn
// cache.
func BenchmarkRetrieve(b *testing.B) {
	store := benchStore(b, 10_000)
	dir := b.TempDir()
	emb := newEmbedder(b, fake.EmbedderConfig{Dimension: benchDim})
	llm := hypothesisLLM(b,
		"Prefers wrapping errors with sentinel values and errors.Is.",
		"Uses zerolog for structured logging in library code.",
		"Database migrations are numbered and live in one folder.",
		"Chose optimistic locking with retry and backoff.",
		"Table driven tests with golden files are the convention.")
	window := []memcore.Message{
		{Role: memcore.RoleUser, Content: "The handler returns a bare error string; how do we usually wrap and log errors here?"},
		{Role: memcore.RoleAssistant, Content: "I will check the logging package first."},
		{Role: memcore.RoleUser, Content: "Also the migration for the users table fails under concurrent writes."},
	}
	for _, mode := range []HypothesisMode{ModeIdentity, ModeLLM} {
		cfg := DefaultConfig()
		cfg.Mode = mode
		cfg.Timeout = 30e9
		e := newEngine(b, store, emb, llm, cfg, withCacheDir(dir))
		rebuild(b, e)
		b.Run(string(mode), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := e.Retrieve(context.Background(), "", window)
				if err != nil || len(res.Memories) == 0 {
					b.Fatalf("no memories: %v", err)
				}
			}
		})
		if mode == ModeLLM {
			b.Run("cached-turn", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					e.Retrieve(context.Background(), "same-turn", window)
				}
			})
		}
	}
}

// BenchmarkBuildWarmCache builds the index of 10,000 memories
// (1,536-dimensional vectors) from a warm on-disk cache: "restart" is a new
// engine reading the cache file, "rebuild" a running engine asked to
// rebuild with nothing changed, "one-new" a running engine indexing one new
// memory (and calibrating the relevance gate again), "one-new-gate-off" the
// same with the gate off.
func BenchmarkBuildWarmCache(b *testing.B) {
	store := benchStore(b, 10_000)
	dir := b.TempDir()
	emb := newEmbedder(b, fake.EmbedderConfig{Dimension: benchDim})
	warm := newEngine(b, store, emb, nil, identityConfig(), withCacheDir(dir))
	rebuild(b, warm)

	b.Run("restart", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e, _ := NewEngine(store, emb, nil, with(identityConfig(), withCacheDir(dir)))
			if err := e.Rebuild(context.Background()); err != nil {
				b.Fatal(err)
			}
			if e.snap.Load().idx.Len() != 10_000 {
				b.Fatal("incomplete index")
			}
		}
	})
	b.Run("rebuild", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rebuild(b, warm)
		}
	})
	oneNew := func(e *Engine) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			r := rand.New(rand.NewPCG(5, 5))
			for b.Loop() {
				b.StopTimer()
				write(b, store, mem(memcore.NewMemoryID(), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 1, genContent(r)))
				b.StartTimer()
				rebuild(b, e)
			}
		}
	}
	b.Run("one-new", oneNew(warm))
	off := newEngine(b, store, emb, nil, ungated(identityConfig()), withCacheDir(dir))
	rebuild(b, off)
	b.Run("one-new-gate-off", oneNew(off))
	// A store that hands out the same memories from list to list, as a
	// host that keeps them in memory does: the engine extends its indexes.
	all, err := store.List(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	kept := &keptStore{MemStore: store}
	kept.set(all)
	following := newEngine(b, kept, emb, nil, identityConfig(), withCacheDir(dir))
	rebuild(b, following)
	b.Run("one-new-kept", func(b *testing.B) {
		b.ReportAllocs()
		r := rand.New(rand.NewPCG(6, 6))
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			all = append(all, mem(memcore.NewMemoryID(), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 1000+i, genContent(r)))
			kept.set(all)
			b.StartTimer()
			rebuild(b, following)
		}
	})
}
