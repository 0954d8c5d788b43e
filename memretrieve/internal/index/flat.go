package index

import (
	"cmp"
	"math"
	"slices"
	"sync"

	"github.com/forgemem/forgemem/memretrieve/internal/vecmath"
)

// Flat is an exact nearest-neighbour index with no structure beyond a
// flat list of rows, every one of which a search scores: an immutable set of
// unit vectors in one contiguous block, where row i is vecs[i*dim:(i+1)*dim]
// and belongs to ids[i] (a memory id, for the engine). Searches read it
// without locks; a rebuild makes a new one. The experimental package
// memretrieve/experimental/search offers it on its own.
type Flat struct {
	Dim  int
	IDs  []string
	Vecs []float32
	// Quant, when set, makes this a quantised index: the rows are searched
	// in their int8 form, and Vecs is nil (Quant says where the float32
	// vectors are).
	Quant *Quant
}

// Hit is one search result: a row of the index and its cosine similarity
// with the query.
type Hit struct {
	Row   int
	Score float32
}

// worse orders hits for the bounded heaps: a is worse than b when it scores
// lower, or scores the same and comes later in the index. The order is
// total, so results are deterministic.
func worse(a, b Hit) bool {
	return a.Score < b.Score || (a.Score == b.Score && a.Row > b.Row)
}

// parallelMinFloats is the index size (rows × dim) from which a search is
// split across goroutines: below it the scan takes less time than starting
// them.
const parallelMinFloats = 1 << 18

// Len is the number of rows.
func (x *Flat) Len() int {
	if x == nil {
		return 0
	}
	return len(x.IDs)
}

// Search returns, for each query, its k best rows, best first. Queries are
// unit vectors of exactly x.Dim values: the callers (search.Index.SearchBatch,
// Engine.search) check the length, as vecmath.Dot panics on a mismatch.
// All queries are scored in one pass over the block, so each row is read
// from memory once however many queries there are. Large indexes are
// scanned by up to par goroutines, each over its own stretch of rows with
// its own heaps, merged at the end.
//
// A quantised index (quant set) scans its int8 rows and re-ranks the best
// candidates exactly (see searchQuant); degraded then reports candidates
// whose float32 vector could not be read back from disk.
func (x *Flat) Search(queries [][]float32, k, par int) (hits [][]Hit, degraded bool) {
	if x.Len() == 0 || k < 1 || len(queries) == 0 {
		return make([][]Hit, len(queries)), false
	}
	if x.Quant != nil {
		return x.searchQuant(queries, k, par)
	}
	return x.topRows(queries, nil, k, par), false
}

// topRows returns the k best rows (at most the index's) of each query,
// best first: scored by x.scan over the float32 rows, or, when codes (the
// queries' int8 codes) is not nil, by x.scanInt8 over the int8 rows. Large
// indexes are scanned by up to par goroutines, each over its own stretch of
// rows with its own heaps; the heaps of each query are merged at the end.
func (x *Flat) topRows(queries [][]float32, codes [][]int8, k, par int) [][]Hit {
	nq := len(queries)
	n := x.Len()
	k = min(k, n)
	workers := 1
	if n*x.Dim >= parallelMinFloats && par > 1 {
		workers = min(par, n/64+1)
	}
	out := make([][]Hit, nq)
	if workers == 1 {
		heaps := newHeaps(nq, k)
		x.scanRows(queries, codes, 0, n, heaps)
		for q, h := range heaps {
			out[q] = h.sorted()
		}
		return out
	}
	parts := make([][]topK, workers)
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		parts[w] = newHeaps(nq, k)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func(heaps []topK) {
			defer wg.Done()
			x.scanRows(queries, codes, lo, hi, heaps)
		}(parts[w])
	}
	wg.Wait()
	for q := range nq {
		var all []Hit
		for w := range parts {
			all = append(all, parts[w][q].h...)
		}
		slices.SortFunc(all, CompareHits)
		out[q] = all[:min(k, len(all))]
	}
	return out
}

// scanRows is scanInt8 with codes when it is not nil, else scan.
func (x *Flat) scanRows(queries [][]float32, codes [][]int8, lo, hi int, heaps []topK) {
	if codes != nil {
		x.scanInt8(codes, lo, hi, heaps)
	} else {
		x.scan(queries, lo, hi, heaps)
	}
}

// scan scores rows lo..hi-1 against every query, offering each score to
// that query's heap. Rows are taken one at a time and scored against every
// query before the next row, so a row is read from memory once however many
// queries there are (the others find it in the cache). Each dot product is
// vecmath.Dot: SIMD where the CPU has it, within the bound its package
// documents of the exact value.
func (x *Flat) scan(queries [][]float32, lo, hi int, heaps []topK) {
	dim := x.Dim
	if len(queries) == 1 {
		q, h := queries[0], &heaps[0]
		for r := lo; r < hi; r++ {
			s := vecmath.Dot(x.Vecs[r*dim:(r+1)*dim:(r+1)*dim], q)
			if s >= h.floor {
				h.offer(Hit{Row: r, Score: s})
			}
		}
		return
	}
	for r := lo; r < hi; r++ {
		row := x.Vecs[r*dim : (r+1)*dim : (r+1)*dim]
		for qi, q := range queries {
			s := vecmath.Dot(row, q)
			if h := &heaps[qi]; s >= h.floor {
				h.offer(Hit{Row: r, Score: s})
			}
		}
	}
}

// CompareHits orders hits best first: the higher score, then the earlier
// row.
func CompareHits(a, b Hit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.Row, b.Row)
}

// topK keeps the k best hits seen in a min-heap whose root is the worst of
// them. floor is the score a new Hit must reach to be worth offering: -Inf
// until the heap is full, then the root's score.
type topK struct {
	k     int
	h     []Hit
	floor float32
}

func newHeaps(n, k int) []topK {
	hs := make([]topK, n)
	for i := range hs {
		hs[i] = topK{k: k, h: make([]Hit, 0, k), floor: float32(math.Inf(-1))}
	}
	return hs
}

// offer adds c if the heap is not full or c is better than its worst Hit.
func (t *topK) offer(c Hit) {
	switch {
	case len(t.h) < t.k:
		t.push(c)
	case worse(t.h[0], c):
		t.replaceWorst(c)
	}
}

// push adds c to the heap, which is not full.
func (t *topK) push(c Hit) {
	h := append(t.h, c)
	for i := len(h) - 1; i > 0; { // sift up
		p := (i - 1) / 2
		if !worse(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	t.h = h
	if len(h) == t.k {
		t.floor = h[0].Score
	}
}

// replaceWorst puts c, better than the root, in the root's place.
func (t *topK) replaceWorst(c Hit) {
	h := t.h
	h[0] = c
	for i := 0; ; { // sift down
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && worse(h[r], h[l]) {
			m = r
		}
		if !worse(h[m], h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	t.floor = h[0].Score
}

// sorted returns the kept hits, best first.
func (t *topK) sorted() []Hit {
	out := slices.Clone(t.h)
	slices.SortFunc(out, CompareHits)
	return out
}

// UnitTolerance is how far from 1 the squared length of a vector scaled to
// unit length in float32 can be: each value is within a relative 2⁻²⁴ of
// its exact value, so the sum of squares is within 2⁻²³ of 1, far below
// this bound; the cosine similarities of a vector left as it is are off by
// at most half of it.
const UnitTolerance = 1e-6

// Normalize scales v to unit length in place. It reports false, leaving v
// unusable, when v is empty, all zero, or holds a NaN or an infinity.
//
// A vector already of unit length, to within the rounding of float32 values
// (its squared length within UnitTolerance of 1), is left as it is, so that
// normalising is idempotent: a vector normalised, written to the cache file
// and read back is the same, bit for bit, and scores the same.
func Normalize(v []float32) bool {
	var sum float64
	for _, f := range v {
		sum += float64(f) * float64(f)
	}
	if len(v) == 0 || sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return false
	}
	if math.Abs(sum-1) <= UnitTolerance {
		return true
	}
	inv := 1 / math.Sqrt(sum)
	for i, f := range v {
		v[i] = float32(float64(f) * inv)
	}
	return true
}
