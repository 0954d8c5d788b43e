package memretrieve

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// compute runs the retrieval of one turn within ctx and returns its result
// with the generation of the index it stands for (see retrieveTurn). When
// the turn gets no memories because a step failed, the reason is logged at
// debug level.
func (e *Engine) compute(ctx context.Context, turnID string, window []memcore.Message) (*Result, uint64) {
	start := time.Now()
	res, gen, skip := e.retrieveTurn(ctx, window)
	if skip != nil {
		e.log.Debug().Err(skip.err).Str("turn", turnID).Dur("elapsed", time.Since(start)).
			Msg("memretrieve: no memories for this turn: " + skip.reason)
	}
	return res, gen
}

// skipped says why a turn gets no memories: a step failed, or found nothing
// to go on. It is logged, never returned to the caller.
type skipped struct {
	reason string
	err    error // the underlying error, if any
}

// retrieveTurn runs the steps of one turn in order: the window, the queries
// (hypotheses, or focused parts of the window), their vectors, the index,
// the vector and lexical searches, their fusion, the choice of memories and
// their injection block. Besides the result it returns the index
// generation the result stands for — the index searched, the current one
// when the turn ended before it needed an index, or 0 when there was no
// index, so that the turn is computed again once there is one — and, when
// a step failed, why the turn got no memories. With the lexical index on,
// a failed model call or vector search leaves the lexical ranking: the
// turn goes on, and the Result says why the vector side is missing.
func (e *Engine) retrieveTurn(ctx context.Context, window []memcore.Message) (*Result, uint64, *skipped) {
	gen := e.currentGen()
	win := e.window(window)
	if len(win) == 0 {
		return &Result{}, gen, nil
	}
	lexical := e.cfg.LexicalWeight > 0
	focused := focusedQueries(win, e.cfg.QueryTokenLimit)
	mctx, cancel := e.modelContext(ctx)
	defer cancel()
	queries, vskip := e.queries(mctx, win, focused)
	var qvecs [][]float32
	if vskip == nil {
		qvecs, vskip = e.embedQueries(mctx, queries)
	}
	if vskip != nil && !lexical {
		return &Result{}, gen, vskip
	}
	snap, skip := e.snapshotWithin(ctx)
	if skip != nil {
		return &Result{}, 0, skip
	}
	var vhits [][]hit
	if vskip == nil {
		vhits, vskip = e.search(ctx, snap, qvecs)
		if vskip != nil && !lexical {
			return &Result{}, snap.gen, vskip
		}
	}
	var lhits []hit
	if lexical {
		if vskip == nil && snap.idx.len() == 0 && snap.lex.len() > 0 {
			vskip = &skipped{reason: "no memory has a vector yet"}
		}
		texts := focused
		if e.cfg.Mode == ModeLLM && len(queries) > 0 {
			texts = append(slices.Clone(focused), queries...)
		}
		lhits = snap.lex.search(lexicalQuery(texts), e.cfg.TopK)
	}
	ranked := e.fuse(snap, vhits, lhits)
	res := e.render(snap.graph, e.choose(snap, ranked))
	res.Ranked = ranked
	if vskip != nil {
		res.VectorSkipped = vskip.String()
		e.log.Debug().Err(vskip.err).Int("ranked", len(ranked)).
			Msg("memretrieve: this turn has the lexical ranking only: " + vskip.reason)
	}
	return res, snap.gen, nil
}

// window is the part of a turn's conversation retrieval works from: without
// tool content, and capped to Config.WindowTokenBudget, newest text kept.
func (e *Engine) window(msgs []memcore.Message) []memcore.Message {
	return memcore.CapWindow(memcore.StripToolContent(msgs), e.cfg.WindowTokenBudget)
}

// queries returns the texts the turn embeds: the hypothesis model's
// sentences in ModeLLM, the focused parts of the window in ModeIdentity;
// each within Config.QueryTokenLimit.
func (e *Engine) queries(ctx context.Context, win []memcore.Message, focused []string) ([]string, *skipped) {
	if e.cfg.Mode == ModeIdentity {
		return focused, nil
	}
	hs, skip := e.hypotheses(ctx, win)
	out := hs[:0]
	for _, h := range hs {
		if h = capText(h, e.cfg.QueryTokenLimit); h != "" {
			out = append(out, h)
		}
	}
	if skip == nil && len(out) == 0 {
		skip = &skipped{reason: "no hypothesis fits in QueryTokenLimit"}
	}
	return out, skip
}

// embedQueries embeds the queries in one call and returns their vectors
// scaled to unit length, leaving out those that are zero or not finite.
func (e *Engine) embedQueries(ctx context.Context, queries []string) ([][]float32, *skipped) {
	vecs, err := embedWithin(ctx, e.embedder, queries)
	if err != nil {
		return nil, &skipped{reason: failed("the embedder", err), err: err}
	}
	qs := make([][]float32, 0, len(vecs))
	for _, v := range vecs {
		v = append([]float32(nil), v...)
		if normalize(v) {
			qs = append(qs, v)
		}
	}
	if len(qs) == 0 {
		return nil, &skipped{reason: "the embedder returned no usable vectors"}
	}
	e.dimSeen.Store(int64(len(qs[0])))
	return qs, nil
}

// snapshotWithin returns the current index and graph. While the initial
// build of a started engine runs and has published nothing, or only what it
// publishes before embedding, it waits for that build while ctx lasts —
// unless an earlier turn already waited in vain — and, with the lexical
// index on, only until the model calls' deadline (see modelContext): if the
// build is still running then, the turn goes on with the snapshot the build
// published before embedding (the lexical index and any cached vectors).
func (e *Engine) snapshotWithin(ctx context.Context) (*snapshot, *skipped) {
	s := e.snap.Load()
	e.mu.Lock()
	started := e.started
	e.mu.Unlock()
	if !started || (s != nil && !s.early) || e.firstBuildDone() {
		if s == nil {
			return nil, &skipped{reason: "there is no index (Start was not called, or the first build failed)"}
		}
		return s, nil
	}
	if e.stopWaiting.Load() {
		if s != nil {
			return s, nil
		}
		return nil, &skipped{reason: "the first index build is still running"}
	}
	wctx, cancel := e.modelContext(ctx)
	defer cancel()
	select {
	case <-e.ready:
		return e.snapshotWithin(ctx)
	case <-wctx.Done():
		// The build takes longer than a turn's budget (a cold cache, a slow
		// embedder): later turns do not wait, and go with what has been
		// published or without memories.
		e.stopWaiting.Store(true)
		if s := e.snap.Load(); s != nil {
			return s, nil
		}
		return nil, &skipped{reason: "the index is not built yet", err: wctx.Err()}
	}
}

// firstBuildDone reports whether the initial background build has ended.
func (e *Engine) firstBuildDone() bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

// search returns each query's Config.TopK best rows of the snapshot's
// index, best first. Query vectors of another dimension than the index's
// mean the embedder changed: the turn is skipped and a rebuild requested.
func (e *Engine) search(ctx context.Context, snap *snapshot, qs [][]float32) ([][]hit, *skipped) {
	if snap.idx.len() == 0 {
		return nil, nil
	}
	for _, q := range qs {
		if len(q) != snap.idx.dim {
			e.log.Warn().Int("query_dimension", len(q)).Int("index_dimension", snap.idx.dim).
				Msg("memretrieve: the embedder's vectors changed dimension; rebuilding the index")
			e.TriggerRebuild()
			return nil, &skipped{reason: "query and index dimensions differ"}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, &skipped{reason: "out of time before the search", err: err}
	}
	hits, degraded := snap.idx.search(qs, e.cfg.TopK, e.opt.parallelism)
	if degraded {
		// A cache file the quantised index reads its candidates' vectors
		// from was replaced (another process compacted it) or damaged: the
		// hits are still usable, ranked in part by their int8 scores, and
		// the next build reads the files again.
		e.log.Debug().Msg("memretrieve: some candidates' vectors could not be read from the embedding cache; rebuilding the index")
		e.rereadCache.Store(true)
		e.TriggerRebuild()
	}
	return hits, nil
}

// embedWithin embeds texts with emb within ctx (see callWithin) and checks
// that the reply holds one vector per text.
func embedWithin(ctx context.Context, emb memcore.Embedder, texts []string) ([][]float32, error) {
	vecs, err := callWithin(ctx, func(ctx context.Context) ([][]float32, error) {
		return emb.Embed(ctx, texts)
	})
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("%w: %d vectors for %d texts", memcore.ErrInvalidResponse, len(vecs), len(texts))
	}
	return vecs, err
}

// callWithin calls f with ctx and returns its result, or ctx's error as soon
// as ctx ends even if f has not returned: a provider that ignores its
// context cannot hold the turn past its budget (its goroutine is left to
// finish on its own). A panic in f is returned as an error.
func callWithin[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	type outcome struct {
		v   T
		err error
	}
	ch := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p != nil {
				o.err = fmt.Errorf("memretrieve: provider panicked: %v\n%s", p, debug.Stack())
			}
			ch <- o
		}()
		o.v, o.err = f(ctx)
	}()
	select {
	case o := <-ch:
		return o.v, o.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
