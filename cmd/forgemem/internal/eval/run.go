package eval

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
)

// DefaultKs are the cut-offs of recall@k and hit@k unless Options.Ks says
// otherwise.
var DefaultKs = []int{5, 10, 20}

// Options configure [Run].
type Options struct {
	// Embedder embeds the memories and the queries. Required.
	Embedder memcore.Embedder
	// LLM writes the hypotheses in memretrieve.ModeLLM; unused, and may be
	// nil, in ModeIdentity.
	LLM memcore.LLMProvider
	// Config is the retrieval configuration, used as given: start from
	// memretrieve.DefaultConfig (or settings' RetrieveConfig).
	Config memretrieve.Config
	// Ks are the cut-offs of recall@k and hit@k, each at least 1; nil means
	// DefaultKs.
	Ks []int
	// Dir is where the temporary memory folders are made; "" means the
	// system's temporary folder. Each collection's folder is removed when
	// it is done.
	Dir string
	// Progress, if not nil, is called with the number of queries done and
	// the total, after each query, from the goroutine that called Run.
	Progress func(done, total int)
}

// Report is what [Run] measured: the mean scores over every query of
// every collection, the latency of Retrieve, and how many texts were
// embedded.
type Report struct {
	Collections int
	Memories    int
	Queries     int
	Ks          []int
	// Scores are the means over all queries.
	Scores Scores
	// P50Ms and P95Ms are percentiles of one Retrieve call's latency, in
	// milliseconds.
	P50Ms, P95Ms float64
	// TextsEmbedded counts the texts sent to the embedder, memories and
	// queries; QueryTextsEmbedded those of the queries alone.
	TextsEmbedded, QueryTextsEmbedded int
	// VectorSkipped counts the queries answered without the vector ranking
	// (see memretrieve.Result.VectorSkipped), for instance because the
	// embedder did not answer in time.
	VectorSkipped int
	// Candidates is the mean length of the rankings.
	Candidates float64
	// PerCollection holds each collection's own figures, in dataset order.
	PerCollection []CollectionReport
	// PerQuery holds each query's figures and ranking, in dataset order:
	// for looking into what a ranking missed, and for the spread of the
	// means.
	PerQuery []QueryReport
}

// QueryReport holds the figures of one query.
type QueryReport struct {
	Collection, ID string
	Scores         Scores
	// Ranking lists the dataset ids of the memories ranked, best first.
	Ranking []string
}

// CollectionReport holds the figures of one collection.
type CollectionReport struct {
	Name     string
	Memories int
	Queries  int
	Scores   Scores
}

// Run evaluates retrieval on every collection: it writes the collection's
// memories into a fresh memcore.FileStore in a temporary folder, builds a
// memretrieve.Engine over it (NewEngine, then Rebuild), and asks Retrieve
// for each query's ranking (memretrieve.Result.Ranked), which it scores
// against the query's relevant memories. Each query is a turn of its own.
//
// Errors: bad options, an invalid collection (wrapping ErrDataset), a
// store or engine that cannot be made, a build that could not embed every
// memory, and ctx's error.
func Run(ctx context.Context, collections []Collection, o Options) (*Report, error) {
	if o.Embedder == nil {
		return nil, errors.New("eval: no embedder")
	}
	if o.Config.Mode == memretrieve.ModeLLM && o.LLM == nil {
		return nil, errors.New("eval: ModeLLM needs a hypothesis model (LLM), or ModeIdentity")
	}
	ks := o.Ks
	if ks == nil {
		ks = DefaultKs
	}
	ks = slices.Sorted(slices.Values(ks))
	ks = slices.Compact(ks)
	if len(ks) == 0 || ks[0] < 1 {
		return nil, fmt.Errorf("eval: the cut-offs k must be at least 1, got %v", o.Ks)
	}
	total := 0
	for i := range collections {
		if err := collections[i].Validate(); err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		total += len(collections[i].Queries)
	}
	emb := &countingEmbedder{Embedder: o.Embedder}
	r := &Report{Collections: len(collections), Ks: ks}
	var all []Scores
	var latencies []float64
	var candidates int
	done := 0
	for _, c := range collections {
		cr, scores, lat, err := runCollection(ctx, c, o, emb, ks, r, &candidates, func() {
			done++
			if o.Progress != nil {
				o.Progress(done, total)
			}
		})
		if err != nil {
			return nil, err
		}
		r.PerCollection = append(r.PerCollection, cr)
		all = append(all, scores...)
		latencies = append(latencies, lat...)
	}
	r.Queries = len(all)
	r.Scores = meanScores(all, ks)
	r.P50Ms, r.P95Ms = latencyPercentiles(latencies)
	r.TextsEmbedded = int(emb.texts.Load())
	if r.Queries > 0 {
		r.Candidates = float64(candidates) / float64(r.Queries)
	}
	return r, nil
}

// runCollection evaluates one collection and returns its report, the
// scores of its queries and the latency of each, in milliseconds.
func runCollection(ctx context.Context, c Collection, o Options, emb *countingEmbedder, ks []int,
	r *Report, candidates *int, queryDone func()) (CollectionReport, []Scores, []float64, error) {
	cr := CollectionReport{Name: c.Name, Memories: len(c.Memories), Queries: len(c.Queries)}
	dir, err := os.MkdirTemp(o.Dir, "forgemem-eval-")
	if err != nil {
		return cr, nil, nil, fmt.Errorf("eval: %w", err)
	}
	defer os.RemoveAll(dir)
	store, err := memcore.NewFileStore(filepath.Join(dir, "repo"), filepath.Join(dir, "user"), memcore.FileStoreConfig{})
	if err != nil {
		return cr, nil, nil, fmt.Errorf("eval: collection %q: %w", c.Name, err)
	}
	toDataset := make(map[string]string, len(c.Memories))
	for i, m := range c.Memories {
		mf := memoryFile(c.Name, i, m)
		if err := store.Write(ctx, mf); err != nil {
			return cr, nil, nil, fmt.Errorf("eval: collection %q: memory %q: %w", c.Name, m.ID, err)
		}
		toDataset[mf.Meta.ID] = m.ID
	}
	engine, err := memretrieve.NewEngine(store, emb, o.LLM, o.Config)
	if err != nil {
		return cr, nil, nil, fmt.Errorf("eval: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = engine.Close(cctx)
	}()
	if err := engine.Rebuild(ctx); err != nil {
		return cr, nil, nil, fmt.Errorf("eval: collection %q: building the index: %w", c.Name, err)
	}
	r.Memories += len(c.Memories)

	scores := make([]Scores, 0, len(c.Queries))
	lat := make([]float64, 0, len(c.Queries))
	for _, q := range c.Queries {
		before := emb.texts.Load()
		start := time.Now()
		res, err := engine.Retrieve(ctx, c.Name+"/"+q.ID, q.Window())
		elapsed := time.Since(start)
		if err != nil {
			return cr, nil, nil, fmt.Errorf("eval: collection %q: query %q: %w", c.Name, q.ID, err)
		}
		r.QueryTextsEmbedded += int(emb.texts.Load() - before)
		if res.VectorSkipped != memretrieve.SkipNone {
			r.VectorSkipped++
		}
		ranking := make([]string, len(res.Ranked))
		for i, cand := range res.Ranked {
			ranking[i] = toDataset[cand.ID]
		}
		*candidates += len(ranking)
		qs := Score(ranking, q.Relevant, ks)
		scores = append(scores, qs)
		r.PerQuery = append(r.PerQuery, QueryReport{Collection: c.Name, ID: q.ID, Scores: qs, Ranking: ranking})
		lat = append(lat, float64(elapsed)/float64(time.Millisecond))
		queryDone()
	}
	cr.Scores = meanScores(scores, ks)
	return cr, scores, lat, nil
}

// baseTime is the creation time of the first memory of a collection; the
// others follow a minute apart, in dataset order.
var baseTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// memoryFile returns the memory file of the i-th memory of collection name.
// Its id is derived from the collection's name and the memory's dataset id,
// so that runs are repeatable (the engine breaks ties by id).
func memoryFile(name string, i int, m Memory) *memcore.MemoryFile {
	cat, scope := m.Category, m.Scope
	if cat == "" {
		cat = DefaultCategory
	}
	if scope == "" {
		scope = DefaultScope
	}
	t := baseTime.Add(time.Duration(i) * time.Minute)
	return &memcore.MemoryFile{
		Meta: memcore.MemoryMeta{
			ID:        memoryID(name, m.ID),
			CreatedAt: t,
			UpdatedAt: t,
			Version:   1,
			Scope:     scope,
			Category:  cat,
			Trigger:   memcore.TriggerManual,
		},
		Content: m.Content,
	}
}

// memoryID returns a memory id (a version 4 UUID in form) made from the
// SHA-256 of the collection's name and the dataset id.
func memoryID(collection, id string) string {
	h := sha256.Sum256([]byte(collection + "\x00" + id))
	h[6] = (h[6] & 0x0f) | 0x40
	h[8] = (h[8] & 0x3f) | 0x80
	return fmt.Sprintf("mem_%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	memcore.Embedder
	texts atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}
