package index

import (
	"math"
	"slices"
	"sync"

	"github.com/forgemem/forgemem/memretrieve/internal/vecmath"
)

// The quantised index. Each row is kept as int8 values with one float32
// scale per row, symmetric around zero: value i of the row is about
// codes[i]·scale, where scale is the row's largest magnitude over 127. A
// search scans the int8 rows with vecmath.DotInt8 — a quarter of the bytes
// of the float32 block — keeps the best rerankFactor×k rows of each query
// by that approximate score, and then scores those candidates exactly, with
// vecmath.Dot over their float32 vectors, as the exact index does: when the
// k best rows are among the candidates, the result is the exact search's,
// scores and order included.
//
// The float32 vectors of the candidates come from memory (Quant.Block) or
// from a Source: the engine's reads them from its on-disk embedding cache
// (each row remembers where its record is, and only the candidates'
// records are read).

// rerankFactor is how many candidates per wanted result the int8 scan
// keeps for the float32 re-rank (at least minCandidates in all). Measured
// by membench (recall in docs/PERFORMANCE.md): of the exact top-10, the
// int8 scores alone ranked 97.6% within their top 10 and all within their
// top 20, on 10,000 clustered synthetic vectors of 1,536 dimensions, and
// 99.7% and all on 1,599 real sentence embeddings of 512 (the Universal
// Sentence Encoder lite, MADial-Bench texts). Four times k leaves a margin
// of two over what those needed, for a few more records read per search.
const rerankFactor = 4

// minCandidates is the fewest candidates a quantised search re-ranks.
const minCandidates = 40

// Candidates is how many rows a quantised search of k results out of n
// re-ranks.
func Candidates(k, n int) int {
	return min(n, max(rerankFactor*k, minCandidates))
}

// Quant is the int8 form of an index's rows and where their float32
// vectors are for the re-rank.
type Quant struct {
	Codes  []int8    // row i is Codes[i*dim:(i+1)*dim]
	Scales []float32 // of each row
	// Block holds every row's float32 vector, resident; when it is nil,
	// Source gives them.
	Block []float32
	// Source gives the float32 vectors of rows when Block is nil: the
	// engine reads them from its on-disk embedding cache.
	Source Source
}

// Source gives the float32 vectors of some rows of a quantised index, for
// the re-rank.
type Source interface {
	// Floats returns the float32 vectors of rows (sorted, distinct), by
	// row, scaled to unit length as the exact index holds them, written
	// into scratch (room for len(rows) vectors of dim values), which the
	// vectors returned may share. A row whose vector cannot be had is left
	// out, and degraded is true.
	Floats(rows []int, dim int, scratch []float32) (vecs map[int][]float32, degraded bool)
}

// Quantize writes the int8 code of v into code (of the same length) and
// returns its scale: v[i] ≈ code[i]·scale, within scale/2, with scale the
// largest magnitude in v over 127 (0 for a zero vector, whose code is all
// zero).
func Quantize(v []float32, code []int8) float32 {
	var m float32
	for _, f := range v {
		m = max(m, abs32(f))
	}
	if m == 0 || m != m {
		clear(code)
		return 0
	}
	// In float64: 127/m overflows float32 for the smallest m.
	inv := 127 / float64(m)
	code = code[:len(v)]
	for i, f := range v {
		r := float64(f) * inv
		// Round half away from zero; |r| ≤ 127 up to rounding, so the
		// result fits.
		if r >= 0 {
			code[i] = int8(min(r+0.5, 127))
		} else {
			code[i] = int8(max(r-0.5, -127))
		}
	}
	return float32(float64(m) / 127)
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// MatchesCode reports whether v is the vector code and scale were made
// from: every value within one step of the code's. It tells a record read
// back from disk apart from another vector at the same place (the file
// was replaced).
func MatchesCode(v []float32, code []int8, scale float32) bool {
	if len(v) != len(code) {
		return false
	}
	if scale > 1e30 || scale < 1e-30 {
		// In float64: code·scale may overflow float32 for the largest
		// values, and a subnormal scale is rounded.
		s := float64(scale)
		tol := s*1.01 + 1e-37
		for i, f := range v {
			if d := float64(f) - float64(code[i])*s; d > tol || d < -tol || d != d {
				return false
			}
		}
		return true
	}
	tol := scale * 1.01
	for i, f := range v {
		if d := f - float32(code[i])*scale; d > tol || d < -tol || d != d {
			return false
		}
	}
	return true
}

// QuantizeBlock returns the quantised form of the dim-wide rows of block.
func QuantizeBlock(block []float32, dim int) ([]int8, []float32) {
	n := len(block) / max(dim, 1)
	codes := make([]int8, n*dim)
	scales := make([]float32, n)
	for r := range n {
		scales[r] = Quantize(block[r*dim:(r+1)*dim], codes[r*dim:(r+1)*dim])
	}
	return codes, scales
}

// quantizeQuery returns the int8 code of q; its scale does not matter for
// the order of the rows and is dropped.
func quantizeQuery(q []float32) []int8 {
	code := make([]int8, len(q))
	Quantize(q, code)
	return code
}

// scanInt8 scores rows lo..hi-1 against every query's code by the int8 dot
// product times the row's scale (the query's scale, the same for every
// row, is left out), offering each score to that query's heap. As in scan,
// each row is read once for all queries.
func (x *Flat) scanInt8(codes [][]int8, lo, hi int, heaps []topK) {
	dim, q := x.Dim, x.Quant
	for r := lo; r < hi; r++ {
		row := q.Codes[r*dim : (r+1)*dim : (r+1)*dim]
		scale := q.Scales[r]
		for qi, c := range codes {
			s := float32(vecmath.DotInt8(row, c)) * scale
			if h := &heaps[qi]; s >= h.floor {
				h.offer(Hit{Row: r, Score: s})
			}
		}
	}
}

// searchQuant is search over the quantised rows: the int8 scan keeps
// candidates(k, n) rows per query, whose float32 vectors are then fetched
// (each distinct row once, for all queries) and scored exactly. degraded
// reports candidates whose vector could not be read back from the cache
// file (it was replaced or damaged since the index was built): they keep
// their approximate score, and the index should be rebuilt.
func (x *Flat) searchQuant(queries [][]float32, k, par int) (out [][]Hit, degraded bool) {
	n := x.Len()
	codes := make([][]int8, len(queries))
	for i, q := range queries {
		codes[i] = quantizeQuery(q)
	}
	cands := x.topRows(queries, codes, Candidates(k, n), par)
	var rows []int
	for _, hs := range cands {
		for _, h := range hs {
			rows = append(rows, h.Row)
		}
	}
	slices.Sort(rows)
	rows = slices.Compact(rows)
	scratch := getScratch(len(rows) * x.Dim)
	defer scratchPool.Put(scratch)
	vecs, degraded := x.Quant.floats(rows, x.Dim, *scratch)
	out = make([][]Hit, len(queries))
	for qi, hs := range cands {
		exact := make([]Hit, len(hs))
		for j, h := range hs {
			exact[j] = h
			if v := vecs[h.Row]; v != nil {
				exact[j].Score = vecmath.Dot(v, queries[qi])
			} else {
				// The approximate score, on the scale of the exact one.
				exact[j].Score = h.Score * quantScale(queries[qi])
			}
		}
		slices.SortFunc(exact, CompareHits)
		out[qi] = exact[:min(k, len(exact))]
	}
	return out, degraded
}

// quantScale is the scale Quantize gives q.
func quantScale(q []float32) float32 {
	var m float32
	for _, f := range q {
		m = max(m, abs32(f))
	}
	return m / 127
}

// scratchPool holds the buffers quantised searches read candidates'
// vectors into.
var scratchPool sync.Pool

// getScratch returns a buffer of at least n float32 values from the pool.
func getScratch(n int) *[]float32 {
	if p, ok := scratchPool.Get().(*[]float32); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	b := make([]float32, n)
	return &b
}

// floats returns the float32 vectors of rows (sorted, distinct), by row:
// from Block, or from Source (see [Source.Floats]).
func (q *Quant) floats(rows []int, dim int, scratch []float32) (vecs map[int][]float32, degraded bool) {
	if q.Block == nil {
		if q.Source == nil {
			return map[int][]float32{}, len(rows) > 0
		}
		return q.Source.Floats(rows, dim, scratch)
	}
	vecs = make(map[int][]float32, len(rows))
	for _, r := range rows {
		vecs[r] = q.Block[r*dim : (r+1)*dim : (r+1)*dim]
	}
	return vecs, false
}
