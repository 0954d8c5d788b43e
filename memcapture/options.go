package memcapture

import (
	"fmt"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

// Defaults of the pipeline settings.
const (
	// DefaultWindowTokens is the default budget of the conversation window
	// sent to the classifier (see [WithWindowTokens]).
	DefaultWindowTokens = 8000
	// DefaultExistingTokens is the default budget of the list of existing
	// memories in the classifier prompt (see [WithExistingTokens]).
	DefaultExistingTokens = 2000
	// DefaultPassTimeout is the default deadline of one capture pass (see
	// [WithPassTimeout]).
	DefaultPassTimeout = 60 * time.Second
	// DefaultMaxContentBytes is the default size limit of one memory's
	// content (see [WithMaxContentBytes]).
	DefaultMaxContentBytes = 4096
	// DefaultMaxMemoriesPerPass is the default number of memories one
	// classifier reply may produce (see [WithMaxMemoriesPerPass]).
	DefaultMaxMemoriesPerPass = 20
	// DefaultMaxPendingCompactions is the default bound of the compaction
	// queue (see [WithMaxPendingCompactions]).
	DefaultMaxPendingCompactions = 1024
	// DefaultReplyTokens is the default reply limit of a classifier call
	// (see [WithReplyTokens]).
	DefaultReplyTokens = 2048
	// DefaultCadence is the default number of turns per capture pass (see
	// [WithCadence]).
	DefaultCadence = 1
	// MaxCadence is the largest cadence [WithCadence] accepts.
	MaxCadence = 10
)

// Option configures a [Pipeline] made by [NewPipeline]. An option given a
// value out of range makes NewPipeline fail with [ErrInvalidConfig].
type Option func(*config) error

type config struct {
	log                   zerolog.Logger
	embedder              memcore.Embedder
	windowTokens          int
	existingTokens        int
	passTimeout           time.Duration
	retry                 memcore.RetryPolicy
	maxContentBytes       int
	maxMemoriesPerPass    int
	maxPendingCompactions int
	replyTokens           int
	clock                 func() time.Time
}

func defaultConfig() config {
	return config{
		log:                   zerolog.Nop(),
		windowTokens:          DefaultWindowTokens,
		existingTokens:        DefaultExistingTokens,
		passTimeout:           DefaultPassTimeout,
		retry:                 memcore.DefaultRetryPolicy,
		maxContentBytes:       DefaultMaxContentBytes,
		maxMemoriesPerPass:    DefaultMaxMemoriesPerPass,
		maxPendingCompactions: DefaultMaxPendingCompactions,
		replyTokens:           DefaultReplyTokens,
		clock:                 time.Now,
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("memcapture: "+format+": %w", append(args, ErrInvalidConfig)...)
}

// WithLogger sets the logger for passes, skipped items, failures and
// redactions. Secrets are never logged. The default logs nothing.
func WithLogger(l zerolog.Logger) Option {
	return func(c *config) error { c.log = l; return nil }
}

// WithEmbedder ranks the existing memories listed in the classifier prompt
// by similarity to the window. Each memory is embedded once per process
// (vectors are kept in memory keyed by the embedder's Model and the
// content's SHA-256); an embedder failure falls back to newest first for
// that pass. Without an embedder the list is newest first.
func WithEmbedder(e memcore.Embedder) Option {
	return func(c *config) error {
		if e == nil {
			return invalid("WithEmbedder: the embedder is nil")
		}
		c.embedder = e
		return nil
	}
}

// WithWindowTokens sets the budget, in estimated tokens (see
// [memcore.WindowTokens]), of the conversation window sent to the
// classifier; the newest text is kept. It must be at least 1; the default is
// [DefaultWindowTokens].
func WithWindowTokens(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return invalid("window token budget %d is below 1", n)
		}
		c.windowTokens = n
		return nil
	}
}

// WithExistingTokens sets the budget, in estimated tokens, of the list of
// existing memories in the classifier prompt. 0 lists none (the classifier
// then cannot supersede or link). It must not be negative; the default is
// [DefaultExistingTokens].
func WithExistingTokens(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return invalid("existing-memories token budget %d is negative", n)
		}
		c.existingTokens = n
		return nil
	}
}

// WithPassTimeout sets the deadline of one capture pass: listing the store,
// ranking, the classifier calls and their retries. It must be positive; the
// default is [DefaultPassTimeout].
func WithPassTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return invalid("pass timeout %v is not positive", d)
		}
		c.passTimeout = d
		return nil
	}
}

// WithRetryPolicy sets how transient classifier and embedder errors are
// retried within a pass (see [memcore.Retry]; zero fields take the
// defaults). Negative fields are an error. The default is
// [memcore.DefaultRetryPolicy].
func WithRetryPolicy(p memcore.RetryPolicy) Option {
	return func(c *config) error {
		if p.MaxAttempts < 0 || p.BaseDelay < 0 || p.MaxDelay < 0 {
			return invalid("retry policy %+v has a negative field", p)
		}
		c.retry = p
		return nil
	}
}

// WithMaxContentBytes sets the size limit of one memory's content; a longer
// memory from the classifier is skipped. It must be at least 1; the default
// is [DefaultMaxContentBytes].
func WithMaxContentBytes(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return invalid("max content size %d is below 1", n)
		}
		c.maxContentBytes = n
		return nil
	}
}

// WithMaxMemoriesPerPass sets how many memories one classifier reply may
// produce; items beyond it are skipped and counted as invalid. It must be
// at least 1; the default is [DefaultMaxMemoriesPerPass].
func WithMaxMemoriesPerPass(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return invalid("max memories per pass %d is below 1", n)
		}
		c.maxMemoriesPerPass = n
		return nil
	}
}

// WithMaxPendingCompactions bounds the queue of compaction triggers waiting
// for the pipeline; a trigger beyond it is dropped, counted and logged. It
// must be at least 1; the default is [DefaultMaxPendingCompactions].
func WithMaxPendingCompactions(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return invalid("max pending compactions %d is below 1", n)
		}
		c.maxPendingCompactions = n
		return nil
	}
}

// WithReplyTokens sets the reply limit (MaxTokens) of a classifier call. It
// must be at least 1; the default is [DefaultReplyTokens].
func WithReplyTokens(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return invalid("reply token limit %d is below 1", n)
		}
		c.replyTokens = n
		return nil
	}
}

// WithClock sets the clock that timestamps new memories (tests use a fixed
// one). The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return invalid("WithClock: the clock is nil")
		}
		c.clock = now
		return nil
	}
}

// ObserverOption configures an [Observer] made by [NewObserver]. An option
// given a value out of range makes NewObserver fail with [ErrInvalidConfig].
type ObserverOption func(*observerConfig) error

type observerConfig struct {
	cadence int
}

// WithCadence makes the observer trigger a capture pass every n completed
// turns (configuration key memory.cadence_turns). n must be in 1–10
// ([MaxCadence]); the default, [DefaultCadence], is every turn.
func WithCadence(n int) ObserverOption {
	return func(c *observerConfig) error {
		if n < 1 || n > MaxCadence {
			return invalid("cadence %d is outside the range 1–%d turns", n, MaxCadence)
		}
		c.cadence = n
		return nil
	}
}
