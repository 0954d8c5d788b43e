package search

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
)

// ErrDimension is returned when vectors or queries do not have the length an
// [Index] needs.
var ErrDimension = errors.New("vector dimension mismatch")

// IndexConfig configures an [Index]; its zero value is the exact index
// searched with runtime.GOMAXPROCS(0) goroutines.
type IndexConfig struct {
	// Parallelism is how many goroutines one search over a large index may
	// use: at least 0; 0 means runtime.GOMAXPROCS(0).
	Parallelism int
	// Quantized makes the index quantised, as the engine's is with
	// memretrieve.Config.Quantized: an int8 copy of each vector (one scale
	// per vector) is scanned with SIMD integer dot products, and the best
	// candidates (4 per result wanted, at least 40) are re-ranked with their
	// float32 vectors, so scores are exact cosine similarities and the
	// results are the exact search's whenever the true best vectors are
	// among the candidates. An Index keeps the float32 vectors in memory
	// for the re-rank, so it is faster but not smaller than the exact one.
	Quantized bool
}

// Validate reports a Parallelism below 0 as a *memcore.ConfigError.
func (c IndexConfig) Validate() error {
	var bad memcore.FieldErrors
	bad.Check(c.Parallelism >= 0, "Parallelism", c.Parallelism, "at least 0 (0: GOMAXPROCS)")
	return bad.Err("search", "")
}

// Index is the exact nearest-neighbour index the memretrieve engine
// searches: unit vectors in one contiguous block, scored by dot product —
// cosine similarity — with a bounded heap per query, large indexes split
// across goroutines. It is immutable and safe for concurrent use.
type Index struct {
	flat *index.Flat
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
// A bad cfg is a *memcore.ConfigError.
func NewIndex(ids []string, vectors [][]float32, cfg IndexConfig) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(ids) != len(vectors) {
		return nil, fmt.Errorf("search: new index: %d ids for %d vectors", len(ids), len(vectors))
	}
	dim := 0
	if len(vectors) > 0 {
		dim = len(vectors[0])
	}
	if len(vectors) > 0 && dim == 0 {
		return nil, fmt.Errorf("search: new index: %w: vectors are empty", ErrDimension)
	}
	flat := &index.Flat{Dim: dim, IDs: append([]string(nil), ids...), Vecs: make([]float32, len(vectors)*dim)}
	for i, v := range vectors {
		if len(v) != dim {
			return nil, fmt.Errorf("search: new index: %w: vector %d (%s) has %d values, vector 0 has %d", ErrDimension, i, ids[i], len(v), dim)
		}
		row := flat.Vecs[i*dim : (i+1)*dim]
		copy(row, v)
		if !index.Normalize(row) {
			return nil, fmt.Errorf("search: new index: vector %d (%s) is zero or not finite", i, ids[i])
		}
	}
	if cfg.Quantized {
		codes, scales := index.QuantizeBlock(flat.Vecs, dim)
		flat.Quant = &index.Quant{Codes: codes, Scales: scales, Block: flat.Vecs}
		flat.Vecs = nil
	}
	par := cfg.Parallelism
	if par == 0 {
		par = runtime.GOMAXPROCS(0)
	}
	return &Index{flat: flat, par: par}, nil
}

// Len is the number of vectors.
func (ix *Index) Len() int { return ix.flat.Len() }

// Dim is the length of the vectors (0 for an empty index).
func (ix *Index) Dim() int { return ix.flat.Dim }

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
		if ix.Len() > 0 && len(q) != ix.flat.Dim {
			return nil, fmt.Errorf("search: %w: query %d has %d values, the index %d", ErrDimension, i, len(q), ix.flat.Dim)
		}
		qs[i] = append([]float32(nil), q...)
		if !index.Normalize(qs[i]) {
			return nil, fmt.Errorf("search: query %d is zero or not finite", i)
		}
	}
	hits, _ := ix.flat.Search(qs, k, ix.par) // an Index's vectors are all in memory: never degraded
	out := make([][]Match, len(hits))
	for i, hs := range hits {
		out[i] = make([]Match, len(hs))
		for j, h := range hs {
			out[i][j] = Match{ID: ix.flat.IDs[h.Row], Score: h.Score}
		}
	}
	return out, nil
}
