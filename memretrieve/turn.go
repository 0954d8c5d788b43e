package memretrieve

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
)

// compute runs the retrieval of one turn within ctx and returns its result
// with the generation of the index it stands for (see retrieveTurn). When
// the turn gets no memories because a step failed, or goes on without the
// vector ranking, the Result says why (Skipped or VectorSkipped, and Err)
// and the reason is logged at debug level.
func (e *Engine) compute(ctx context.Context, turnID string, window []memcore.Message) (*Result, uint64) {
	start := time.Now()
	win := e.window(window)
	res, gen, skip, vskip := e.retrieveTurn(ctx, &win)
	res.Redactions = win.redactions
	if vskip != nil {
		// Provider errors may quote the conversation: redacted, the cause
		// still reachable with errors.Is.
		vskip.err = redact.Error(vskip.err)
		res.VectorSkipped, res.Err = vskip.kind, vskip.err
		if skip == nil {
			e.log.Debug().Err(vskip.err).Str("turn", turnID).Stringer("vector_skipped", vskip.kind).Int("ranked", len(res.Ranked)).
				Dur("elapsed", time.Since(start)).Msg("memretrieve: this turn has the lexical ranking only: " + vskip.reason)
		}
	}
	if skip != nil {
		if skip != vskip {
			skip.err = redact.Error(skip.err)
		}
		res.Skipped, res.Err = skip.kind, skip.err
		e.log.Debug().Err(skip.err).Str("turn", turnID).Stringer("skipped", skip.kind).Dur("elapsed", time.Since(start)).
			Msg("memretrieve: no memories for this turn: " + skip.reason)
	}
	return res, gen
}

// skipped says why a turn gets no memories, or goes on without the vector
// ranking: a step failed, or found nothing to go on. It becomes the
// Result's Skipped (or VectorSkipped) and Err, and is logged.
type skipped struct {
	kind   SkipReason
	reason string
	err    error // the underlying error, if any
}

// outOfTime returns skip, or, when it is the failure of a model call whose
// context ctx has ended, a timeout: the call ran out of time.
func outOfTime(ctx context.Context, skip *skipped) *skipped {
	if skip == nil || ctx.Err() == nil || skip.kind != SkipHypothesisError && skip.kind != SkipEmbedderError {
		return skip
	}
	return &skipped{kind: SkipTimeout, reason: skip.reason + " (out of time)", err: fmt.Errorf("%s: %w", skip.reason, ctx.Err())}
}

// retrieveTurn runs the steps of one turn in order: the queries
// (hypotheses, or focused parts of the window), their vectors, the index,
// the vector and lexical searches, their fusion, the choice of memories and
// their injection block. Besides the result it returns the index
// generation the result stands for — the index searched, the current one
// when the turn ended before it needed an index, or 0 when there was no
// index, so that the turn is computed again once there is one — and, when
// a step failed, why the turn got no memories (skip). With the lexical
// index on, a failed or late model call, or an index without vectors,
// leaves the turn the lexical ranking: the turn goes on, and vskip says
// why the vector side is missing; should the lexical ranking find nothing
// either, that is why the turn got nothing, and skip is vskip.
func (e *Engine) retrieveTurn(ctx context.Context, win *turnWindow) (res *Result, gen uint64, skip, vskip *skipped) {
	gen = e.currentGen()
	if len(win.local) == 0 || len(win.sent) == 0 {
		return &Result{}, gen, &skipped{kind: SkipEmptyWindow, reason: "nothing is left of the window without tool content"}, nil
	}
	if s := e.snap.Load(); s != nil && s.empty() && e.lastBuildErr() == nil {
		if _, _, decided := e.snapshotNow(s); decided {
			// Nothing to search, and no build to wait for: no model call
			// (an embedder may bill for each one) for a turn that can get
			// nothing.
			return &Result{}, s.gen, nil, nil
		}
	}
	lexical := e.cfg.LexicalWeight > 0
	focused := focusedQueries(win.local, e.cfg.QueryTokenLimit)
	mctx, cancel := e.modelContext(ctx)
	defer cancel()
	queries, vskip := e.queries(mctx, win)
	var qvecs [][]float32
	var qtokens []int
	if vskip == nil {
		qvecs, qtokens, vskip = e.embedQueries(mctx, queries)
	}
	if vskip = outOfTime(mctx, vskip); vskip != nil && !lexical {
		return &Result{}, gen, vskip, nil
	}
	snap, skip := e.snapshotWithin(mctx)
	if skip != nil {
		return &Result{}, 0, skip, nil
	}
	var vhits [][]index.Hit
	if vskip == nil {
		vhits, vskip = e.search(ctx, snap, qvecs)
		if vskip != nil && !lexical {
			return &Result{}, snap.gen, vskip, nil
		}
	}
	if vskip != nil {
		qtokens = nil // no vector query was searched
	}
	lhits := e.lexicalHits(snap, focused, queries)
	res = e.inject(ctx, snap, e.fuse(snap, vhits, lhits, e.newGate(snap, qtokens, focused)))
	if vskip != nil && len(res.Ranked) == 0 {
		// The lexical ranking found nothing either: the vector side's
		// failure is why the turn got nothing.
		return res, snap.gen, vskip, vskip
	}
	return res, snap.gen, nil, vskip
}

// lexicalHits searches the lexical index, when it is on, for the focused
// queries of the window and, in ModeLLM, the hypotheses too.
func (e *Engine) lexicalHits(snap *snapshot, focused, hypotheses []string) []index.Hit {
	if e.cfg.LexicalWeight <= 0 {
		return nil
	}
	texts := focused
	if e.cfg.Mode == ModeLLM && len(hypotheses) > 0 {
		texts = append(slices.Clone(focused), hypotheses...)
	}
	return snap.lex.Search(index.NewQuery(texts), e.cfg.TopK)
}

// turnWindow is the part of a turn's conversation retrieval works from:
// without tool content, and capped to Config.WindowTokenBudget, newest text
// kept. The lexical search, which runs here, reads it as it is (local);
// what is sent to the hypothesis model and the embedder is cut from it
// with its secrets redacted (sent, see memcore.RedactWindow). redactions
// counts the secrets replaced in what the turn sends.
type turnWindow struct {
	local, sent []memcore.Message
	redactions  int
}

// window returns the turnWindow of a turn's conversation.
func (e *Engine) window(msgs []memcore.Message) turnWindow {
	stripped := memcore.StripToolContent(msgs)
	fit := func(m []memcore.Message) []memcore.Message { return memcore.CapWindow(m, e.cfg.WindowTokenBudget) }
	sent, n := memcore.RedactWindow(stripped, fit)
	return turnWindow{local: fit(stripped), sent: sent, redactions: n}
}

// queries returns the texts the turn embeds, redacted, each within
// Config.QueryTokenLimit: the focused parts of the window in ModeIdentity;
// in ModeLLM the hypothesis model's sentences, which are redacted too (a
// model may make up or repeat a secret) and counted in win.redactions.
func (e *Engine) queries(ctx context.Context, win *turnWindow) ([]string, *skipped) {
	if e.cfg.Mode == ModeIdentity {
		return focusedQueries(win.sent, e.cfg.QueryTokenLimit), nil
	}
	hs, skip := e.hypotheses(ctx, win.sent)
	out := hs[:0]
	for _, h := range hs {
		h, n := redact.Text(h)
		win.redactions += n
		if h = capText(h, e.cfg.QueryTokenLimit); h != "" {
			out = append(out, h)
		}
	}
	if skip == nil && len(out) == 0 {
		skip = &skipped{kind: SkipHypothesisError, reason: "no hypothesis fits in QueryTokenLimit",
			err: fmt.Errorf("%w: no hypothesis fits in QueryTokenLimit", memcore.ErrInvalidResponse)}
	}
	return out, skip
}

// embedQueries embeds the queries in one call and returns their vectors
// scaled to unit length, leaving out those that are zero or not finite,
// and the length of the query of each vector, in memcore.EstimateTokens
// tokens.
func (e *Engine) embedQueries(ctx context.Context, queries []string) ([][]float32, []int, *skipped) {
	vecs, err := embedWithin(ctx, e.embedder, queries)
	if err != nil {
		return nil, nil, &skipped{kind: SkipEmbedderError, reason: "the embedder failed", err: err}
	}
	qs := make([][]float32, 0, len(vecs))
	tokens := make([]int, 0, len(vecs))
	for i, v := range vecs {
		v = append([]float32(nil), v...)
		if index.Normalize(v) {
			qs = append(qs, v)
			tokens = append(tokens, memcore.EstimateTokens(queries[i]))
		}
	}
	if len(qs) == 0 {
		return nil, nil, &skipped{kind: SkipEmbedderError, reason: "the embedder returned no usable vectors",
			err: fmt.Errorf("%w: zero or non-finite query vectors", memcore.ErrInvalidResponse)}
	}
	e.dimSeen.Store(int64(len(qs[0])))
	return qs, tokens, nil
}

// snapshotWithin returns the current index and graph. While the initial
// build of a started engine runs and has published no snapshot holding
// vectors — nothing yet, or only the lexical index (see publishSoFar) — it
// waits for one, or for the build to end, while ctx lasts (the turn's
// model calls' context: see modelContext), unless an earlier turn already
// waited in vain. Then the turn goes on with what is published: the
// lexical index alone, or no index.
func (e *Engine) snapshotWithin(ctx context.Context) (*snapshot, *skipped) {
	s := e.snap.Load()
	if s != nil && s.idx.Len() > 0 {
		return s, nil
	}
	if s, skip, decided := e.snapshotNow(s); decided {
		return s, skip
	}
	return e.awaitSnapshot(ctx)
}

// snapshotNow decides, without waiting, what a turn goes on with when the
// published snapshot s (nil: none) holds no vectors: s, or no index, when
// there is nothing to wait for — Start was not called, the first build
// ended, or an earlier turn waited in vain. decided is false when the turn
// should wait for the first build.
func (e *Engine) snapshotNow(s *snapshot) (*snapshot, *skipped, bool) {
	e.mu.Lock()
	started := e.started
	e.mu.Unlock()
	switch {
	case s != nil && (!started || e.firstBuildDone() || e.stopWaiting.Load()):
		return s, nil, true
	case !started || e.firstBuildDone():
		return nil, &skipped{kind: SkipNoIndex, reason: "there is no index (Start was not called, or the first build failed)", err: e.lastBuildErr()}, true
	case e.stopWaiting.Load():
		return nil, &skipped{kind: SkipNoIndex, reason: "the first index build is still running"}, true
	}
	return nil, nil, false
}

// awaitSnapshot waits, while ctx lasts, for the first build to publish a
// snapshot holding vectors or to end, and returns what is published then.
func (e *Engine) awaitSnapshot(ctx context.Context) (*snapshot, *skipped) {
	select {
	case <-e.published:
	case <-e.ready:
	case <-ctx.Done():
		// The build takes longer than a turn's budget (a cold cache, a slow
		// embedder): later turns do not wait, and go with what has been
		// published or without memories, rather than each waiting out its
		// budget.
		if !isClosed(e.published) && !e.firstBuildDone() {
			e.stopWaiting.Store(true)
		}
		if s := e.snap.Load(); s != nil {
			return s, nil
		}
		return nil, &skipped{kind: SkipNoIndex, reason: "the index is not built yet", err: ctx.Err()}
	}
	if s := e.snap.Load(); s != nil {
		return s, nil
	}
	return nil, &skipped{kind: SkipNoIndex, reason: "there is no index (the first build failed)", err: e.lastBuildErr()}
}

// firstBuildDone reports whether the initial background build has ended.
func (e *Engine) firstBuildDone() bool { return isClosed(e.ready) }

// isClosed reports whether ch is closed (it is only ever closed, never
// sent on).
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// search returns each query's Config.TopK best rows of the snapshot's
// index, best first. An index without vectors is no index when the last
// build failed, or when the lexical index holds the memories (the first
// build has not embedded them yet): the turn goes on with the lexical
// ranking, or is skipped. Query vectors of another dimension than the
// index's mean the embedder changed: the vector search is skipped and a
// rebuild requested.
func (e *Engine) search(ctx context.Context, snap *snapshot, qs [][]float32) ([][]index.Hit, *skipped) {
	if snap.idx.Len() == 0 {
		if err := e.lastBuildErr(); err != nil {
			return nil, &skipped{kind: SkipNoIndex, reason: "the index is empty: the last build could not embed the memories", err: err}
		}
		if snap.lex.Len() > 0 {
			return nil, &skipped{kind: SkipNoIndex, reason: "no memory has a vector yet"}
		}
		return nil, nil
	}
	for _, q := range qs {
		if len(q) != snap.idx.Dim {
			e.log.Warn().Int("query_dimension", len(q)).Int("index_dimension", snap.idx.Dim).
				Msg("memretrieve: the embedder's vectors changed dimension; rebuilding the index")
			e.TriggerRebuild()
			return nil, &skipped{kind: SkipEmbedderError, reason: "query and index dimensions differ",
				err: fmt.Errorf("%w: query vectors of dimension %d, an index of %d (rebuilding)", memcore.ErrInvalidResponse, len(q), snap.idx.Dim)}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, &skipped{kind: SkipTimeout, reason: "out of time before the search", err: err}
	}
	hits, degraded := snap.idx.Search(qs, e.cfg.TopK, e.cfg.Parallelism)
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

// checkHold asks Config.HoldCheck about each memory of recs: those it
// holds are left out and returned in held, and the versions it holds are
// left out of the others' histories. With no HoldCheck, recs are returned
// as they are. (The block's links leave out held memories too: see
// renderer.links.)
func (e *Engine) checkHold(recs []Recalled) (kept, held []Recalled) {
	check := e.cfg.HoldCheck
	if check == nil {
		return recs, nil
	}
	kept = recs[:0:0]
	for _, rc := range recs {
		if check.Hold(rc.Memory) != "" {
			held = append(held, rc)
			continue
		}
		var history []*memcore.MemoryFile
		for _, v := range rc.History {
			if check.Hold(v) == "" {
				history = append(history, v)
			}
		}
		if len(history) < len(rc.History) {
			rc.History = history
		}
		kept = append(kept, rc)
	}
	return kept, held
}

// checkStale asks Config.StaleCheck about each memory of recs: with
// StaleLabel the memory keeps its reason in Recalled.Stale, with StaleDrop
// it is left out and returned in gone. With StaleIgnore, or no StaleCheck,
// recs are returned as they are.
func (e *Engine) checkStale(ctx context.Context, recs []Recalled) (kept, gone []Recalled) {
	check := e.cfg.StaleCheck
	if check == nil || e.cfg.Stale == StaleIgnore {
		return recs, nil
	}
	kept = recs[:0:0]
	for _, rc := range recs {
		rc.Stale = check.Stale(ctx, rc.Memory)
		if rc.Stale != "" && e.cfg.Stale == StaleDrop {
			gone = append(gone, rc)
			continue
		}
		kept = append(kept, rc)
	}
	return kept, gone
}
