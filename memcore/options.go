package memcore

import (
	"runtime"

	"github.com/rs/zerolog"
)

// Option configures a [FileStore] or a [MemStore].
type Option func(*options)

type options struct {
	log     zerolog.Logger
	workers int
}

func buildOptions(opts []Option) options {
	o := options{log: zerolog.Nop(), workers: runtime.GOMAXPROCS(0)}
	for _, opt := range opts {
		opt(&o)
	}
	if o.workers < 1 {
		o.workers = 1
	}
	return o
}

// WithLogger sets the logger for skipped files and other events worth a
// line. The default logs nothing.
func WithLogger(l zerolog.Logger) Option { return func(o *options) { o.log = l } }

// WithParallelism sets how many files a [FileStore] parses at once when
// listing. The default is runtime.GOMAXPROCS(0); values below 1 mean 1.
func WithParallelism(n int) Option { return func(o *options) { o.workers = n } }
