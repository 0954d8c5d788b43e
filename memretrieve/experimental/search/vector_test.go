package search

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// TestIndexMatchesExactSearch: the exported Index returns exactly the k best
// vectors by cosine similarity, best first, with one goroutine and with
// several, for single and batched queries.
func TestIndexMatchesExactSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, dim = 3000, 96 // above parallelMinFloats, so searches split
	ids := make([]string, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		ids[i] = fmt.Sprintf("v%d", i)
		vecs[i] = randomVector(r, dim)
	}
	queries := [][]float32{randomVector(r, dim), randomVector(r, dim), vecs[17]}
	for _, par := range []int{1, 4} {
		ix, err := NewIndex(ids, vecs, IndexConfig{Parallelism: par})
		if err != nil {
			t.Fatal(err)
		}
		if ix.Len() != n || ix.Dim() != dim {
			t.Errorf("Len, Dim = %d, %d; want %d, %d", ix.Len(), ix.Dim(), n, dim)
		}
		batch, err := ix.SearchBatch(queries, 10)
		if err != nil {
			t.Fatal(err)
		}
		for qi, q := range queries {
			want := exactTop(ids, vecs, q, 10)
			one, err := ix.Search(q, 10)
			if err != nil {
				t.Fatal(err)
			}
			if got := matchIDs(one); !slices.Equal(got, want) {
				t.Errorf("parallelism %d, query %d: Search = %v, exact = %v", par, qi, got, want)
			}
			if got := matchIDs(batch[qi]); !slices.Equal(got, want) {
				t.Errorf("parallelism %d, query %d: SearchBatch = %v, exact = %v", par, qi, got, want)
			}
		}
		if best, _ := ix.Search(vecs[17], 1); len(best) != 1 || best[0].ID != "v17" || best[0].Score < 0.9999 {
			t.Errorf("a stored vector's best match is itself with score 1; got %+v", best)
		}
	}
}

func TestIndexErrors(t *testing.T) {
	if _, err := NewIndex([]string{"a"}, [][]float32{{1, 0}, {0, 1}}, IndexConfig{}); err == nil {
		t.Errorf("NewIndex with 1 id for 2 vectors succeeded")
	}
	if _, err := NewIndex([]string{"a", "b"}, [][]float32{{1, 0}, {0, 1, 0}}, IndexConfig{}); !errors.Is(err, ErrDimension) {
		t.Errorf("NewIndex with vectors of two lengths = %v, want ErrDimension", err)
	}
	if _, err := NewIndex([]string{"a"}, [][]float32{{0, 0}}, IndexConfig{}); err == nil {
		t.Errorf("NewIndex with a zero vector succeeded")
	}
	ix, err := NewIndex([]string{"a", "b"}, [][]float32{{1, 0}, {0, 2}}, IndexConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Search([]float32{1, 0, 0}, 1); !errors.Is(err, ErrDimension) {
		t.Errorf("Search with a query of the wrong length = %v, want ErrDimension", err)
	}
	if _, err := ix.Search([]float32{0, 0}, 1); err == nil {
		t.Errorf("Search with a zero query succeeded")
	}
	if _, err := NewIndex(nil, nil, IndexConfig{Parallelism: -1}); !errors.Is(err, memcore.ErrInvalidConfig) {
		t.Errorf("NewIndex with Parallelism -1 = %v, want memcore.ErrInvalidConfig", err)
	}
	got, err := ix.Search([]float32{0, 5}, 5)
	if err != nil || len(got) != 2 || got[0].ID != "b" || got[0].Score < 0.9999 {
		t.Errorf("Search with k above Len = %+v, %v; want both vectors, b first with score 1 (vectors and queries are normalised)", got, err)
	}
}

func randomVector(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// exactTop ranks every vector by cosine similarity with q, computed in
// float64, and returns the ids of the k best.
func exactTop(ids []string, vecs [][]float32, q []float32, k int) []string {
	type scored struct {
		i int
		s float64
	}
	norm := func(v []float32) float64 {
		var s float64
		for _, f := range v {
			s += float64(f) * float64(f)
		}
		return s
	}
	all := make([]scored, len(vecs))
	for i, v := range vecs {
		var d float64
		for j := range v {
			d += float64(v[j]) * float64(q[j])
		}
		all[i] = scored{i, d / (math.Sqrt(norm(v)) * math.Sqrt(norm(q)))}
	}
	slices.SortFunc(all, func(a, b scored) int { return cmp.Compare(b.s, a.s) })
	out := make([]string, k)
	for i := range out {
		out[i] = ids[all[i].i]
	}
	return out
}

func matchIDs(ms []Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}
