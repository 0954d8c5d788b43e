package memcapture

import (
	"errors"
	"fmt"
	"strings"
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
// value out of range makes NewPipeline fail with an error wrapping
// [ErrInvalidConfig]; no option panics, and a nil Option is ignored.
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
		retry:                 memcore.RetryPolicy{}, // the zero policy is memcore's default
		maxContentBytes:       DefaultMaxContentBytes,
		maxMemoriesPerPass:    DefaultMaxMemoriesPerPass,
		maxPendingCompactions: DefaultMaxPendingCompactions,
		replyTokens:           DefaultReplyTokens,
		clock:                 time.Now,
	}
}

// badValue is the problem an option or a constructor argument reports:
// "<setting> is <value>, want <allowed>".
func badValue(setting string, value any, want string) error {
	return fmt.Errorf("%s is %v, want %s", setting, value, want)
}

// setAtLeast sets *dst to n, the value given to option setting, if n is at
// least least, and otherwise reports the problem.
func setAtLeast(dst *int, setting string, n, least int) error {
	if n < least {
		return badValue(setting, n, fmt.Sprintf("at least %d", least))
	}
	*dst = n
	return nil
}

// applyOptions applies opts to c and returns, in one error wrapping
// ErrInvalidConfig, the problems given and every problem the options
// report; nil if there are none.
func applyOptions[C any, O ~func(*C) error](c *C, opts []O, problems ...error) error {
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(c); err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.Error()
	}
	return fmt.Errorf("memcapture: %w: %s", ErrInvalidConfig, strings.Join(msgs, "; "))
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
			return badValue("WithEmbedder", "nil", "a memcore.Embedder")
		}
		c.embedder = e
		return nil
	}
}

// WithWindowTokens sets the budget, in estimated tokens (see
// [memcore.WindowTokens]), of the conversation window sent to the
// classifier. A longer conversation loses whole oldest messages in steps of
// half the budget, so the window holds between about n/2 and n tokens and
// its beginning stays the same from one pass to the next until the
// conversation has grown by another n/2 (consecutive prompts then share
// that prefix, which providers' prompt caches bill for less). It must be at
// least 1; the default is [DefaultWindowTokens].
func WithWindowTokens(n int) Option {
	return func(c *config) error { return setAtLeast(&c.windowTokens, "WithWindowTokens", n, 1) }
}

// WithExistingTokens sets the budget, in estimated tokens, of each of the
// two lists of existing memories in the classifier prompt: the list pinned
// for the window's beginning, before the conversation, and the memories
// written since it was pinned, after it (when those no longer fit, the
// list is chosen anew). 0 lists none (the classifier then cannot
// supersede or link). It must not be negative; the default is
// [DefaultExistingTokens].
func WithExistingTokens(n int) Option {
	return func(c *config) error { return setAtLeast(&c.existingTokens, "WithExistingTokens", n, 0) }
}

// WithPassTimeout sets the deadline of one capture pass: listing the store,
// ranking, the classifier calls and their retries. It must be positive; the
// default is [DefaultPassTimeout].
func WithPassTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return badValue("WithPassTimeout", d, "more than 0")
		}
		c.passTimeout = d
		return nil
	}
}

// WithRetryPolicy sets how transient classifier and embedder errors are
// retried within a pass (see [memcore.Retry]; zero fields take the
// defaults). Negative fields are an error. The default is the zero policy:
// 3 attempts, backoff from 200ms capped at 5s.
func WithRetryPolicy(p memcore.RetryPolicy) Option {
	return func(c *config) error {
		var bad []string
		for _, f := range []struct {
			name  string
			value any
			neg   bool
		}{
			{"MaxAttempts", p.MaxAttempts, p.MaxAttempts < 0},
			{"BaseDelay", p.BaseDelay, p.BaseDelay < 0},
			{"MaxDelay", p.MaxDelay, p.MaxDelay < 0},
		} {
			if f.neg {
				bad = append(bad, badValue("WithRetryPolicy "+f.name, f.value, "at least 0").Error())
			}
		}
		if len(bad) > 0 {
			return errors.New(strings.Join(bad, "; "))
		}
		c.retry = p
		return nil
	}
}

// WithMaxContentBytes sets the size limit of one memory's content; a longer
// memory from the classifier is skipped. It must be at least 1; the default
// is [DefaultMaxContentBytes].
func WithMaxContentBytes(n int) Option {
	return func(c *config) error { return setAtLeast(&c.maxContentBytes, "WithMaxContentBytes", n, 1) }
}

// WithMaxMemoriesPerPass sets how many memories one classifier reply may
// produce; items beyond it are skipped and counted as invalid. It must be
// at least 1; the default is [DefaultMaxMemoriesPerPass].
func WithMaxMemoriesPerPass(n int) Option {
	return func(c *config) error { return setAtLeast(&c.maxMemoriesPerPass, "WithMaxMemoriesPerPass", n, 1) }
}

// WithMaxPendingCompactions bounds the queue of compaction triggers waiting
// for the pipeline; a trigger beyond it is dropped, counted and logged. It
// must be at least 1; the default is [DefaultMaxPendingCompactions].
func WithMaxPendingCompactions(n int) Option {
	return func(c *config) error { return setAtLeast(&c.maxPendingCompactions, "WithMaxPendingCompactions", n, 1) }
}

// WithReplyTokens sets the reply limit (MaxTokens) of a classifier call. It
// must be at least 1; the default is [DefaultReplyTokens].
func WithReplyTokens(n int) Option {
	return func(c *config) error { return setAtLeast(&c.replyTokens, "WithReplyTokens", n, 1) }
}

// WithClock sets the clock that timestamps new memories (tests use a fixed
// one). The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return badValue("WithClock", "nil", "a clock function")
		}
		c.clock = now
		return nil
	}
}

// ObserverOption configures an [Observer] made by [NewObserver]. An option
// given a value out of range makes NewObserver fail with an error wrapping
// [ErrInvalidConfig]; no option panics, and a nil ObserverOption is ignored.
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
			return badValue("WithCadence", n, fmt.Sprintf("1–%d", MaxCadence))
		}
		c.cadence = n
		return nil
	}
}
