package membench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/providers/fake"
)

// measureEngine fills a FileStore with cfg.Memories memory files, warms the
// embedding cache, then measures the cold start, the rebuild after one new
// memory, and the retrieval latency.
func measureEngine(ctx context.Context, cfg Config, dir string, r *Report) error {
	repo, user := filepath.Join(dir, "repo", ".forge", "memory"), filepath.Join(dir, "home", ".forge", "memory")
	store, err := memcore.NewFileStore(repo, user, memcore.FileStoreConfig{})
	if err != nil {
		return err
	}
	if _, err := writeCorpus(store, cfg.Memories); err != nil {
		return err
	}
	emb, err := fake.NewEmbedder(fake.EmbedderConfig{Dimension: cfg.Dim})
	if err != nil {
		return err
	}
	engineCfg := memretrieve.DefaultConfig()
	// Warm the cache: a first engine embeds every memory and writes the
	// vectors to the .cache folders.
	warm, err := memretrieve.NewEngine(store, emb, nil, identity(engineCfg))
	if err != nil {
		return err
	}
	if err := warm.Rebuild(ctx); err != nil {
		return fmt.Errorf("warming the cache: %w", err)
	}

	if err := measureIndexBytes(ctx, repo, user, emb, engineCfg, cfg.Memories, r); err != nil {
		return fmt.Errorf("index memory: %w", err)
	}

	engine, err := measureColdStart(ctx, cfg, repo, user, emb, engineCfg, r)
	if err != nil {
		return err
	}
	if err := measureRebuildOneNew(ctx, cfg, store, emb, engine, r); err != nil {
		return err
	}

	// Retrieval: distinct turns (no per-turn cache hits) with zero-latency
	// fake providers, so the figures are what the engine adds to the two
	// provider calls; each engine measured turn by turn beside the same
	// engine with the lexical index off (see retrieveLatencies).
	idEngine, err := memretrieve.NewEngine(store, emb, nil, identity(engineCfg))
	if err != nil {
		return err
	}
	if err := idEngine.Rebuild(ctx); err != nil {
		return err
	}
	return measureRetrieve(ctx, cfg, store, emb, engine, idEngine, r)
}

// measureColdStart measures what a new process does — a new FileStore
// (nothing parsed yet) and a new engine (nothing in memory) — until the
// index is built and Retrieve can answer, beside the time of just reading
// the files. It returns the last engine built.
func measureColdStart(ctx context.Context, cfg Config, repo, user string, emb *fake.Embedder, engineCfg memretrieve.Config, r *Report) (*memretrieve.Engine, error) {
	var cold, floor []float64
	var engine *memretrieve.Engine
	for range cfg.Trials {
		before := emb.Inputs()
		d, err := timed(func() error {
			s, err := memcore.NewFileStore(repo, user, memcore.FileStoreConfig{})
			if err != nil {
				return err
			}
			llm, err := scriptedHypotheses()
			if err != nil {
				return err
			}
			engine, err = memretrieve.NewEngine(s, emb, llm, engineCfg)
			if err != nil {
				return err
			}
			return engine.Rebuild(ctx)
		})
		if err != nil {
			return nil, fmt.Errorf("cold start: %w", err)
		}
		cold = append(cold, d)
		r.ColdStartEmbedInputs = max(r.ColdStartEmbedInputs, emb.Inputs()-before)
		f, err := timed(func() error { return readFloor(repo, user) })
		if err != nil {
			return nil, err
		}
		floor = append(floor, f)
	}
	r.ColdStartMs, r.ColdStartReadFloorMs = median(cold)/1e6, median(floor)/1e6
	r.ColdStartRatioVsReadFloor = r.ColdStartMs / r.ColdStartReadFloorMs
	return engine, nil
}

// measureRebuildOneNew writes one new memory, then rebuilds the running
// engine, cfg.Trials times.
func measureRebuildOneNew(ctx context.Context, cfg Config, store memcore.MemoryStore, emb *fake.Embedder, engine *memretrieve.Engine, r *Report) error {
	var rebuilds []float64
	rng := newRand(99)
	for i := range cfg.Trials {
		m := memory(rng, cfg.Memories+i, nil)
		if err := store.Write(ctx, m); err != nil {
			return err
		}
		before := emb.Inputs()
		d, err := timed(func() error { return engine.Rebuild(ctx) })
		if err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		rebuilds = append(rebuilds, d)
		r.RebuildOneNewEmbedInputs = max(r.RebuildOneNewEmbedInputs, emb.Inputs()-before)
	}
	r.RebuildOneNewMs = median(rebuilds) / 1e6
	return nil
}

func identity(c memretrieve.Config) memretrieve.Config {
	c.Mode = memretrieve.ModeIdentity
	return c
}

// scriptedHypotheses returns a zero-latency hypothesis model: it answers every
// request with five hypotheses made from the last message of the window.
func scriptedHypotheses() (*fake.LLM, error) {
	return fake.NewLLM(fake.LLMConfig{ReplyFunc: func(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		last := ""
		if n := len(req.Messages); n > 0 {
			last = req.Messages[n-1].Content
		}
		f := strings.Fields(last)
		hyps := make([]string, 5)
		for i := range hyps {
			lo := min(i*4, len(f))
			hyps[i] = "The user " + strings.Join(f[lo:min(lo+12, len(f))], " ") + "."
		}
		text, err := json.Marshal(map[string][]string{"hypotheses": hyps})
		return &memcore.CompletionResponse{Text: string(text)}, err
	}})
}

// latency is the 50th and 99th percentile of a series of Retrieve calls,
// in milliseconds.
type latency struct{ p50, p99 float64 }

// retrieveLatencies runs n turns on each engine and returns, per engine,
// the percentiles of Retrieve's latency. The engines take every turn one
// after the other, on the same window, the one going first rotating from
// turn to turn, so that what the machine does meanwhile (another process,
// the collector) falls on all of them alike and their figures compare.
// Every turn must rank something (the relevance gate may still let nothing
// of these random conversations in).
func retrieveLatencies(ctx context.Context, n int, label string, engines ...*memretrieve.Engine) ([]latency, error) {
	lat := make([][]float64, len(engines))
	for i := range n {
		window := conversation(8, uint64(i))
		for j := range engines {
			k := (i + j) % len(engines)
			var res *memretrieve.Result
			d, err := timed(func() (err error) {
				res, err = engines[k].Retrieve(ctx, fmt.Sprintf("%s-%d-turn-%d", label, k, i), window)
				return err
			})
			if err != nil {
				return nil, err
			}
			if len(res.Ranked) == 0 {
				return nil, fmt.Errorf("retrieve (%s, engine %d): turn %d ranked nothing; the measurement would not be of a real retrieval", label, k, i)
			}
			lat[k] = append(lat[k], d/1e6)
		}
	}
	out := make([]latency, len(engines))
	for k, l := range lat {
		slices.Sort(l)
		out[k] = latency{p50: percentile(l, 50), p99: percentile(l, 99)}
	}
	return out, nil
}

// readFloor reads every memory file of the folders, one after another: the
// least any start-up from these files must do.
func readFloor(dirs ...string) error {
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			if _, err := os.ReadFile(filepath.Join(d, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// IndexBytes is the memory the index takes per memory, measured as the
// live heap an engine holds after a build over the FileStore, less the
// live heap of the same store's memories and graph alone (which the engine
// holds too): the vectors, their ids, the lexical index and the embedding
// cache's entries.
type IndexBytes struct {
	Float32   float64 `json:"float32"`
	Quantized float64 `json:"quantized"`
	// Ratio is Quantized over Float32.
	Ratio float64 `json:"ratio"`
	// Lexical is the share of either that is the lexical index: Float32
	// less the same engine's with the lexical index off.
	Lexical float64 `json:"lexical"`
	// VectorRatio is Ratio without the lexical index: what quantising
	// does to the vector index.
	VectorRatio float64 `json:"vector_ratio"`
	// Float32Vector is 4 × the dimension: the float32 vector alone.
	Float32Vector int `json:"float32_vector"`
}

// measureIndexBytes fills r.IndexBytesPerMemory: engines over a new
// FileStore of the folders, whose cache is warm, exact and quantised.
func measureIndexBytes(ctx context.Context, repo, user string, emb memcore.Embedder, engineCfg memretrieve.Config, memories int, r *Report) error {
	liveHeap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	// The memories and their graph, as the engine's build holds them.
	base := liveHeap()
	s, err := memcore.NewFileStore(repo, user, memcore.FileStoreConfig{})
	if err != nil {
		return err
	}
	mems, err := s.List(ctx)
	if err != nil {
		return err
	}
	g := memcore.NewGraph(memcore.NewGraph(mems).Live())
	mems = nil
	graphBytes := float64(liveHeap() - base)
	runtime.KeepAlive(s)
	runtime.KeepAlive(g)
	s, g = nil, nil

	engineBytes := func(quantized, lexical bool) (float64, error) {
		c := identity(engineCfg)
		c.Quantized = quantized
		if !lexical {
			c.LexicalWeight = 0
		}
		base := liveHeap()
		s, err := memcore.NewFileStore(repo, user, memcore.FileStoreConfig{})
		if err != nil {
			return 0, err
		}
		e, err := memretrieve.NewEngine(s, emb, nil, c)
		if err != nil {
			return 0, err
		}
		if err := e.Rebuild(ctx); err != nil {
			return 0, err
		}
		n := float64(liveHeap() - base)
		runtime.KeepAlive(e)
		return n, nil
	}
	f, err := engineBytes(false, true)
	if err != nil {
		return err
	}
	q, err := engineBytes(true, true)
	if err != nil {
		return err
	}
	noLex, err := engineBytes(false, false)
	if err != nil {
		return err
	}
	b := &r.IndexBytesPerMemory
	b.Float32 = (f - graphBytes) / float64(memories)
	b.Quantized = (q - graphBytes) / float64(memories)
	b.Ratio = b.Quantized / b.Float32
	b.Lexical = (f - noLex) / float64(memories)
	b.VectorRatio = (b.Quantized - b.Lexical) / (b.Float32 - b.Lexical)
	b.Float32Vector = 4 * r.Config.Dim
	return nil
}
