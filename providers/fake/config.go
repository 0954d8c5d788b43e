package fake

import (
	"fmt"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// ErrInvalidConfig is memcore.ErrInvalidConfig, the one sentinel every
// configuration error of forgemem matches; it is kept here so that
// errors.Is(err, fake.ErrInvalidConfig) goes on working. [NewLLM] and
// [NewEmbedder] return a *memcore.ConfigError matching it when a field is
// out of range, and so do [LLM.FailNext] and [Embedder.FailNext] for a
// negative count or a nil error, for example
//
//	fake: invalid config: Dimension is -1, want 1–65536 (0 means 1024)
//
// The message names every bad field, the value given and the values
// allowed. Nothing is clamped.
var ErrInvalidConfig = memcore.ErrInvalidConfig

// DefaultModel is the model an [LLM] reports for requests that name none,
// unless [LLMConfig].Model says otherwise.
const DefaultModel = "fake-llm"

// maxDimension is the largest vector length an [Embedder] accepts: far
// above any real embedding model's, and small enough that a batch of
// vectors can always be allocated.
const maxDimension = 1 << 16

// LLMConfig configures an [LLM] made by [NewLLM]. A zero field means its
// default, so LLMConfig{} is [DefaultLLMConfig]: no replies scripted, no
// latency, no failures.
type LLMConfig struct {
	// Replies are queued: each call takes the next one, before ReplyFunc
	// is consulted. See [LLM.Enqueue].
	Replies []string
	// ReplyFunc answers every call that finds the reply queue empty. It is
	// called without any lock held, possibly concurrently, and receives a
	// copy of the request. Nil means no reply function.
	ReplyFunc ReplyFunc
	// Model is the model name reported in responses to requests that do
	// not name one; empty means [DefaultModel].
	Model string
	// Latency delays every call: at least 0; 0, the default, is no delay.
	// The delay ends early when the call's context ends, and the call then
	// returns the context's error.
	Latency time.Duration
	// FailNext makes the first FailNext calls fail with FailWith, as
	// [LLM.FailNext] does: at least 0; 0, the default, schedules no
	// failure.
	FailNext int
	// FailWith is the error the calls FailNext counts fail with; it must be
	// set when FailNext is more than 0.
	FailWith error
}

// DefaultLLMConfig returns the defaults of an [LLM]: the model
// [DefaultModel], and no replies, latency or failures.
func DefaultLLMConfig() LLMConfig { return LLMConfig{Model: DefaultModel} }

// Validate reports every field of c out of range at once, in a
// *memcore.ConfigError (which matches [ErrInvalidConfig]), or returns nil.
func (c LLMConfig) Validate() error {
	var bad memcore.FieldErrors
	checkCommon(&bad, c.Latency, c.FailNext, c.FailWith)
	return bad.Err("fake", "")
}

// EmbedderConfig configures an [Embedder] made by [NewEmbedder]. A zero
// field means its default, so EmbedderConfig{} is [DefaultEmbedderConfig]:
// vectors of [DefaultDimension], no batch limit, latency or failures.
type EmbedderConfig struct {
	// Dimension is the length of the vectors: 1–65536; 0 means
	// [DefaultDimension].
	Dimension int
	// MaxBatch is how many texts one internal call embeds: at least 0; 0,
	// the default, means no limit. A larger input is split into several
	// calls, each counted by [Embedder.Calls] and each subject to latency
	// and failures.
	MaxBatch int
	// Latency delays every internal call: at least 0; 0, the default, is no
	// delay. The delay ends early when the call's context ends, and the call
	// then returns the context's error.
	Latency time.Duration
	// FailNext makes the first FailNext internal calls fail with FailWith,
	// as [Embedder.FailNext] does: at least 0; 0, the default, schedules no
	// failure.
	FailNext int
	// FailWith is the error the calls FailNext counts fail with; it must be
	// set when FailNext is more than 0.
	FailWith error
}

// DefaultEmbedderConfig returns the defaults of an [Embedder]: vectors of
// [DefaultDimension], no batch limit, latency or failures.
func DefaultEmbedderConfig() EmbedderConfig { return EmbedderConfig{Dimension: DefaultDimension} }

// Validate reports every field of c out of range at once, in a
// *memcore.ConfigError (which matches [ErrInvalidConfig]), or returns nil.
func (c EmbedderConfig) Validate() error {
	var bad memcore.FieldErrors
	bad.Check(c.Dimension >= 0 && c.Dimension <= maxDimension, "Dimension", c.Dimension,
		fmt.Sprintf("1–%d (0 means %d)", maxDimension, DefaultDimension))
	bad.Check(c.MaxBatch >= 0, "MaxBatch", c.MaxBatch, "at least 0 (0 means no limit)")
	checkCommon(&bad, c.Latency, c.FailNext, c.FailWith)
	return bad.Err("fake", "")
}

// checkCommon checks the fields both configs have.
func checkCommon(bad *memcore.FieldErrors, latency time.Duration, failNext int, failWith error) {
	bad.Check(latency >= 0, "Latency", latency, "at least 0 (0 means no delay)")
	bad.Check(failNext >= 0, "FailNext", failNext, "at least 0 (0 schedules no failure)")
	bad.Check(failNext <= 0 || failWith != nil, "FailWith", memcore.Description("nil"),
		fmt.Sprintf("an error to fail the first %d calls with (FailNext is %d)", failNext, failNext))
}

// failNextErr reports what is wrong with a count and an error given to the
// failure scheduler called method ("LLM.FailNext"), or nil.
func failNextErr(method string, n int, err error) error {
	var bad memcore.FieldErrors
	bad.Check(n >= 0, method+" count", n, "at least 0")
	bad.Check(err != nil, method+" error", memcore.Description("nil"), "an error to fail with")
	return bad.Err("fake", "")
}
