package fake

import (
	"context"
	"strconv"
	"sync/atomic"

	"github.com/forgemem/forgemem/memcore"
)

// DefaultDimension is the length of an [Embedder]'s vectors unless
// [EmbedderConfig].Dimension says otherwise. Words, word pairs and
// trigrams share these dimensions; at 256 their collisions made unrelated
// texts look alike and cost the forgemem command's offline retrieval
// recall, while past 1024 the gain flattens (docs/EVALUATION.md in the
// repository has the figures). A vector takes 4 KiB as float32.
const DefaultDimension = 1024

// Embedder is a deterministic hashing [memcore.Embedder]: see the package
// documentation for how it turns text into vectors. Make one with
// [NewEmbedder]; it is safe for concurrent use.
//
// Vectors are unit length and depend only on the text and the dimension.
// Empty and whitespace-only texts all get the same unit vector.
type Embedder struct {
	common
	dim      int
	maxBatch int

	calls  atomic.Int64
	inputs atomic.Int64
}

var _ memcore.Embedder = (*Embedder)(nil)

// NewEmbedder returns a hashing embedder configured by cfg.
//
// A field of cfg out of range makes NewEmbedder return no Embedder and a
// *memcore.ConfigError (matching [ErrInvalidConfig]) that names every such
// field.
func NewEmbedder(cfg EmbedderConfig) (*Embedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Embedder{dim: cfg.Dimension, maxBatch: cfg.MaxBatch}
	if e.dim == 0 {
		e.dim = DefaultDimension
	}
	e.latency = cfg.Latency
	e.scheduleFailures(cfg.FailNext, cfg.FailWith)
	return e, nil
}

// Embed implements [memcore.Embedder]. Zero texts give zero vectors and make
// no call; otherwise the texts are embedded in internal calls of at most the
// maximum batch size, each of which waits for the configured latency and
// may fail as scheduled. A failed call fails the whole Embed.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	batch := e.maxBatch
	if batch == 0 {
		batch = len(texts)
	}
	out := make([][]float32, len(texts))
	// One allocation for all vectors; each gets a capacity-limited window so
	// that appending to one cannot overwrite the next.
	backing := make([]float32, len(texts)*e.dim)
	for start := 0; start < len(texts); start += batch {
		end := min(start+batch, len(texts))
		e.calls.Add(1)
		e.inputs.Add(int64(end - start))
		if err := e.wait(ctx); err != nil {
			return nil, err
		}
		if err := e.nextFailure(); err != nil {
			return nil, failureError("embed", err)
		}
		for i := start; i < end; i++ {
			v := backing[i*e.dim : (i+1)*e.dim : (i+1)*e.dim]
			embedText(v, texts[i])
			out[i] = v
		}
	}
	return out, nil
}

// Model implements [memcore.Embedder]: "fake-hash-v2-" followed by the
// dimension, so that vectors of different dimensions are never mixed up.
// v2 damps a common word's trigrams as much as the word; the vectors of
// the first version, "fake-hash-" and the dimension, are never mixed with
// these either.
func (e *Embedder) Model() string { return "fake-hash-v2-" + strconv.Itoa(e.dim) }

// Dimension returns the length of the vectors.
func (e *Embedder) Dimension() int { return e.dim }

// MaxBatch returns the most texts one internal call embeds; 0 means no
// limit.
func (e *Embedder) MaxBatch() int { return e.maxBatch }

// FailNext makes the next n internal calls fail with err, after any
// failures already scheduled; n 0 schedules nothing. See [LLM.FailNext]
// for how err is reported.
//
// A negative n or a nil err schedules nothing and returns a
// *memcore.ConfigError (matching [ErrInvalidConfig]); otherwise FailNext
// returns nil.
func (e *Embedder) FailNext(n int, err error) error {
	return e.failNext("Embedder.FailNext", n, err)
}

// Calls returns the number of internal calls made so far, failed ones
// included. An Embed of more texts than the maximum batch makes several.
func (e *Embedder) Calls() int { return int(e.calls.Load()) }

// Inputs returns the number of texts sent in the internal calls so far.
func (e *Embedder) Inputs() int { return int(e.inputs.Load()) }
