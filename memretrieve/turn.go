package memretrieve

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
)

// compute runs the retrieval of one turn within ctx and returns its result
// with the generation of the index it stands for (see retrieveTurn). When
// the turn gets no memories because a step failed, the Result says why
// (Skipped, Err) and the reason is logged at debug level. A provider step
// that failed because ctx ran out is a timeout.
func (e *Engine) compute(ctx context.Context, turnID string, window []memcore.Message) (*Result, uint64) {
	start := time.Now()
	res, gen, skip := e.retrieveTurn(ctx, window)
	if skip != nil {
		if ctx.Err() != nil && (skip.kind == SkipHypothesisError || skip.kind == SkipEmbedderError) {
			skip = &skipped{kind: SkipTimeout, reason: skip.reason + " (out of time)", err: fmt.Errorf("%s: %w", skip.reason, ctx.Err())}
		}
		// Provider errors may quote the conversation: redacted, the cause
		// still reachable with errors.Is.
		skip.err = redact.Error(skip.err)
		res.Skipped, res.Err = skip.kind, skip.err
		e.log.Debug().Err(skip.err).Str("turn", turnID).Stringer("skipped", skip.kind).Dur("elapsed", time.Since(start)).
			Msg("memretrieve: no memories for this turn: " + skip.reason)
	}
	return res, gen
}

// skipped says why a turn gets no memories: a step failed, or found nothing
// to go on. It becomes the Result's Skipped and Err, and is logged.
type skipped struct {
	kind   SkipReason
	reason string
	err    error // the underlying error, if any
}

// retrieveTurn runs the steps of one turn in order: the window, the queries
// (hypotheses, or the window itself), their vectors, the index, the search,
// the choice of memories and their injection block. Besides the result it
// returns the index generation the result stands for — the index searched,
// the current one when the turn ended before it needed an index, or 0 when
// there was no index, so that the turn is computed again once there is one
// — and, when a step failed, why the turn got no memories.
func (e *Engine) retrieveTurn(ctx context.Context, window []memcore.Message) (*Result, uint64, *skipped) {
	gen := e.currentGen()
	win := e.window(window)
	if len(win) == 0 {
		return &Result{}, gen, &skipped{kind: SkipEmptyWindow, reason: "nothing is left of the window without tool content"}
	}
	queries, skip := e.queries(ctx, win)
	if skip != nil {
		return &Result{}, gen, skip
	}
	qvecs, skip := e.embedQueries(ctx, queries)
	if skip != nil {
		return &Result{}, gen, skip
	}
	snap, skip := e.snapshotWithin(ctx)
	if skip != nil {
		return &Result{}, 0, skip
	}
	hits, skip := e.search(ctx, snap, qvecs)
	if skip != nil {
		return &Result{}, snap.gen, skip
	}
	return e.render(snap.graph, e.choose(snap, hits)), snap.gen, nil
}

// window is the part of a turn's conversation retrieval works from: without
// tool content, and capped to Config.WindowTokenBudget, newest text kept.
func (e *Engine) window(msgs []memcore.Message) []memcore.Message {
	return memcore.CapWindow(memcore.StripToolContent(msgs), e.cfg.WindowTokenBudget)
}

// queries returns the texts the turn searches with: the hypothesis model's
// sentences in ModeLLM, the window's text itself in ModeIdentity.
func (e *Engine) queries(ctx context.Context, win []memcore.Message) ([]string, *skipped) {
	if e.cfg.Mode == ModeIdentity {
		return []string{windowText(win)}, nil
	}
	return e.hypotheses(ctx, win)
}

// embedQueries embeds the queries in one call and returns their vectors
// scaled to unit length, leaving out those that are zero or not finite.
func (e *Engine) embedQueries(ctx context.Context, queries []string) ([][]float32, *skipped) {
	vecs, err := embedWithin(ctx, e.embedder, queries)
	if err != nil {
		return nil, &skipped{kind: SkipEmbedderError, reason: "the embedder failed", err: err}
	}
	qs := make([][]float32, 0, len(vecs))
	for _, v := range vecs {
		v = append([]float32(nil), v...)
		if normalize(v) {
			qs = append(qs, v)
		}
	}
	if len(qs) == 0 {
		return nil, &skipped{kind: SkipEmbedderError, reason: "the embedder returned no usable vectors",
			err: fmt.Errorf("%w: zero or non-finite query vectors", memcore.ErrInvalidResponse)}
	}
	e.dimSeen.Store(int64(len(qs[0])))
	return qs, nil
}

// snapshotWithin returns the current index and graph. If none is published
// yet and the engine was started, it waits, while ctx lasts, for the first
// snapshot the initial build publishes — what the cache holds, or its first
// batch — or for the build to end, unless an earlier turn already waited in
// vain.
func (e *Engine) snapshotWithin(ctx context.Context) (*snapshot, *skipped) {
	if s := e.snap.Load(); s != nil {
		return s, nil
	}
	e.mu.Lock()
	started := e.started
	e.mu.Unlock()
	noIndex := &skipped{kind: SkipNoIndex, reason: "there is no index (Start was not called, or the first build failed)", err: e.lastBuildErr()}
	if !started {
		return nil, noIndex
	}
	if e.stopWaiting.Load() {
		return nil, &skipped{kind: SkipNoIndex, reason: "the first index build is still running"}
	}
	select {
	case <-e.published:
		return e.snap.Load(), nil
	case <-e.ready:
		if s := e.snap.Load(); s != nil {
			return s, nil
		}
		noIndex.err = e.lastBuildErr()
		return nil, noIndex
	case <-ctx.Done():
		// The build takes longer than a turn's budget (a cold cache, a slow
		// embedder): later turns go without memories at once rather than
		// each waiting out its budget.
		e.stopWaiting.Store(true)
		return nil, &skipped{kind: SkipNoIndex, reason: "the index is not built yet", err: ctx.Err()}
	}
}

// search returns each query's Config.TopK best rows of the snapshot's
// index, best first. An empty index because the last build failed is no
// index. Query vectors of another dimension than the index's
// mean the embedder changed: the turn is skipped and a rebuild requested.
func (e *Engine) search(ctx context.Context, snap *snapshot, qs [][]float32) ([][]hit, *skipped) {
	if snap.idx.len() == 0 {
		if err := e.lastBuildErr(); err != nil {
			return nil, &skipped{kind: SkipNoIndex, reason: "the index is empty: the last build could not embed the memories", err: err}
		}
		return nil, nil
	}
	for _, q := range qs {
		if len(q) != snap.idx.dim {
			e.log.Warn().Int("query_dimension", len(q)).Int("index_dimension", snap.idx.dim).
				Msg("memretrieve: the embedder's vectors changed dimension; rebuilding the index")
			e.TriggerRebuild()
			return nil, &skipped{kind: SkipEmbedderError, reason: "query and index dimensions differ",
				err: fmt.Errorf("%w: query vectors of dimension %d, an index of %d (rebuilding)", memcore.ErrInvalidResponse, len(q), snap.idx.dim)}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, &skipped{kind: SkipTimeout, reason: "out of time before the search", err: err}
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
