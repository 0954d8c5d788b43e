package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/forgemem/forgemem/memretrieve/internal/vecmath"
)

// randomFlatIndex returns a flat index of n unit vectors of dim values; every
// seventh row repeats an earlier one, so ties are exercised.
func randomFlatIndex(r *rand.Rand, n, dim int) *Flat {
	x := &Flat{Dim: dim, IDs: make([]string, n), Vecs: make([]float32, n*dim)}
	for i := range n {
		row := x.Vecs[i*dim : (i+1)*dim]
		if i%7 == 6 {
			copy(row, x.Vecs[(i/2)*dim:(i/2+1)*dim])
		} else {
			for j := range row {
				row[j] = float32(r.NormFloat64())
			}
			Normalize(row)
		}
		x.IDs[i] = fmt.Sprint(i)
	}
	return x
}

func randomUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for j := range v {
		v[j] = float32(r.NormFloat64())
	}
	Normalize(v)
	return v
}

// bruteForce scores every row with the same kernel and sorts: the
// reference for search, which must return exactly its hits and scores.
func bruteForce(x *Flat, q []float32, k int) []Hit {
	all := make([]Hit, x.Len())
	for i := range all {
		all[i] = Hit{Row: i, Score: vecmath.Dot(x.Vecs[i*x.Dim:(i+1)*x.Dim], q)}
	}
	slices.SortStableFunc(all, CompareHits)
	return all[:min(k, len(all))]
}

func TestSearchMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// 2100 rows of 128 values are enough to take the parallel path.
	for _, n := range []int{0, 1, 5, 100, 2100} {
		for _, dim := range []int{3, 128} {
			x := randomFlatIndex(r, n, dim)
			for _, k := range []int{1, 10, n + 5} {
				for _, par := range []int{1, 4} {
					queries := [][]float32{randomUnit(r, dim), randomUnit(r, dim), randomUnit(r, dim)}
					if n > 3 {
						queries = append(queries, slices.Clone(x.Vecs[3*dim:4*dim])) // an exact match and its ties
					}
					got, _ := x.Search(queries, k, par)
					if len(got) != len(queries) {
						t.Fatalf("n=%d: %d result lists for %d queries", n, len(got), len(queries))
					}
					for qi, q := range queries {
						want := bruteForce(x, q, k)
						if n == 0 {
							want = nil
						}
						if !slices.Equal(got[qi], want) {
							t.Fatalf("n=%d dim=%d k=%d par=%d query %d:\n got %v\nwant %v", n, dim, k, par, qi, got[qi], want)
						}
						// One query alone gives the same as in a batch.
						if single, _ := x.Search([][]float32{q}, k, par); !slices.Equal(single[0], got[qi]) {
							t.Fatalf("n=%d dim=%d: single-query search differs from the batched one", n, dim)
						}
					}
				}
			}
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, tt := range []struct {
		in []float32
		ok bool
	}{
		{nil, false},
		{[]float32{0, 0, 0}, false},
		{[]float32{float32(math.NaN()), 1}, false},
		{[]float32{float32(math.Inf(1)), 1}, false},
		{[]float32{3, 4}, true},
		{[]float32{1e-30, 1e-30}, true},
	} {
		v := slices.Clone(tt.in)
		if ok := Normalize(v); ok != tt.ok {
			t.Errorf("Normalize(%v) = %v, want %v", tt.in, ok, tt.ok)
			continue
		}
		if tt.ok {
			if n := math.Sqrt(float64(vecmath.Dot(v, v))); math.Abs(n-1) > 1e-6 {
				t.Errorf("Normalize(%v) has length %v", tt.in, n)
			}
		}
	}
}

func TestTopKKeepsBest(t *testing.T) {
	h := newHeaps(1, 3)[0]
	for i, s := range []float32{0.1, 0.9, 0.5, 0.5, 0.7, 0.2, 0.9} {
		h.offer(Hit{Row: i, Score: s})
	}
	want := []Hit{{1, 0.9}, {6, 0.9}, {4, 0.7}}
	if got := h.sorted(); !slices.Equal(got, want) {
		t.Fatalf("top 3 = %v, want %v", got, want)
	}
}
