package membench

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/forgemem/forgemem/memretrieve/experimental/search"
	chromem "github.com/philippgille/chromem-go"
)

// SearchResult is the comparison at one number of documents. Times are
// medians over the queries, in nanoseconds per query.
type SearchResult struct {
	Docs    int `json:"docs"`
	Queries int `json:"queries"`

	OursNs       float64 `json:"ours_ns"`
	OursSerialNs float64 `json:"ours_one_goroutine_ns"`
	QuantizedNs  float64 `json:"ours_quantized_ns"`
	ChromemNs    float64 `json:"chromem_ns"`
	// StreamFloorNs is the memory-bandwidth floor: the same block read
	// once by every core (streamFloor).
	StreamFloorNs float64 `json:"stream_floor_ns"`

	RatioVsChromem float64 `json:"ratio_vs_chromem"`
	// The ratios to the stream floor are medians of the ratios of each
	// query's time to the floor's time measured right beside it, so that
	// the machine's drift affects both alike.
	RatioVsStreamFloor          float64 `json:"ratio_vs_stream_floor"`
	SerialRatioVsStreamFloor    float64 `json:"one_goroutine_ratio_vs_stream_floor"`
	QuantizedRatioVsStreamFloor float64 `json:"quantized_ratio_vs_stream_floor"`

	// TopKMatchesExact: every query's top-k from our index equals the top-k
	// of an exact search in float64 (an exchange of two results whose exact
	// scores differ by less than 1e-6, a tie at float32 precision, counts as
	// equal).
	TopKMatchesExact bool `json:"topk_matches_exact"`
}

// measureSearch builds n random unit vectors of dim dimensions in one
// contiguous block and times, for each of the queries, our index (with all
// goroutines, with one, and quantised), chromem-go's QueryEmbedding over
// the same vectors, and the stream floor: the block read once by every
// core. They are timed in turn on each query, so that drift of the machine
// affects them alike.
func measureSearch(ctx context.Context, n, dim, k, queries int) (*SearchResult, error) {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(dim)))
	block := make([]float32, n*dim)
	ids := make([]string, n)
	rows := make([][]float32, n)
	for i := range n {
		row := block[i*dim : (i+1)*dim : (i+1)*dim]
		randomUnit(rng, row)
		ids[i] = fmt.Sprintf("doc-%d", i)
		rows[i] = row
	}

	ours, err := search.NewIndex(ids, rows, search.IndexConfig{})
	if err != nil {
		return nil, err
	}
	serial, err := search.NewIndex(ids, rows, search.IndexConfig{Parallelism: 1})
	if err != nil {
		return nil, err
	}
	quant, err := search.NewIndex(ids, rows, search.IndexConfig{Quantized: true})
	if err != nil {
		return nil, err
	}
	db, col, err := chromemCollection(ctx, ids, rows)
	if err != nil {
		return nil, err
	}

	q := make([]float32, dim)
	var tOurs, tSerial, tQuant, tChromem, tFloor, rOurs, rSerial, rQuant []float64
	matches := true
	for i := -1; i < queries; i++ { // query -1 warms everything up, untimed
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		randomUnit(rng, q)
		floor := func() float64 {
			d, _ := timed(func() error { streamFloorSink = streamFloor(block); return nil })
			return d
		}
		var got []search.Match
		f1 := floor()
		d, err := timed(func() (err error) { got, err = ours.Search(q, k); return err })
		if err != nil {
			return nil, err
		}
		f2 := floor()
		ds, err := timed(func() error { _, err := serial.Search(q, k); return err })
		if err != nil {
			return nil, err
		}
		dq, err := timed(func() error { _, err := quant.Search(q, k); return err })
		if err != nil {
			return nil, err
		}
		f3 := floor()
		dc, err := timed(func() error { _, err := col.QueryEmbedding(ctx, q, k, nil, nil); return err })
		if err != nil {
			return nil, fmt.Errorf("chromem-go: %w", err)
		}
		if i < 0 {
			continue
		}
		tOurs, tSerial, tQuant, tChromem = append(tOurs, d), append(tSerial, ds), append(tQuant, dq), append(tChromem, dc)
		tFloor = append(tFloor, f1, f2, f3)
		// Each time against the floor measured next to it: before ours,
		// between ours and the serial one, after the quantised one.
		rOurs = append(rOurs, d/((f1+f2)/2))
		rSerial = append(rSerial, ds/((f2+f3)/2))
		rQuant = append(rQuant, dq/((f2+f3)/2))
		matches = matches && sameTopK(got, exactTopK(block, dim, ids, q, k), block, dim, q)
	}
	r := &SearchResult{
		Docs: n, Queries: queries,
		OursNs: median(tOurs), OursSerialNs: median(tSerial), QuantizedNs: median(tQuant), ChromemNs: median(tChromem),
		StreamFloorNs:    median(tFloor),
		TopKMatchesExact: matches,
	}
	r.RatioVsChromem = r.OursNs / r.ChromemNs
	r.RatioVsStreamFloor = median(rOurs)
	r.SerialRatioVsStreamFloor = median(rSerial)
	r.QuantizedRatioVsStreamFloor = median(rQuant)
	runtime.KeepAlive(db)
	return r, nil
}

// chromemCollection returns a chromem-go database holding one collection
// of the vectors rows, named by ids.
func chromemCollection(ctx context.Context, ids []string, rows [][]float32) (*chromem.DB, *chromem.Collection, error) {
	db := chromem.NewDB()
	col, err := db.CreateCollection("membench", nil, func(context.Context, string) ([]float32, error) {
		return nil, fmt.Errorf("membench: documents come with their embeddings")
	})
	if err != nil {
		return nil, nil, err
	}
	docs := make([]chromem.Document, len(ids))
	for i := range docs {
		docs[i] = chromem.Document{ID: ids[i], Embedding: rows[i]}
	}
	if err := col.AddDocuments(ctx, docs, runtime.NumCPU()); err != nil {
		return nil, nil, fmt.Errorf("chromem-go: %w", err)
	}
	return db, col, nil
}

// streamFloorSink keeps the stream floor's reads from being optimised away.
//
//lint:ignore U1000 a sink: written by the measurement so that its reads are kept, and never read on purpose.
var streamFloorSink uint64

// exactTopK ranks every row by its dot product with q computed in float64
// and returns the ids and exact scores of the k best.
func exactTopK(block []float32, dim int, ids []string, q []float32, k int) []search.Match {
	type scored struct {
		i int
		s float64
	}
	all := make([]scored, len(ids))
	for i := range ids {
		all[i] = scored{i, exactDot(block[i*dim:(i+1)*dim], q)}
	}
	slices.SortFunc(all, func(a, b scored) int { return cmp.Or(cmp.Compare(b.s, a.s), cmp.Compare(a.i, b.i)) })
	out := make([]search.Match, min(k, len(all)))
	for i := range out {
		out[i] = search.Match{ID: ids[all[i].i], Score: float32(all[i].s)}
	}
	return out
}

func exactDot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// sameTopK reports whether got lists the ids of want in order, allowing two
// results to trade places only when their exact scores tie at float32
// precision (differ by less than 1e-6).
func sameTopK(got, want []search.Match, block []float32, dim int, q []float32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].ID == want[i].ID {
			continue
		}
		var row int
		if _, err := fmt.Sscanf(got[i].ID, "doc-%d", &row); err != nil {
			return false
		}
		if math.Abs(exactDot(block[row*dim:(row+1)*dim], q)-float64(want[i].Score)) >= 1e-6 {
			return false
		}
	}
	return true
}

// randomUnit fills v with a random direction.
func randomUnit(rng *rand.Rand, v []float32) {
	var sum float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		sum += x * x
	}
	inv := 1 / math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}

// timed runs f and returns how long it took, in nanoseconds.
func timed(f func() error) (float64, error) {
	start := time.Now()
	err := f()
	return float64(time.Since(start).Nanoseconds()), err
}

// median of xs (xs is reordered).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// percentile of xs, sorted, by nearest rank.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
