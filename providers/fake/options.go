package fake

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrInvalidConfig is wrapped by the error [NewLLM] and [NewEmbedder]
// return when an option is given a value out of range, and by the error of
// [LLM.FailNext] and [Embedder.FailNext] for a negative count or a nil
// error, for example
//
//	fake: invalid config: WithDimension is 0, want 1–65536
//
// The message names every bad option, the value given and the values
// allowed. No option panics, and no value is clamped.
var ErrInvalidConfig = errors.New("invalid config")

// maxDimension is the largest vector length [WithDimension] accepts: far
// above any real embedding model's, and small enough that a batch of
// vectors can always be allocated.
const maxDimension = 1 << 16

// LLMOption configures an [LLM] made by [NewLLM].
type LLMOption interface {
	applyLLM(*LLM) error
}

// EmbedderOption configures an [Embedder] made by [NewEmbedder].
type EmbedderOption interface {
	applyEmbedder(*Embedder) error
}

// Option configures either fake: it is both an [LLMOption] and an
// [EmbedderOption].
type Option interface {
	LLMOption
	EmbedderOption
}

type llmOption func(*LLM) error

func (f llmOption) applyLLM(l *LLM) error { return f(l) }

type embedderOption func(*Embedder) error

func (f embedderOption) applyEmbedder(e *Embedder) error { return f(e) }

type commonOption func(*common) error

func (f commonOption) applyLLM(l *LLM) error           { return f(&l.common) }
func (f commonOption) applyEmbedder(e *Embedder) error { return f(&e.common) }

// badValue is the problem an option reports: "<option> is <value>, want
// <allowed>".
func badValue(option string, value any, want string) error {
	return fmt.Errorf("%s is %v, want %s", option, value, want)
}

// invalid returns an error wrapping ErrInvalidConfig that lists msgs, or nil
// when there are none.
func invalid(msgs ...string) error {
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("fake: %w: %s", ErrInvalidConfig, strings.Join(msgs, "; "))
}

// failNextProblems lists what is wrong with a count and an error given to
// the failure scheduler called name.
func failNextProblems(name string, n int, err error) []string {
	var msgs []string
	if n < 0 {
		msgs = append(msgs, badValue(name+" count", n, "at least 0").Error())
	}
	if err == nil {
		msgs = append(msgs, badValue(name+" error", "nil", "an error to fail with").Error())
	}
	return msgs
}

// WithLatency delays every call — for the [Embedder], every internal batch —
// by d, at least 0 (the default, no delay). The delay ends early when the
// call's context ends, and the call then returns the context's error.
func WithLatency(d time.Duration) Option {
	return commonOption(func(c *common) error {
		if d < 0 {
			return badValue("WithLatency", d, "at least 0")
		}
		c.latency = d
		return nil
	})
}

// WithFailNext makes the first n calls fail with err; see [LLM.FailNext] and
// [Embedder.FailNext]. n must be at least 0 (0 schedules nothing) and err
// must not be nil.
func WithFailNext(n int, err error) Option {
	return commonOption(func(c *common) error {
		if msgs := failNextProblems("WithFailNext", n, err); len(msgs) > 0 {
			return errors.New(strings.Join(msgs, "; "))
		}
		c.scheduleFailures(n, err)
		return nil
	})
}

// WithReplies queues replies: each call takes the next one, before the
// reply function (if any) is consulted. See [LLM.Enqueue].
func WithReplies(texts ...string) LLMOption {
	texts = append([]string(nil), texts...)
	return llmOption(func(l *LLM) error { l.queue = append(l.queue, texts...); return nil })
}

// WithReplyFunc answers every call that finds the reply queue empty by
// calling fn. fn is called without any lock held, possibly concurrently,
// and receives a copy of the request. A nil fn means no reply function.
func WithReplyFunc(fn ReplyFunc) LLMOption {
	return llmOption(func(l *LLM) error { l.replyFunc = fn; return nil })
}

// WithModel sets the model name reported in responses to requests that do
// not name one: not empty; the default is "fake-llm".
func WithModel(name string) LLMOption {
	return llmOption(func(l *LLM) error {
		if name == "" {
			return badValue("WithModel", `""`, "a non-empty name")
		}
		l.model = name
		return nil
	})
}

// WithDimension sets the length of the vectors: 1–65536; the default is
// [DefaultDimension].
func WithDimension(n int) EmbedderOption {
	return embedderOption(func(e *Embedder) error {
		if n < 1 || n > maxDimension {
			return badValue("WithDimension", n, fmt.Sprintf("1–%d", maxDimension))
		}
		e.dim = n
		return nil
	})
}

// WithMaxBatch sets how many texts one internal call embeds: at least 0;
// 0, the default, means no limit. A larger input is split into several
// calls, each counted by [Embedder.Calls] and each subject to latency and
// failures.
func WithMaxBatch(n int) EmbedderOption {
	return embedderOption(func(e *Embedder) error {
		if n < 0 {
			return badValue("WithMaxBatch", n, "at least 0 (0 means no limit)")
		}
		e.maxBatch = n
		return nil
	})
}
