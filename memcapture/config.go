package memcapture

import (
	"cmp"
	"fmt"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

// Defaults of the capture settings, what a zero field of [Config] means.
const (
	// DefaultWindowTokens is the default budget of the conversation window
	// sent to the classifier ([Config].WindowTokens).
	DefaultWindowTokens = 8000
	// DefaultExistingTokens is the default budget of the list of existing
	// memories in the classifier prompt ([Config].ExistingTokens).
	DefaultExistingTokens = 2000
	// DefaultPassTimeout is the default deadline of one capture pass
	// ([Config].PassTimeout).
	DefaultPassTimeout = 60 * time.Second
	// DefaultMaxContentBytes is the default size limit of one memory's
	// content ([Config].MaxContentBytes).
	DefaultMaxContentBytes = 4096
	// DefaultMaxMemoriesPerPass is the default number of memories one
	// classifier reply may produce ([Config].MaxMemoriesPerPass).
	DefaultMaxMemoriesPerPass = 20
	// DefaultMaxPendingCompactions is the default bound of the compaction
	// queue ([Config].MaxPendingCompactions).
	DefaultMaxPendingCompactions = 1024
	// DefaultReplyTokens is the default reply limit of a classifier call
	// ([Config].ReplyTokens).
	DefaultReplyTokens = 2048
	// DefaultCadence is the default number of turns per capture pass
	// ([Config].Cadence).
	DefaultCadence = 1
	// MaxCadence is the largest [Config].Cadence.
	MaxCadence = 10
)

// Config holds the capture settings of a [Pipeline] and of its
// [Observer]s, given to [NewPipeline]. Each field's comment names the
// settings key it is read from, if any, its default and its range.
//
// A zero field means its default, so Config{} is [DefaultConfig]: no field
// turns something off by being left out. Where "none" is a setting, a
// negative value says it (ExistingTokens). Nothing is clamped: a field out
// of range makes NewPipeline fail, naming every such field.
type Config struct {
	// ClassifierModel names the classifier's model for each request
	// (memory.classifier_model); empty means the provider's default.
	ClassifierModel string
	// Cadence makes the pipeline's [Observer] trigger a capture pass every
	// Cadence completed turns (memory.cadence_turns): 1–10
	// ([MaxCadence]); 0 means [DefaultCadence], every turn. A host that
	// calls [Pipeline.Enqueue] itself decides its own cadence.
	Cadence int
	// Rebuild, when set, is called once after each pass that wrote at
	// least one memory. It must not block: the retrieval engine's
	// TriggerRebuild fits.
	Rebuild func()
	// Embedder, when set, ranks the existing memories listed in the
	// classifier prompt by similarity to the window. Each memory is
	// embedded once per process (vectors are kept in memory keyed by the
	// embedder's Model and the content's SHA-256); an embedder failure
	// falls back to newest first for that pass. Nil lists them newest
	// first.
	Embedder memcore.Embedder
	// Logger receives passes, skipped items, failures and redactions.
	// Secrets are never logged. Its zero value logs nothing (the default).
	Logger zerolog.Logger
	// Clock timestamps new memories (tests use a fixed one); nil means
	// time.Now.
	Clock func() time.Time
	// WindowTokens is the budget, in estimated tokens (see
	// memcore.WindowTokens), of the conversation window sent to the
	// classifier: at least 1; 0 means [DefaultWindowTokens]. A longer
	// conversation loses whole oldest messages in steps of half the
	// budget, so the window holds between about WindowTokens/2 and
	// WindowTokens tokens and its beginning stays the same from one pass
	// to the next until the conversation has grown by another half (the
	// prompts then share that prefix, which providers' prompt caches bill
	// for less).
	WindowTokens int
	// ExistingTokens is the budget, in estimated tokens, of each of the
	// two lists of existing memories in the classifier prompt: the list
	// pinned for the window's beginning, before the conversation, and the
	// memories written since it was pinned, after it (when those no longer
	// fit, the list is chosen anew). 0 means [DefaultExistingTokens]; a
	// negative value lists none (the classifier then cannot supersede or
	// link).
	ExistingTokens int
	// PassTimeout is the deadline of one capture pass: listing the store,
	// ranking, the classifier calls and their retries. More than 0; 0
	// means [DefaultPassTimeout].
	PassTimeout time.Duration
	// Retry says how transient classifier and embedder errors are retried
	// within a pass (see memcore.Retry; a zero field takes memcore's
	// default: 3 attempts, backoff from 200ms capped at 5s). A negative
	// field is an error.
	Retry memcore.RetryPolicy
	// MaxContentBytes is the size limit of one memory's content; a longer
	// memory from the classifier is skipped. At least 1; 0 means
	// [DefaultMaxContentBytes].
	MaxContentBytes int
	// MaxMemoriesPerPass is how many memories one classifier reply may
	// produce; items beyond it are skipped and counted as invalid. At
	// least 1; 0 means [DefaultMaxMemoriesPerPass].
	MaxMemoriesPerPass int
	// MaxPendingCompactions bounds the queue of compaction triggers
	// waiting for the pipeline; a trigger beyond it is dropped, counted and
	// logged. At least 1; 0 means [DefaultMaxPendingCompactions].
	MaxPendingCompactions int
	// ReplyTokens is the reply limit (MaxTokens) of a classifier call. At
	// least 1; 0 means [DefaultReplyTokens].
	ReplyTokens int
	// Review decides which new memories wait for a person's review
	// (memory.review; see memcore.Screen): memcore.ReviewUntrusted, the
	// default ("" means it), holds those the quarantine rules hold — text
	// that reads like an instruction to the agent's tools, text quoting
	// tool output, memories not in the user's own words;
	// memcore.ReviewAll holds every memory; memcore.ReviewOff holds only
	// the instruction-like ones.
	Review memcore.ReviewMode
	// HoldCheck, when set, is asked about each memory in force before the
	// classifier is shown it among the existing memories: one it holds (a
	// reason is returned) is left out, as a memory waiting for review is.
	// A host sets it to keep out what it does not trust although its file
	// says it is in force; the forgemem command holds a memory a
	// repository committed that reads like an instruction to the agent's
	// tools, until the user approves it. Nil (the default): every memory
	// in force is shown.
	HoldCheck HoldChecker
}

// HoldChecker decides which memories in force capture does not show the
// classifier (see [Config].HoldCheck). Hold returns why it holds m, or ""
// when it does not; it must be safe for concurrent use.
type HoldChecker interface {
	Hold(m *memcore.MemoryFile) string
}

// DefaultConfig returns the default capture settings, every field filled
// in: the provider's default model, a pass every turn, no rebuild callback
// and no embedder, no logging, time.Now, the Default… budgets and limits of
// this package, and review of the quarantined memories
// (memcore.ReviewUntrusted); no HoldCheck.
func DefaultConfig() Config {
	return Config{
		Review:                memcore.ReviewUntrusted,
		Cadence:               DefaultCadence,
		Clock:                 time.Now,
		WindowTokens:          DefaultWindowTokens,
		ExistingTokens:        DefaultExistingTokens,
		PassTimeout:           DefaultPassTimeout,
		MaxContentBytes:       DefaultMaxContentBytes,
		MaxMemoriesPerPass:    DefaultMaxMemoriesPerPass,
		MaxPendingCompactions: DefaultMaxPendingCompactions,
		ReplyTokens:           DefaultReplyTokens,
	}
}

// Validate reports every field of c out of range at once, in a
// *memcore.ConfigError (which matches [ErrInvalidConfig]), or returns nil.
func (c Config) Validate() error {
	var bad memcore.FieldErrors
	c.check(&bad)
	return bad.Err("memcapture", "")
}

// check records every field of c out of range in bad.
func (c Config) check(bad *memcore.FieldErrors) {
	bad.Check(c.Cadence >= 0 && c.Cadence <= MaxCadence, "Cadence", c.Cadence,
		fmt.Sprintf("1–%d (0 means %d)", MaxCadence, DefaultCadence))
	atLeast1 := func(field string, n, def int) {
		bad.Check(n >= 0, field, n, fmt.Sprintf("at least 1 (0 means %d)", def))
	}
	atLeast1("WindowTokens", c.WindowTokens, DefaultWindowTokens)
	bad.Check(c.PassTimeout >= 0, "PassTimeout", c.PassTimeout, fmt.Sprintf("more than 0 (0 means %v)", DefaultPassTimeout))
	bad.Check(c.Retry.MaxAttempts >= 0, "Retry.MaxAttempts", c.Retry.MaxAttempts, "at least 0 (0 means memcore's default)")
	bad.Check(c.Retry.BaseDelay >= 0, "Retry.BaseDelay", c.Retry.BaseDelay, "at least 0 (0 means memcore's default)")
	bad.Check(c.Retry.MaxDelay >= 0, "Retry.MaxDelay", c.Retry.MaxDelay, "at least 0 (0 means memcore's default)")
	atLeast1("MaxContentBytes", c.MaxContentBytes, DefaultMaxContentBytes)
	atLeast1("MaxMemoriesPerPass", c.MaxMemoriesPerPass, DefaultMaxMemoriesPerPass)
	atLeast1("MaxPendingCompactions", c.MaxPendingCompactions, DefaultMaxPendingCompactions)
	atLeast1("ReplyTokens", c.ReplyTokens, DefaultReplyTokens)
	bad.Check(c.Review == "" || c.Review.Valid(), "Review", string(c.Review), `untrusted, all or off ("" means untrusted)`)
}

// config is a validated Config with its defaults applied, as the pipeline
// uses it.
type config struct {
	model                 string
	cadence               int
	rebuild               func()
	log                   zerolog.Logger
	embedder              memcore.Embedder
	windowTokens          int
	existingTokens        int // 0 lists none
	passTimeout           time.Duration
	retry                 memcore.RetryPolicy
	maxContentBytes       int
	maxMemoriesPerPass    int
	maxPendingCompactions int
	replyTokens           int
	clock                 func() time.Time
	review                memcore.ReviewMode
	holdCheck             HoldChecker
}

// resolve returns c, validated, with every zero field replaced by its
// default.
func (c Config) resolve() config {
	existing := cmp.Or(c.ExistingTokens, DefaultExistingTokens)
	if existing < 0 {
		existing = 0
	}
	clock := c.Clock
	if clock == nil {
		clock = time.Now
	}
	return config{
		model:                 c.ClassifierModel,
		cadence:               cmp.Or(c.Cadence, DefaultCadence),
		rebuild:               c.Rebuild,
		log:                   c.Logger,
		embedder:              c.Embedder,
		windowTokens:          cmp.Or(c.WindowTokens, DefaultWindowTokens),
		existingTokens:        existing,
		passTimeout:           cmp.Or(c.PassTimeout, DefaultPassTimeout),
		retry:                 c.Retry, // a zero field is memcore's default
		maxContentBytes:       cmp.Or(c.MaxContentBytes, DefaultMaxContentBytes),
		maxMemoriesPerPass:    cmp.Or(c.MaxMemoriesPerPass, DefaultMaxMemoriesPerPass),
		maxPendingCompactions: cmp.Or(c.MaxPendingCompactions, DefaultMaxPendingCompactions),
		replyTokens:           cmp.Or(c.ReplyTokens, DefaultReplyTokens),
		clock:                 clock,
		review:                cmp.Or(c.Review, memcore.ReviewUntrusted),
		holdCheck:             c.HoldCheck,
	}
}
