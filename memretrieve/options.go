package memretrieve

import (
	"runtime"
	"time"

	"github.com/rs/zerolog"
)

// EngineOption configures an [Engine] made by [NewEngine].
type EngineOption interface {
	applyEngine(*engineOptions)
}

// IndexOption configures an [Index] made by [NewIndex].
type IndexOption interface {
	applyIndex(*indexOptions)
}

// Option configures an [Engine] and an [Index] alike: it is both an
// [EngineOption] and an [IndexOption].
type Option interface {
	EngineOption
	IndexOption
}

// indexOptions holds what [NewIndex] takes. An engine takes them too: its
// index searches the same way.
type indexOptions struct {
	parallelism int
	// quantized is set by WithQuantized, for an Index only: the engine
	// takes Config.Quantized.
	quantized bool
	// bad lists the options given values out of range, in the order they
	// were applied; the constructor returns them as a *ConfigError.
	bad fieldErrors
}

func defaultIndexOptions() indexOptions {
	return indexOptions{parallelism: runtime.GOMAXPROCS(0)}
}

// engineOptions holds what [NewEngine] takes.
type engineOptions struct {
	indexOptions
	log           zerolog.Logger
	cacheDir      string
	embedBatch    int
	turnCacheSize int
	retryDelay    time.Duration
	progress      func(done, total int)
}

func defaultEngineOptions() engineOptions {
	return engineOptions{
		indexOptions:  defaultIndexOptions(),
		log:           zerolog.Nop(),
		embedBatch:    256,
		turnCacheSize: 64,
		retryDelay:    30 * time.Second,
	}
}

// engineOption is an option only an engine takes.
type engineOption func(*engineOptions)

func (f engineOption) applyEngine(o *engineOptions) { f(o) }

// sharedOption is an option an engine and an index take alike.
type sharedOption func(*indexOptions)

func (f sharedOption) applyIndex(o *indexOptions)   { f(o) }
func (f sharedOption) applyEngine(o *engineOptions) { f(&o.indexOptions) }

// WithLogger sets the logger. The engine logs warnings for failed index
// builds and unusable cache files, and at debug level the reason a turn
// got no memories or went on without its vector ranking. The default logs
// nothing.
func WithLogger(l zerolog.Logger) EngineOption {
	return engineOption(func(o *engineOptions) { o.log = l })
}

// WithCacheDir keeps the embedding cache in dir (created if needed, with a
// .gitignore that ignores everything in it) for memories of every scope.
// Without it the cache lives in the .cache folder of each scope's memory
// folder when the store has folders (a [memcore.FileStore] does, see
// [ScopeDirs]), and in memory only otherwise.
func WithCacheDir(dir string) EngineOption {
	return engineOption(func(o *engineOptions) { o.cacheDir = dir })
}

// WithEmbedBatch sets how many memory texts an index build sends in one
// Embed call: at least 1; the default is 256. With n < 1, [NewEngine]
// returns an error wrapping [ErrInvalidConfig].
func WithEmbedBatch(n int) EngineOption {
	return engineOption(func(o *engineOptions) {
		if o.bad.check(n >= 1, "WithEmbedBatch", n, "at least 1") {
			o.embedBatch = n
		}
	})
}

// WithTurnCacheSize sets how many turns' results are kept for reuse (least
// recently used dropped first): at least 0; the default is 64, and 0 turns
// the per-turn cache off. With n < 0, [NewEngine] returns an error wrapping
// [ErrInvalidConfig].
func WithTurnCacheSize(n int) EngineOption {
	return engineOption(func(o *engineOptions) {
		if o.bad.check(n >= 0, "WithTurnCacheSize", n, "at least 0") {
			o.turnCacheSize = n
		}
	})
}

// WithParallelism sets how many goroutines a search over a large index
// uses, for an [Engine] and an [Index] alike: at least 1; the default is
// runtime.GOMAXPROCS(0). With n < 1, [NewEngine] and [NewIndex] return an
// error wrapping [ErrInvalidConfig].
func WithParallelism(n int) Option {
	return sharedOption(func(o *indexOptions) {
		if o.bad.check(n >= 1, "WithParallelism", n, "at least 1") {
			o.parallelism = n
		}
	})
}

// indexOnlyOption is an option only an index takes.
type indexOnlyOption func(*indexOptions)

func (f indexOnlyOption) applyIndex(o *indexOptions) { f(o) }

// WithQuantized makes [NewIndex] build a quantised index when on is true:
// an int8 copy of each vector (one scale per vector) is scanned with SIMD
// integer dot products — a quarter of the bytes of the float32 vectors —
// and the best candidates (4 per result wanted, at least 40) are re-ranked
// with their float32 vectors, so scores are exact cosine similarities and
// the results are the exact search's whenever the true best vectors are
// among the candidates (the recall is measured by membench). The Index
// keeps the float32 vectors in memory for the re-rank. The engine's
// quantised mode is [Config.Quantized].
func WithQuantized(on bool) IndexOption {
	return indexOnlyOption(func(o *indexOptions) { o.quantized = on })
}

// WithBuildProgress has an index build report its embedding progress to
// fn, so that a command can show a progress bar while a first run or a new
// embedding model embeds many memories. When a build has texts to embed,
// fn is called with (0, total) before the first Embed call and with (done,
// total) after each batch, done reaching total when every batch succeeded;
// a build that embeds nothing (a warm cache) does not call it. If the
// embedder's vectors turn out to have changed dimension, the cache is
// emptied and the count starts over with the new total. fn is called on the
// goroutine of the build, never concurrently with itself, and must return
// quickly. A nil fn reports nothing (the default).
func WithBuildProgress(fn func(done, total int)) EngineOption {
	return engineOption(func(o *engineOptions) { o.progress = fn })
}

// WithRetryDelay sets how long the engine waits before rebuilding again
// after a build that could not embed every memory (the embedder failed):
// more than 0; the default is 30s. Each further incomplete build doubles
// the wait, up to 16 times d. With d ≤ 0, [NewEngine] returns an error
// wrapping [ErrInvalidConfig].
func WithRetryDelay(d time.Duration) EngineOption {
	return engineOption(func(o *engineOptions) {
		if o.bad.check(d > 0, "WithRetryDelay", d, "more than 0") {
			o.retryDelay = d
		}
	})
}
