package memretrieve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
	"github.com/rs/zerolog"
)

// ErrNoStore is matched, besides memcore.ErrInvalidConfig, by the error of
// [NewEngine] when the store is nil.
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
//
// Retrieval is off when the host builds no engine: every method of a nil
// *Engine is safe to call and does nothing, and its Retrieve returns an
// empty Result whose Skipped is [SkipDisabled]. So a host can keep one
// *Engine variable, nil when its settings turn retrieval off.
type Engine struct {
	store    memcore.MemoryStore
	embedder memcore.Embedder
	llm      memcore.LLMProvider
	// cfg is the engine's Config, its zero fields set to their defaults.
	cfg Config
	log zerolog.Logger
	// cacheDirs maps each scope to its embedding cache folder.
	cacheDirs map[memcore.Scope]string

	// snap is the current index and graph; nil until the first build
	// publishes one.
	snap atomic.Pointer[snapshot]
	// ready is closed when the first background build has ended.
	ready chan struct{}
	// published is closed when the first snapshot a turn need not wait
	// beyond is published: one holding vectors, partial or complete, or the
	// first complete one. A partial snapshot of the lexical index alone
	// does not count: a turn waits, within the model calls' deadline, for
	// vectors (see snapshotWithin).
	published    chan struct{}
	firstPublish sync.Once
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
	// lastBuild is the outcome of the latest build that ran to its end:
	// a Result of a turn with no index says why (Result.Err).
	lastBuild atomic.Pointer[buildOutcome]

	mu      sync.Mutex // guards started, closed, cancel
	started bool
	closed  bool
	cancel  context.CancelFunc
	done    chan struct{} // closed when the background goroutine ends
	kick    chan struct{} // a pending rebuild request

	// buildMu serialises builds and guards what they own below.
	buildMu sync.Mutex
	// complete is set once a build has run to its end; until then, builds
	// publish partial snapshots (see publishSoFar).
	complete bool
	partial  *partialBuild
	cache    *vecCache
	unusable map[contentKey]struct{} // texts the embedder gives no usable vector for
	// lexDocs holds the tokenised text of every indexed content, so a
	// build tokenises only new texts.
	lexDocs map[contentKey]*index.Doc
	// probeBest is the probes' best vector scores of the latest
	// calibration computed, nil when it was loaded.
	probeBest *probeBest
	// calSets are the key sets of the latest calibration key.
	calSets *calibrationSets
	// graphs are the latest build's graphs (see liveGraph).
	graphs *graphs
	// extended counts the publications that extended the last one's
	// indexes (see publishExtended).
	extended atomic.Int64
	// last is what the latest publication was made of (see extensionOf).
	last *lastBuild
	// memo holds what the last build derived from each of its memories
	// (see derive).
	memo        map[*memcore.MemoryFile]memoEntry
	fingerprint [32]byte
	gen         uint64
	// calKey and cal are the latest calibration of the relevance gate and
	// what it was measured on; calibrations counts those computed (not
	// read from the cache), for tests.
	calKey       [32]byte
	cal          *calibration
	calKept      bool // cal is in the cache folder
	calibrations atomic.Int64
}

// snapshot is an index together with the graph built from the same list of
// memories. It is immutable; a rebuild publishes a new one.
type snapshot struct {
	gen   uint64
	graph *memcore.Graph
	idx   *index.Flat
	// lex is the lexical index of every memory with content, with or
	// without a vector; nil when Config.LexicalWeight is 0. lexRows maps a
	// memory id to its row in it.
	lex     *index.Lex
	lexRows map[string]int
	// cal is the relevance gate's calibration of these indexes; nil with
	// the gate off.
	cal *calibration
}

// empty reports whether s indexes no memory: a search of it finds nothing.
func (s *snapshot) empty() bool { return s.idx.Len() == 0 && (s.lex == nil || s.lex.Len() == 0) }

// NewEngine returns an engine over store that embeds with embedder and asks
// hypothesis for hypotheses (unused, and may be nil, in ModeIdentity).
//
// cfg must pass [Config.Validate]; start from [DefaultConfig]. Everything
// missing or out of range is reported, together, in one
// *memcore.ConfigError matching memcore.ErrInvalidConfig: a nil store (the
// error matches [ErrNoStore] too), a nil embedder, a nil hypothesis
// provider in ModeLLM — a typed nil in the interface, such as a nil
// *memcore.FileStore, counts as nil —, and every field of cfg out of range.
//
// Retrieval is optional, but an engine is never silently disabled: a host
// whose settings turn retrieval off builds no engine (see [Engine]).
func NewEngine(store memcore.MemoryStore, embedder memcore.Embedder, hypothesis memcore.LLMProvider, cfg Config) (*Engine, error) {
	mode := cfg.Mode
	if mode == "" {
		mode = ModeLLM
	}
	badFields := cfg.check()
	hint := ""
	if len(badFields) > 0 {
		hint = configHint
	}
	bad := append(missingArguments(store, embedder, hypothesis, mode), badFields...)
	if err := bad.Err("memretrieve", hint); err != nil {
		var ce *memcore.ConfigError
		if errors.As(err, &ce) && isNil(store) {
			ce.Also = append(ce.Also, ErrNoStore)
		}
		return nil, err
	}
	cfg = cfg.withDefaults()
	cfg.CacheSecret = slices.Clone(cfg.CacheSecret) // the caller may reuse its slice
	e := &Engine{
		store:     store,
		embedder:  embedder,
		llm:       hypothesis,
		cfg:       cfg,
		log:       cfg.Logger,
		cacheDirs: cacheDirsFor(store, cfg.CacheDir),
		ready:     make(chan struct{}),
		published: make(chan struct{}),
		done:      make(chan struct{}),
		kick:      make(chan struct{}, 1),
		unusable:  make(map[contentKey]struct{}),
		lexDocs:   make(map[contentKey]*index.Doc),
	}
	if cfg.TurnCacheSize > 0 {
		e.turns = newTurnCache(cfg.TurnCacheSize)
	}
	return e, nil
}

// missing is the value a ConfigError shows for a missing argument.
type missing struct{}

func (missing) String() string { return "nil" }

// Names of NewEngine's arguments in a ConfigError.
const (
	argStore      = "NewEngine's store"
	argEmbedder   = "NewEngine's embedder"
	argHypothesis = "NewEngine's hypothesis provider"
)

// missingArguments lists the providers an engine in mode lacks, naming the
// settings that configure them.
func missingArguments(store memcore.MemoryStore, embedder memcore.Embedder, hypothesis memcore.LLMProvider, mode HypothesisMode) memcore.FieldErrors {
	var bad memcore.FieldErrors
	bad.Check(!isNil(store), argStore, missing{}, "a memcore.MemoryStore")
	bad.Check(!isNil(embedder), argEmbedder, missing{}, "a memcore.Embedder (memory.embedding_model)")
	bad.Check(mode != ModeLLM || !isNil(hypothesis), argHypothesis, missing{},
		"a memcore.LLMProvider in ModeLLM (memory.retrieval_model), or Config.Mode ModeIdentity")
	return bad
}

// isNil reports whether v is nil or holds a nil pointer, map, slice,
// channel or function (a typed nil).
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
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

// Enabled reports whether the engine retrieves anything: true for every
// engine NewEngine returns, false for a nil *Engine (retrieval off).
func (e *Engine) Enabled() bool { return e != nil }

// Start builds the index in the background and keeps rebuilding it when
// [Engine.TriggerRebuild] asks, until ctx ends or [Engine.Close] is called.
// The initial build publishes partial indexes as it goes: before it embeds
// anything, the lexical index of every memory (it needs no model) with the
// vectors the cache holds, then more vectors as batches are embedded. The
// first Retrieve after Start waits, within the model calls' share of its
// time budget (all of it with the lexical index off), until one of them
// holds vectors or the build ends; if that runs out first (a cold cache, a
// slow embedder), the turn answers from the lexical index alone, or gets
// nothing with the lexical index off, and later turns do not wait. Calls
// after the first, and calls after Close, do nothing.
func (e *Engine) Start(ctx context.Context) {
	if e == nil {
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
	if e == nil {
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
// some memories (the index then holds those that could be embedded). A nil
// engine returns nil at once.
func (e *Engine) Rebuild(ctx context.Context) error {
	if e == nil {
		return nil
	}
	return e.build(ctx)
}

// Close stops background builds and waits, until ctx ends, for a build in
// progress to stop. Retrieve keeps working on the last index. A nil engine
// returns nil.
func (e *Engine) Close(ctx context.Context) error {
	if e == nil {
		return nil
	}
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

	delay := e.cfg.RetryDelay
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
			delay = nextRetryDelay(delay, e.cfg.RetryDelay)
		}
		if failed = e.background(ctx); !failed {
			delay = e.cfg.RetryDelay
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
// yet, the turn gets what the lexical index finds: Result.VectorSkipped says
// why the vector ranking is missing and Result.Err carries the cause. With
// the lexical index off (Config.LexicalWeight 0), such a failure — and any
// other: no index yet, the lexical ranking finding nothing either — gives
// an empty Result. Either way the error is nil and the agent carries on:
// Result.Skipped says why the turn got nothing and Result.Err carries the
// cause (memcore's provider taxonomy, context.DeadlineExceeded, the failed
// build's error); the reason is also logged at debug level. The only error
// is the caller's own: when ctx is cancelled or its deadline passes,
// Retrieve returns an empty Result (Skipped SkipCancelled) and ctx.Err().
// The Result is never nil. A nil engine returns an empty Result whose
// Skipped is SkipDisabled. A turn over an index of no memories calls no
// model (an embedder may bill for each call): its Result is empty, nothing
// skipped.
//
// Results are cached per turnID, so the several model calls of one turn cost
// one retrieval; concurrent calls for the same turnID share one computation.
// A turn whose provider failed keeps the result it got (the turn is not
// retried on every call), except that a result made before any index
// existed, or abandoned by its caller, is not kept. A rebuild that changed
// the index invalidates the cache. An empty turnID disables caching for
// the call.
func (e *Engine) Retrieve(ctx context.Context, turnID string, window []memcore.Message) (*Result, error) {
	if e == nil {
		return &Result{Skipped: SkipDisabled}, nil
	}
	if err := ctx.Err(); err != nil {
		return cancelled(err), err
	}
	tctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	if turnID == "" || e.turns == nil {
		res, _ := e.compute(tctx, turnID, window)
		return callerDone(ctx, res)
	}
	ent, leader := e.turns.acquire(turnID, e.currentGen())
	if leader {
		res, gen := e.compute(tctx, turnID, window)
		// A result is kept unless the caller gave up on it or it was made
		// without an index (generation 0): once one exists, the turn is
		// worth computing again.
		e.turns.finish(ent, res, gen, ctx.Err() == nil && gen != 0)
		return callerDone(ctx, res)
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
		return callerDone(ctx, res)
	case <-tctx.Done():
		e.log.Debug().Str("turn", turnID).Msg("memretrieve: no memories for this turn: timed out waiting for the same turn's retrieval")
		return callerDone(ctx, &Result{Skipped: SkipTimeout, Err: fmt.Errorf("waiting for the same turn's retrieval: %w", tctx.Err())})
	}
}

// cancelled is the Result of a turn whose caller's context ended with err.
func cancelled(err error) *Result { return &Result{Skipped: SkipCancelled, Err: err} }

// callerDone returns res and a nil error, or, when the caller's ctx has
// ended, the Result of a cancelled turn and ctx's error.
func callerDone(ctx context.Context, res *Result) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return cancelled(err), err
	}
	return res, nil
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
