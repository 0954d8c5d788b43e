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

// Report is what [Run] measured: the mean scores of the rankings over the
// on-topic queries of every collection, what was injected on topic and off
// topic, the latency of Retrieve, and how many texts were embedded.
type Report struct {
	Collections int
	Memories    int
	// Queries counts every query, on topic and off topic.
	Queries int
	Ks      []int
	// Scores are the means over the on-topic queries (those with relevant
	// memories) of the scores of their rankings.
	Scores Scores
	// OnTopic and OffTopic describe the injections, the block an agent
	// gets, of the on-topic and the off-topic queries.
	OnTopic, OffTopic Injection
	// AddedOffTopic describes those of the off-topic queries AddOffTopic
	// added (--offtopic) alone, without the collections' own; its Queries
	// is 0 when none was added.
	AddedOffTopic Injection
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

// Injection sums up what the injections of a set of queries held: the
// block of memories an agent gets, with the settings in force.
type Injection struct {
	// Queries counts the queries.
	Queries int
	// InjectedRate is the share of the queries whose injection is not
	// empty: off topic, the share that got memories they should not have.
	InjectedRate float64
	// RelevantInInjection is the share of the queries whose injection holds
	// at least one of their relevant memories (0 off topic).
	RelevantInInjection float64
	// MemoriesMean and TokensMean are the mean number of memories in the
	// injection and its mean length in memcore.EstimateTokens tokens, an
	// empty injection counting 0.
	MemoriesMean, TokensMean float64
}

// QueryReport holds the figures of one query.
type QueryReport struct {
	Collection, ID string
	// OffTopic is set for a query without relevant memories; its Scores
	// are zero.
	OffTopic bool
	// Added is set for a query AddOffTopic added (Query.Added).
	Added  bool
	Scores Scores
	// Ranking lists the dataset ids of the memories ranked, best first.
	Ranking []string
	// Injected lists the dataset ids of the memories of the injection, in
	// its order; InjectedTokens is the injection's length in
	// memcore.EstimateTokens tokens (0 when it is empty).
	Injected       []string
	InjectedTokens int
	// RelevantInjected is set when the injection holds a relevant memory.
	RelevantInjected bool
}

// CollectionReport holds the figures of one collection.
type CollectionReport struct {
	Name     string
	Memories int
	// Queries counts every query; Scores are the means over the on-topic
	// ones.
	Queries           int
	Scores            Scores
	OnTopic, OffTopic Injection
}

// Run evaluates retrieval on every collection: it writes the collection's
// memories into a fresh memcore.FileStore in a temporary folder, builds a
// memretrieve.Engine over it (NewEngine, then Rebuild), and asks Retrieve
// for each query's ranking (memretrieve.Result.Ranked), which it scores
// against the query's relevant memories, and its injection
// (memretrieve.Result.Memories and Injection), which it sums up on topic
// and off topic. Each query is a turn of its own.
//
// Errors: bad options, an invalid collection (wrapping ErrDataset), a
// store or engine that cannot be made, a build that could not embed every
// memory, and ctx's error.
func Run(ctx context.Context, collections []Collection, o Options) (*Report, error) {
	if o.Embedder == nil {
		return nil, errors.New("no embedder")
	}
	if o.Config.Mode == memretrieve.ModeLLM && o.LLM == nil {
		return nil, errors.New("ModeLLM needs a hypothesis model (LLM), or ModeIdentity")
	}
	ks := o.Ks
	if ks == nil {
		ks = DefaultKs
	}
	ks = slices.Sorted(slices.Values(ks))
	ks = slices.Compact(ks)
	if len(ks) == 0 || ks[0] < 1 {
		return nil, fmt.Errorf("the cut-offs k must be at least 1, got %v", o.Ks)
	}
	total := 0
	for i := range collections {
		if err := collections[i].Validate(); err != nil {
			return nil, fmt.Errorf("%w", err)
		}
		total += len(collections[i].Queries)
	}
	emb := &countingEmbedder{Embedder: o.Embedder}
	r := &Report{Collections: len(collections), Ks: ks}
	var latencies []float64
	var candidates int
	done := 0
	for _, c := range collections {
		first := len(r.PerQuery)
		cr, lat, err := runCollection(ctx, c, o, emb, r, &candidates, func() {
			done++
			if o.Progress != nil {
				o.Progress(done, total)
			}
		})
		if err != nil {
			return nil, err
		}
		cr.Scores, cr.OnTopic, cr.OffTopic = summarise(r.PerQuery[first:], ks)
		r.PerCollection = append(r.PerCollection, cr)
		latencies = append(latencies, lat...)
	}
	r.Queries = len(r.PerQuery)
	r.Scores, r.OnTopic, r.OffTopic = summarise(r.PerQuery, ks)
	r.AddedOffTopic = tally(r.PerQuery, func(q QueryReport) bool { return q.Added })
	r.P50Ms, r.P95Ms = latencyPercentiles(latencies)
	r.TextsEmbedded = int(emb.texts.Load())
	if r.Queries > 0 {
		r.Candidates = float64(candidates) / float64(r.Queries)
	}
	return r, nil
}

// summarise returns the mean scores of the on-topic queries of qs and what
// the injections of the on-topic and the off-topic ones held.
func summarise(qs []QueryReport, ks []int) (Scores, Injection, Injection) {
	var scores []Scores
	for _, q := range qs {
		if !q.OffTopic {
			scores = append(scores, q.Scores)
		}
	}
	on := tally(qs, func(q QueryReport) bool { return !q.OffTopic })
	off := tally(qs, func(q QueryReport) bool { return q.OffTopic })
	return meanScores(scores, ks), on, off
}

// tally returns what the injections of the queries of qs that keep
// accepts held.
func tally(qs []QueryReport, keep func(QueryReport) bool) Injection {
	var inj Injection
	for _, q := range qs {
		if !keep(q) {
			continue
		}
		inj.Queries++
		if len(q.Injected) > 0 {
			inj.InjectedRate++
		}
		if q.RelevantInjected {
			inj.RelevantInInjection++
		}
		inj.MemoriesMean += float64(len(q.Injected))
		inj.TokensMean += float64(q.InjectedTokens)
	}
	if n := float64(inj.Queries); n > 0 {
		inj.InjectedRate /= n
		inj.RelevantInInjection /= n
		inj.MemoriesMean /= n
		inj.TokensMean /= n
	}
	return inj
}

// runCollection evaluates one collection: it adds the report of each of
// its queries to r.PerQuery and returns the collection's report (without
// its figures, which the caller sums up) and the latency of each query, in
// milliseconds.
func runCollection(ctx context.Context, c Collection, o Options, emb *countingEmbedder,
	r *Report, candidates *int, queryDone func()) (CollectionReport, []float64, error) {
	cr := CollectionReport{Name: c.Name, Memories: len(c.Memories), Queries: len(c.Queries)}
	dir, err := os.MkdirTemp(o.Dir, "forgemem-eval-")
	if err != nil {
		return cr, nil, fmt.Errorf("%w", err)
	}
	defer os.RemoveAll(dir)
	engine, toDataset, err := indexCollection(ctx, dir, c, o, emb)
	if err != nil {
		return cr, nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = engine.Close(cctx)
	}()
	r.Memories += len(c.Memories)

	lat := make([]float64, 0, len(c.Queries))
	for _, q := range c.Queries {
		before := emb.texts.Load()
		start := time.Now()
		res, err := engine.Retrieve(ctx, c.Name+"/"+q.ID, q.Window())
		elapsed := time.Since(start)
		if err != nil {
			return cr, nil, fmt.Errorf("collection %q: query %q: %w", c.Name, q.ID, err)
		}
		r.QueryTextsEmbedded += int(emb.texts.Load() - before)
		if res.VectorSkipped != memretrieve.SkipNone {
			r.VectorSkipped++
		}
		qr := queryReport(c.Name, q, res, toDataset, r.Ks)
		*candidates += len(qr.Ranking)
		r.PerQuery = append(r.PerQuery, qr)
		lat = append(lat, float64(elapsed)/float64(time.Millisecond))
		queryDone()
	}
	return cr, lat, nil
}

// indexCollection writes the memories of c into a fresh memcore.FileStore
// in dir and returns an engine over it with its index built, and the
// dataset id of each memory id.
func indexCollection(ctx context.Context, dir string, c Collection, o Options, emb memcore.Embedder) (*memretrieve.Engine, map[string]string, error) {
	store, err := memcore.NewFileStore(filepath.Join(dir, "repo"), filepath.Join(dir, "user"), memcore.FileStoreConfig{})
	if err != nil {
		return nil, nil, fmt.Errorf("collection %q: %w", c.Name, err)
	}
	toDataset := make(map[string]string, len(c.Memories))
	for i, m := range c.Memories {
		mf := memoryFile(c.Name, i, m)
		if err := store.Write(ctx, mf); err != nil {
			return nil, nil, fmt.Errorf("collection %q: memory %q: %w", c.Name, m.ID, err)
		}
		toDataset[mf.Meta.ID] = m.ID
	}
	engine, err := memretrieve.NewEngine(store, emb, o.LLM, o.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("%w", err)
	}
	if err := engine.Rebuild(ctx); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = engine.Close(cctx)
		return nil, nil, fmt.Errorf("collection %q: building the index: %w", c.Name, err)
	}
	return engine, toDataset, nil
}

// queryReport scores the result of query q of the collection named
// collection: its ranking, and what its injection holds.
func queryReport(collection string, q Query, res *memretrieve.Result, toDataset map[string]string, ks []int) QueryReport {
	qr := QueryReport{Collection: collection, ID: q.ID, OffTopic: q.OffTopic(), Added: q.Added, Ranking: make([]string, len(res.Ranked)),
		Injected: make([]string, len(res.Memories))}
	for i, cand := range res.Ranked {
		qr.Ranking[i] = toDataset[cand.ID]
	}
	relevant := make(map[string]bool, len(q.Relevant))
	for _, id := range q.Relevant {
		relevant[id] = true
	}
	for i, m := range res.Memories {
		qr.Injected[i] = toDataset[m.Memory.Meta.ID]
		qr.RelevantInjected = qr.RelevantInjected || relevant[qr.Injected[i]]
	}
	if res.Injection != "" {
		qr.InjectedTokens = memcore.EstimateTokens(res.Injection)
	}
	if !qr.OffTopic {
		qr.Scores = Score(qr.Ranking, q.Relevant, ks)
	}
	return qr
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
