package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomUnit returns a random vector of dim values, scaled to unit length.
func randomUnit(r *rand.Rand, dim int) []float32 {
	v := randomVector(r, dim)
	normalizeTest(v)
	return v
}

// normalizeTest scales v to unit length.
func normalizeTest(v []float32) {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
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
		normalizeTest(v)
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
				exact, err := NewIndex(ids, vecs, IndexConfig{Parallelism: par})
				if err != nil {
					t.Fatal(err)
				}
				quant, err := NewIndex(ids, vecs, IndexConfig{Parallelism: par, Quantized: true})
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
