package memretrieve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

// ErrNoStore is returned by [NewEngine] when the store is nil.
var ErrNoStore = errors.New("memory store is nil")

// Engine recalls the memories relevant to a conversation turn: it asks the
// hypothesis model what a relevant memory might say (HyDE), embeds those
// sentences in one call, searches an in-memory vector index of every memory
// and a lexical index of the same memories, credits hits on old versions to
// the current one, fuses the two rankings, follows related edges, and
// renders an injection block within a token budget.
//
// Create it with [NewEngine], call [Engine.Start] once to build the index
// in the background, [Engine.TriggerRebuild] whenever memories were
// written, [Engine.Retrieve] at the start of each turn, and [Engine.Close]
// at the end. All methods are safe for concurrent use.
type Engine struct {
	store    memcore.MemoryStore
	embedder memcore.Embedder
	llm      memcore.LLMProvider
	cfg      Config
	opt      engineOptions
	log      zerolog.Logger
	enabled  bool
	// cacheDirs maps each scope to its embedding cache folder.
	cacheDirs map[memcore.Scope]string

	// snap is the current index and graph; nil until the first build.
	snap atomic.Pointer[snapshot]
	// ready is closed when the first background build has ended.
	ready chan struct{}
	// stopWaiting is set when a turn's budget ran out waiting for the
	// first build; later turns do not wait.
	stopWaiting atomic.Bool
	// dimSeen is the dimension of the latest query vectors, so a build
	// notices an embedder whose vectors changed size under the same Model.
	dimSeen atomic.Int64
	// rereadCache is set when a search could not read some candidates'
	// vectors back from the cache files: the next build reads the files
	// again and publishes a new index.
	rereadCache atomic.Bool
	turns       *turnCache

	mu      sync.Mutex // guards started, closed, cancel
	started bool
	closed  bool
	cancel  context.CancelFunc
	done    chan struct{} // closed when the background goroutine ends
	kick    chan struct{} // a pending rebuild request

	// buildMu serialises builds and guards what they own below.
	buildMu  sync.Mutex
	cache    *vecCache
	unusable map[contentKey]struct{} // texts the embedder gives no usable vector for
	// lexDocs holds the tokenised text of every indexed content, so a
	// build tokenises only new texts.
	lexDocs     map[contentKey]*lexDoc
	fingerprint [32]byte
	gen         uint64
}

// snapshot is an index together with the graph built from the same list of
// memories. It is immutable; a rebuild publishes a new one.
type snapshot struct {
	gen   uint64
	graph *memcore.Graph
	idx   *flatIndex
	// lex is the lexical index of every memory with content, with or
	// without a vector; nil when Config.LexicalWeight is 0.
	lex *lexIndex
	// early marks a snapshot published before the build embedded the
	// texts the cache lacked.
	early bool
}

// NewEngine returns an engine over store that embeds with embedder and asks
// hypothesis for hypotheses (unused, and may be nil, in ModeIdentity).
//
// cfg must pass [Config.Validate]; start from [DefaultConfig]. Every field
// of cfg out of range and every option given a value out of range is
// reported, together, in one *[ConfigError] wrapping [ErrInvalidConfig]. A
// nil store is an error wrapping [ErrNoStore]. Nil options are ignored.
//
// Without an embedder, or without a hypothesis provider in ModeLLM, the
// engine is disabled: NewEngine logs one warning saying what is missing,
// [Engine.Enabled] is false, Start, TriggerRebuild and Rebuild do nothing,
// and Retrieve returns empty results. Retrieval is optional; the agent works
// without it.
func NewEngine(store memcore.MemoryStore, embedder memcore.Embedder, hypothesis memcore.LLMProvider, cfg Config, opts ...EngineOption) (*Engine, error) {
	if store == nil {
		return nil, fmt.Errorf("memretrieve: new engine: %w", ErrNoStore)
	}
	o := defaultEngineOptions()
	for _, opt := range opts {
		if opt != nil {
			opt.applyEngine(&o)
		}
	}
	if err := append(cfg.check(), o.bad...).err(); err != nil {
		return nil, err
	}
	e := &Engine{
		store:     store,
		embedder:  embedder,
		llm:       hypothesis,
		cfg:       cfg,
		opt:       o,
		log:       o.log,
		cacheDirs: cacheDirsFor(store, o.cacheDir),
		ready:     make(chan struct{}),
		done:      make(chan struct{}),
		kick:      make(chan struct{}, 1),
		unusable:  make(map[contentKey]struct{}),
		lexDocs:   make(map[contentKey]*lexDoc),
	}
	if o.turnCacheSize > 0 {
		e.turns = newTurnCache(o.turnCacheSize)
	}
	if missing := missingProviders(embedder, hypothesis, cfg.Mode); missing != "" {
		e.log.Warn().Msg("memretrieve: memory retrieval is disabled: " + missing)
	} else {
		e.enabled = true
	}
	return e, nil
}

// cacheDirsFor returns the embedding cache folder of each scope: dir for
// every scope when it is set, else the .cache folder inside the scope's
// own folder when store has folders (see ScopeDirs). Scopes without one
// are left out; their cache is kept in memory.
func cacheDirsFor(store memcore.MemoryStore, dir string) map[memcore.Scope]string {
	dirs := make(map[memcore.Scope]string)
	sd, hasDirs := store.(ScopeDirs)
	for _, s := range memcore.Scopes() {
		switch {
		case dir != "":
			dirs[s] = dir
		case hasDirs && sd.Dir(s) != "":
			dirs[s] = filepath.Join(sd.Dir(s), cacheDirName)
		}
	}
	return dirs
}

// missingProviders says which providers an engine in mode lacks, naming the
// settings that configure them, or returns "" when it lacks none.
func missingProviders(embedder memcore.Embedder, hypothesis memcore.LLMProvider, mode HypothesisMode) string {
	noLLM := mode == ModeLLM && hypothesis == nil
	switch {
	case embedder == nil && noLLM:
		return "no embedding model (memory.embedding_model) and no hypothesis model (memory.retrieval_model) are configured"
	case embedder == nil:
		return "no embedding model (memory.embedding_model) is configured"
	case noLLM:
		return "no hypothesis model (memory.retrieval_model) is configured; configure one, or choose the identity mode"
	}
	return ""
}

// Enabled reports whether the engine retrieves anything (see [NewEngine]).
func (e *Engine) Enabled() bool { return e.enabled }

// Start builds the index in the background and keeps rebuilding it when
// [Engine.TriggerRebuild] asks, until ctx ends or [Engine.Close] is called.
// The first Retrieve after Start waits for the initial build, within its own
// time budget; if the budget runs out first (a cold cache of many memories,
// a slow embedder), later turns do not wait and go without memories until
// the build is done. Calls after the first, and calls after Close, do
// nothing.
func (e *Engine) Start(ctx context.Context) {
	if !e.enabled {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started || e.closed {
		return
	}
	e.started = true
	bctx, cancel := context.WithCancel(ctx)
	e.cancel = cancel
	go e.loop(bctx)
}

// TriggerRebuild asks for the index to be rebuilt (new memories were
// written) and returns at once. Requests coalesce: any number of them while
// a build runs cause exactly one more build after it. A request before
// Start is covered by Start's initial build; after Close it does nothing.
// It is meant as the capture pipeline's rebuild callback.
func (e *Engine) TriggerRebuild() {
	if !e.enabled {
		return
	}
	select {
	case e.kick <- struct{}{}:
	default: // one is pending already
	}
}

// Rebuild builds the index now and returns when it reflects the store as it
// was when the build began: for commands and tests that have no use for a
// background goroutine. It waits for a background build in progress to
// finish first. The error says what failed: listing the store, or embedding
// some memories (the index then holds those that could be embedded). A
// disabled engine returns nil at once.
func (e *Engine) Rebuild(ctx context.Context) error {
	if !e.enabled {
		return nil
	}
	return e.build(ctx)
}

// Close stops background builds and waits, until ctx ends, for a build in
// progress to stop. Retrieve keeps working on the last index.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	started, cancel := e.started, e.cancel
	e.mu.Unlock()
	if !started {
		return nil
	}
	cancel()
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop is the background goroutine: the initial build, then one build per
// request, and retries after builds that could not embed everything.
func (e *Engine) loop(ctx context.Context) {
	defer close(e.done)
	select { // a request made before Start is covered by the initial build
	case <-e.kick:
	default:
	}
	failed := e.background(ctx)
	close(e.ready) // loop runs once per engine: Start starts it only once

	delay := e.opt.retryDelay
	for {
		var retryAfter time.Duration // 0: wait for a request only
		if failed {
			retryAfter = delay
		}
		work, retry := e.awaitWork(ctx, retryAfter)
		if !work {
			return
		}
		if retry {
			delay = nextRetryDelay(delay, e.opt.retryDelay)
		}
		if failed = e.background(ctx); !failed {
			delay = e.opt.retryDelay
		}
	}
}

// awaitWork waits for the next reason to build: a rebuild request, or,
// when retryAfter is not 0, that much time passing (retry true). work is
// false when ctx ended first.
func (e *Engine) awaitWork(ctx context.Context, retryAfter time.Duration) (work, retry bool) {
	var retryC <-chan time.Time
	if retryAfter > 0 {
		t := time.NewTimer(retryAfter)
		defer t.Stop()
		retryC = t.C
	}
	select {
	case <-ctx.Done():
		return false, false
	case <-e.kick:
		return true, false
	case <-retryC:
		return true, true
	}
}

// maxRetryFactor bounds the retry delay at this many times its first value.
const maxRetryFactor = 16

// nextRetryDelay returns the wait after one more incomplete build: twice d,
// at most maxRetryFactor times base, and never past the largest Duration
// however large base is.
func nextRetryDelay(d, base time.Duration) time.Duration {
	limit := time.Duration(math.MaxInt64)
	if base <= limit/maxRetryFactor {
		limit = base * maxRetryFactor
	}
	if d > limit/2 {
		return limit
	}
	return 2 * d
}

// background runs one build for the loop and reports whether it should be
// retried later.
func (e *Engine) background(ctx context.Context) bool {
	err := e.build(ctx)
	if err == nil || ctx.Err() != nil {
		return false
	}
	e.log.Warn().Err(err).Msg("memretrieve: index build incomplete; retrying later")
	return true
}

// Retrieve returns the memories relevant to the turn turnID, whose
// conversation since the last summarisation is window, and the injection
// block that presents them.
//
// It spends at most Config.Timeout in total. When the hypothesis model or
// the embedder is slow, down or replies nonsense, or no memory has a vector
// yet, the turn gets what the lexical index finds, and Result.VectorSkipped
// says why; with the lexical index off (Config.LexicalWeight 0), and on any
// other failure — no index yet — it gets an empty Result. Either way the
// error is nil: the reason is logged at debug level and the agent carries
// on. The only error is the caller's own: when ctx is cancelled or its
// deadline passes, Retrieve returns an empty Result and ctx.Err(). The
// Result is never nil.
//
// Results are cached per turnID, so the several model calls of one turn cost
// one retrieval; concurrent calls for the same turnID share one computation.
// A turn whose provider failed keeps the result it got (the turn is not
// retried on every call), except that a result made before any index
// existed, or abandoned by its caller, is not kept. A
// rebuild that changed the index invalidates the cache. An empty turnID
// disables caching for the call.
func (e *Engine) Retrieve(ctx context.Context, turnID string, window []memcore.Message) (*Result, error) {
	if !e.enabled {
		return &Result{}, nil
	}
	if err := ctx.Err(); err != nil {
		return &Result{}, err
	}
	tctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	if turnID == "" || e.turns == nil {
		res, _ := e.compute(tctx, turnID, window)
		return res, ctx.Err()
	}
	ent, leader := e.turns.acquire(turnID, e.currentGen())
	if leader {
		res, gen := e.compute(tctx, turnID, window)
		// A result is kept unless the caller gave up on it or it was made
		// without an index (generation 0): once one exists, the turn is
		// worth computing again.
		e.turns.finish(ent, res, gen, ctx.Err() == nil && gen != 0)
		return res, ctx.Err()
	}
	if testHookTurnWait != nil {
		testHookTurnWait()
	}
	select {
	case <-ent.done:
		if ent.ok {
			return ent.res, nil
		}
		// The caller computing it gave up; compute this call's own.
		res, _ := e.compute(tctx, turnID, window)
		return res, ctx.Err()
	case <-tctx.Done():
		e.log.Debug().Str("turn", turnID).Msg("memretrieve: no memories for this turn: timed out waiting for the same turn's retrieval")
		return &Result{}, ctx.Err()
	}
}

// testHookTurnWait, when set by a test, is called when a Retrieve starts
// waiting for another call's computation of the same turn.
var testHookTurnWait func()

// currentGen returns the generation of the published index, 0 before the
// first.
func (e *Engine) currentGen() uint64 {
	if s := e.snap.Load(); s != nil {
		return s.gen
	}
	return 0
}
