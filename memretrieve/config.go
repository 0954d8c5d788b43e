package memretrieve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// HypothesisMode chooses what the engine embeds as its search queries.
type HypothesisMode string

// The hypothesis modes.
const (
	// ModeLLM asks the hypothesis model for HypothesisCount short
	// sentences written the way a stored memory would be (HyDE), and
	// searches with each of them. It is the default.
	ModeLLM HypothesisMode = "llm"
	// ModeIdentity embeds the conversation window itself (as capped) as
	// the single query, with no LLM call. It serves offline use, demos and
	// evaluation (HyDE against direct search); it is chosen explicitly and
	// is never a fallback for a failing hypothesis model.
	ModeIdentity HypothesisMode = "identity"
)

// Valid reports whether m is [ModeLLM] or [ModeIdentity].
func (m HypothesisMode) Valid() bool { return m == ModeLLM || m == ModeIdentity }

// StaleMode says what a turn does with a memory that Config.StaleCheck
// finds outdated.
type StaleMode string

// The stale modes.
const (
	// StaleLabel injects the memory with a note saying why it may be
	// outdated ("may be outdated: internal/db/queries.go no longer
	// exists"). It is the default; an empty StaleMode means it too.
	StaleLabel StaleMode = "label"
	// StaleDrop leaves the memory out of the turn.
	StaleDrop StaleMode = "drop"
	// StaleIgnore does not check: the memory is injected as it is.
	StaleIgnore StaleMode = "ignore"
)

// Valid reports whether m is empty or one of the stale modes.
func (m StaleMode) Valid() bool {
	return m == "" || m == StaleLabel || m == StaleDrop || m == StaleIgnore
}

// StaleChecker says why a memory may be outdated — the code it names moved
// or went away. Package memcore/anchor's *Checker is one.
type StaleChecker interface {
	// Stale returns why m may be outdated, or "" when nothing says so. It
	// is called for each memory a turn is about to inject, with the
	// turn's context, so it must be cheap, and safe for concurrent use.
	Stale(ctx context.Context, m *memcore.MemoryFile) string
}

// Config holds the retrieval settings; each field's comment names the
// settings key it is read from, if any, its default and its range. Start
// from [DefaultConfig] and change what you need: zero values are not
// defaults (HopDepth 0 and MinScore 0 are meaningful), and [NewEngine]
// rejects every out-of-range field instead of clamping it.
type Config struct {
	// HypothesisModel names the model of the hypothesis provider
	// (memory.retrieval_model); empty means the provider's default.
	HypothesisModel string
	// Mode is ModeLLM (default) or ModeIdentity.
	Mode HypothesisMode
	// HypothesisCount is how many hypotheses the model is asked for
	// (memory.retrieval_hypothesis_count): default 5, range 1–10.
	HypothesisCount int
	// TopK is how many memories each query takes from the vector index
	// before the union (memory.retrieval_top_k): default 10, range 1–100.
	TopK int
	// HopDepth is how many related-edge hops graph expansion follows from
	// each search hit (memory.retrieval_hop_depth): default 1, range 0–3;
	// 0 turns expansion off.
	HopDepth int
	// MaxMemories caps the memories of a turn after graph expansion,
	// highest score first: default 30, range 1–1000.
	MaxMemories int
	// MinScore drops search hits whose cosine similarity is below it
	// (memory.retrieval_min_score): default 0, range -1–1; -1 keeps
	// everything.
	MinScore float64
	// InjectionTokenBudget bounds the injection block, in
	// memcore.EstimateTokens tokens (memory.injection_token_budget):
	// default 2000, at least 1.
	InjectionTokenBudget int
	// WindowTokenBudget bounds the conversation window sent to the
	// hypothesis model (or embedded, in ModeIdentity), newest text kept:
	// default 4000, range 1–1,000,000.
	WindowTokenBudget int
	// Timeout bounds a whole Retrieve call (memory.retrieval_timeout):
	// default 2s, more than 0. With the lexical index on, the model calls
	// stop a tenth of it (at most 200ms) early and the turn is answered
	// from the lexical index; otherwise on expiry the turn gets no
	// memories.
	Timeout time.Duration
	// Quantized makes the index quantised (memory.retrieval_quantized):
	// default false. The index then holds each vector as int8 values with
	// one scale per vector — a quarter of the memory of the float32
	// vectors — scans them with SIMD integer dot products, and re-ranks the
	// best candidates (4 per result, at least 40) with their float32
	// vectors, so scores stay exact cosine similarities and the results are
	// the exact search's whenever the best memories are among the
	// candidates (membench measures how often: quantized_recall_at_10). The
	// candidates' float32 vectors are read from the on-disk embedding
	// cache, so they are not kept in memory — except where there is no
	// cache on disk (a store without folders such as memcore.MemStore, and
	// no WithCacheDir), where they stay in memory beside the int8 copy.
	Quantized bool
	// QueryTokenLimit bounds each text the turn sends to the embedder as a
	// query, in memcore.EstimateTokens tokens (four characters each), newest
	// text kept (memory.retrieval_query_token_limit): default 512, range
	// 1–1,000,000. Set it to the embedding model's input limit when that is
	// lower — with a margin, since a model's own tokens are often shorter
	// than four characters in code — and higher to let the window query
	// see more of a long conversation. Memories are embedded whole.
	QueryTokenLimit int
	// LexicalWeight is the weight of the lexical (BM25) ranking against the
	// vector ranking's 1 when the two are fused
	// (memory.retrieval_lexical_weight): default 1, range 0–10; 0 turns
	// the lexical index off, and scores are then cosine similarities.
	LexicalWeight float64
	// FusionK is the constant k of reciprocal-rank fusion: a memory ranked
	// r-th by a ranking gains weight/(k + r) (memory.retrieval_fusion_k).
	// A larger k flattens the difference between the first ranks and the
	// later ones. Default 60, range 1–1000.
	FusionK int
	// StaleCheck, when set, is asked about each memory a turn is about to
	// inject (after graph expansion and the MaxMemories cap, before the
	// injection budget); nil checks nothing. The host fills it — with
	// memcore/anchor's *Checker for a repository — so the engine needs no
	// file system or git of its own.
	StaleCheck StaleChecker
	// Stale is what a turn does with a memory StaleCheck finds outdated
	// (memory.stale): StaleLabel (the default; "" means it too) injects it
	// with a note, StaleDrop leaves it out, StaleIgnore does not check.
	Stale StaleMode
}

// DefaultConfig returns the default settings: ModeLLM, 5 hypotheses, the
// top 10 memories per query, 1 hop of graph expansion, at most 30
// memories, a minimum score of 0, an injection budget of 2000 tokens, a
// window of 4000 tokens, a timeout of 2s, queries of at most 512 tokens,
// and the lexical ranking fused with the vector ranking at equal weight
// with k = 60; outdated memories labelled (when the host sets a
// StaleCheck). HypothesisModel is empty: the provider's default model.
func DefaultConfig() Config {
	return Config{
		Mode:                 ModeLLM,
		HypothesisCount:      5,
		TopK:                 10,
		HopDepth:             1,
		MaxMemories:          30,
		MinScore:             0,
		InjectionTokenBudget: 2000,
		WindowTokenBudget:    4000,
		Timeout:              2 * time.Second,
		QueryTokenLimit:      512,
		LexicalWeight:        1,
		FusionK:              60,
		Stale:                StaleLabel,
	}
}

// ErrInvalidConfig is wrapped by every error [Config.Validate],
// [NewEngine] and [NewIndex] return for settings or options out of range.
var ErrInvalidConfig = errors.New("invalid retrieval config")

// FieldError is one bad field of a [Config], or one option given a value
// out of range.
type FieldError struct {
	// Field is the Config field, for example "TopK", the option, for
	// example "WithParallelism", or the argument of NewEngine, for example
	// "NewEngine's embedder".
	Field string
	// Value is the rejected value.
	Value any
	// Want describes the accepted values, for example "1–100".
	Want string
}

// ConfigError lists every missing argument of [NewEngine], every bad field
// of a [Config] and every option given a value out of range: arguments
// first, then Config fields, then options in the order they were passed. It
// matches [ErrInvalidConfig] with errors.Is, and [ErrNoStore] too when the
// store is missing.
type ConfigError struct {
	Fields []FieldError
}

// Error implements error. It names each bad field or option, its value and
// the values it accepts.
func (e *ConfigError) Error() string {
	parts := make([]string, len(e.Fields))
	configField := false
	for i, f := range e.Fields {
		format := "%s is %v, want %s"
		switch f.Value.(type) {
		case HypothesisMode, StaleMode:
			format = "%s is %q, want %s"
		}
		parts[i] = fmt.Sprintf(format, f.Field, f.Value, f.Want)
		configField = configField || !isOptionName(f.Field) && !isArgumentName(f.Field)
	}
	msg := fmt.Sprintf("memretrieve: %v: %s", ErrInvalidConfig, strings.Join(parts, "; "))
	if configField {
		msg += " (start from memretrieve.DefaultConfig() and change only what you need)"
	}
	return msg
}

// isOptionName reports whether a FieldError names an option rather than a
// Config field: options are named With…, Config fields never are.
func isOptionName(field string) bool { return strings.HasPrefix(field, "With") }

// isArgumentName reports whether a FieldError names an argument of
// NewEngine.
func isArgumentName(field string) bool { return strings.HasPrefix(field, "NewEngine's ") }

// Unwrap returns [ErrInvalidConfig], and [ErrNoStore] when the store is
// missing.
func (e *ConfigError) Unwrap() []error {
	errs := []error{ErrInvalidConfig}
	for _, f := range e.Fields {
		if f.Field == argStore {
			errs = append(errs, ErrNoStore)
		}
	}
	return errs
}

// fieldErrors collects the bad fields and options of one constructor call.
type fieldErrors []FieldError

// check records field (a Config field or an option) as bad unless ok, and
// returns ok.
func (b *fieldErrors) check(ok bool, field string, value any, want string) bool {
	if !ok {
		*b = append(*b, FieldError{Field: field, Value: value, Want: want})
	}
	return ok
}

// err returns the *ConfigError listing b, or nil when b is empty.
func (b fieldErrors) err() error {
	if len(b) == 0 {
		return nil
	}
	return &ConfigError{Fields: b}
}

// Validate reports every field of c that is out of range as a
// *[ConfigError] (which wraps [ErrInvalidConfig]), or nil.
func (c Config) Validate() error { return c.check().err() }

// check lists the fields of c that are out of range.
func (c Config) check() fieldErrors {
	var bad fieldErrors
	bad.check(c.Mode.Valid(), "Mode", c.Mode, `"llm" or "identity"`)
	bad.check(c.HypothesisCount >= 1 && c.HypothesisCount <= 10, "HypothesisCount", c.HypothesisCount, "1–10")
	bad.check(c.TopK >= 1 && c.TopK <= 100, "TopK", c.TopK, "1–100")
	bad.check(c.HopDepth >= 0 && c.HopDepth <= 3, "HopDepth", c.HopDepth, "0–3")
	bad.check(c.MaxMemories >= 1 && c.MaxMemories <= 1000, "MaxMemories", c.MaxMemories, "1–1000")
	bad.check(!math.IsNaN(c.MinScore) && c.MinScore >= -1 && c.MinScore <= 1, "MinScore", c.MinScore, "-1–1")
	bad.check(c.InjectionTokenBudget >= 1, "InjectionTokenBudget", c.InjectionTokenBudget, "at least 1")
	bad.check(c.WindowTokenBudget >= 1 && c.WindowTokenBudget <= 1_000_000, "WindowTokenBudget", c.WindowTokenBudget, "1–1000000")
	bad.check(c.Timeout > 0, "Timeout", c.Timeout, "more than 0")
	bad.check(c.QueryTokenLimit >= 1 && c.QueryTokenLimit <= 1_000_000, "QueryTokenLimit", c.QueryTokenLimit, "1–1000000")
	bad.check(!math.IsNaN(c.LexicalWeight) && c.LexicalWeight >= 0 && c.LexicalWeight <= 10, "LexicalWeight", c.LexicalWeight, "0–10")
	bad.check(c.FusionK >= 1 && c.FusionK <= 1000, "FusionK", c.FusionK, "1–1000")
	bad.check(c.Stale.Valid(), "Stale", c.Stale, `"label", "drop" or "ignore"`)
	return bad
}
