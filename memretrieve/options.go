package memretrieve

import (
	"fmt"
	"runtime"
	"time"

	"github.com/rs/zerolog"
)

// Option configures an [Engine].
type Option func(*options)

type options struct {
	log            zerolog.Logger
	cacheDir       string
	embedBatch     int
	turnCacheSize  int
	parallelism    int
	retryDelay     time.Duration
	buildCallLimit time.Duration
}

func defaultOptions() options {
	return options{
		log:            zerolog.Nop(),
		embedBatch:     256,
		turnCacheSize:  64,
		parallelism:    runtime.GOMAXPROCS(0),
		retryDelay:     30 * time.Second,
		buildCallLimit: 2 * time.Minute,
	}
}

// WithLogger sets the logger. The engine logs one warning when it is
// disabled, warnings for failed index builds and unusable cache files, and
// the reason a turn got no memories at debug level. The default logs
// nothing.
func WithLogger(l zerolog.Logger) Option { return func(o *options) { o.log = l } }

// WithCacheDir keeps the embedding cache in dir (created if needed, with a
// .gitignore that ignores everything in it) for memories of every scope.
// Without it the cache lives in the .cache folder of each scope's memory
// folder when the store has folders (a [memcore.FileStore] does, see
// [ScopeDirs]), and in memory only otherwise.
func WithCacheDir(dir string) Option { return func(o *options) { o.cacheDir = dir } }

// WithEmbedBatch sets how many memory texts an index build sends in one
// Embed call; the default is 256. It panics if n < 1.
func WithEmbedBatch(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("memretrieve: WithEmbedBatch: batch size must be at least 1, got %d", n))
	}
	return func(o *options) { o.embedBatch = n }
}

// WithTurnCacheSize sets how many turns' results are kept for reuse (least
// recently used dropped first); the default is 64, and 0 turns the per-turn
// cache off. It panics if n < 0.
func WithTurnCacheSize(n int) Option {
	if n < 0 {
		panic(fmt.Sprintf("memretrieve: WithTurnCacheSize: size must not be negative, got %d", n))
	}
	return func(o *options) { o.turnCacheSize = n }
}

// WithParallelism sets how many goroutines a search over a large index
// uses; the default is runtime.GOMAXPROCS(0). It panics if n < 1.
func WithParallelism(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("memretrieve: WithParallelism: need at least 1 goroutine, got %d", n))
	}
	return func(o *options) { o.parallelism = n }
}

// WithRetryDelay sets how long the engine waits before rebuilding again
// after a build that could not embed every memory (the embedder failed);
// each further incomplete build doubles the wait, up to 16 times d. The
// default is 30s. It panics if d ≤ 0.
func WithRetryDelay(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("memretrieve: WithRetryDelay: delay must be positive, got %v", d))
	}
	return func(o *options) { o.retryDelay = d }
}
