package memretrieve

import (
	"errors"
	"fmt"
)

// ErrDimension is returned when vectors or queries do not have the length an
// [Index] needs.
var ErrDimension = errors.New("vector dimension mismatch")

// Index is the exact nearest-neighbour index the [Engine] searches, for
// hosts that want the same small, dependency-free vector search (and for
// benchmarks): unit vectors in one contiguous block, scored by dot product
// — cosine similarity — with a bounded heap per query, large indexes split
// across goroutines. It is immutable and safe for concurrent use.
//
// With [WithQuantized] it is the engine's quantised index instead: an int8
// copy of every vector is scanned, and the best candidates are re-ranked
// with their float32 vectors (see [Config.Quantized]). An Index keeps those
// float32 vectors in memory beside the int8 copy, so it is faster but not
// smaller than the exact one; the engine's quantised index reads them from
// its on-disk cache instead.
type Index struct {
	flat *flatIndex
	par  int
}

// Match is one search result of an [Index] or a [LexicalIndex].
type Match struct {
	ID string
	// Score is, for an Index, the cosine similarity of the query and the
	// vector, in [-1, 1]; for a LexicalIndex, the text's BM25 score, above 0.
	Score float32
}

// NewIndex copies vectors, scaled to unit length, into one block; ids[i]
// names vectors[i]. Every vector must have the same, non-zero length (an
// error wrapping [ErrDimension] otherwise) and be finite and not all zero.
// [WithParallelism] sets how many goroutines one search may use (default
// runtime.GOMAXPROCS(0)), and [WithQuantized] makes a quantised index; an
// option out of range is a *[ConfigError] wrapping [ErrInvalidConfig]. Nil
// options are ignored.
func NewIndex(ids []string, vectors [][]float32, opts ...IndexOption) (*Index, error) {
	o := defaultIndexOptions()
	for _, opt := range opts {
		if opt != nil {
			opt.applyIndex(&o)
		}
	}
	if err := o.bad.err(); err != nil {
		return nil, err
	}
	if len(ids) != len(vectors) {
		return nil, fmt.Errorf("memretrieve: new index: %d ids for %d vectors", len(ids), len(vectors))
	}
	dim := 0
	if len(vectors) > 0 {
		dim = len(vectors[0])
	}
	if len(vectors) > 0 && dim == 0 {
		return nil, fmt.Errorf("memretrieve: new index: %w: vectors are empty", ErrDimension)
	}
	flat := &flatIndex{dim: dim, ids: append([]string(nil), ids...), vecs: make([]float32, len(vectors)*dim)}
	for i, v := range vectors {
		if len(v) != dim {
			return nil, fmt.Errorf("memretrieve: new index: %w: vector %d (%s) has %d values, vector 0 has %d", ErrDimension, i, ids[i], len(v), dim)
		}
		row := flat.vecs[i*dim : (i+1)*dim]
		copy(row, v)
		if !normalize(row) {
			return nil, fmt.Errorf("memretrieve: new index: vector %d (%s) is zero or not finite", i, ids[i])
		}
	}
	if o.quantized {
		codes, scales := quantizeBlock(flat.vecs, dim)
		flat.quant = &quantRows{codes: codes, scales: scales, block: flat.vecs}
		flat.vecs = nil
	}
	return &Index{flat: flat, par: o.parallelism}, nil
}

// Len is the number of vectors.
func (ix *Index) Len() int { return ix.flat.len() }

// Dim is the length of the vectors (0 for an empty index).
func (ix *Index) Dim() int { return ix.flat.dim }

// Search returns the k best matches for query, best first; fewer when the
// index holds fewer than k vectors. Ties are broken by insertion order. The
// query need not be of unit length; one of the wrong length is an error
// wrapping [ErrDimension], and one that is zero or not finite an error.
func (ix *Index) Search(query []float32, k int) ([]Match, error) {
	res, err := ix.SearchBatch([][]float32{query}, k)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// SearchBatch is Search for several queries in one pass over the index, so
// each vector is read from memory once however many queries there are.
func (ix *Index) SearchBatch(queries [][]float32, k int) ([][]Match, error) {
	qs := make([][]float32, len(queries))
	for i, q := range queries {
		if ix.Len() > 0 && len(q) != ix.flat.dim {
			return nil, fmt.Errorf("memretrieve: search: %w: query %d has %d values, the index %d", ErrDimension, i, len(q), ix.flat.dim)
		}
		qs[i] = append([]float32(nil), q...)
		if !normalize(qs[i]) {
			return nil, fmt.Errorf("memretrieve: search: query %d is zero or not finite", i)
		}
	}
	hits, _ := ix.flat.search(qs, k, ix.par) // an Index's vectors are all in memory: never degraded
	out := make([][]Match, len(hits))
	for i, hs := range hits {
		out[i] = make([]Match, len(hs))
		for j, h := range hs {
			out[i][j] = Match{ID: ix.flat.ids[h.row], Score: h.score}
		}
	}
	return out, nil
}
