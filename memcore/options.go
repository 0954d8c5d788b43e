package memcore

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/rs/zerolog"
)

// Option configures a [FileStore]. An option given a value out of range
// makes [NewFileStore] fail with an error wrapping [ErrInvalidConfig]; no
// option panics, and a nil Option is ignored.
type Option func(*options) error

type options struct {
	log     zerolog.Logger
	workers int
}

// buildOptions applies opts over the defaults. Every option out of range is
// reported, in one error wrapping ErrInvalidConfig.
func buildOptions(opts []Option) (options, error) {
	o := options{log: zerolog.Nop(), workers: runtime.GOMAXPROCS(0)}
	var bad []string
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return options{}, fmt.Errorf("memcore: %w: %s", ErrInvalidConfig, strings.Join(bad, "; "))
	}
	return o, nil
}

// WithLogger sets the logger for skipped files and other events worth a
// line. The default logs nothing.
func WithLogger(l zerolog.Logger) Option {
	return func(o *options) error { o.log = l; return nil }
}

// WithParallelism sets how many files a [FileStore] parses at once when
// listing. It must be at least 1; the default is runtime.GOMAXPROCS(0).
func WithParallelism(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("WithParallelism is %d, want at least 1", n)
		}
		o.workers = n
		return nil
	}
}
