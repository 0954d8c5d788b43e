package fake

import (
	"fmt"
	"time"
)

// LLMOption configures an [LLM] made by [NewLLM].
type LLMOption interface {
	applyLLM(*LLM)
}

// EmbedderOption configures an [Embedder] made by [NewEmbedder].
type EmbedderOption interface {
	applyEmbedder(*Embedder)
}

// Option configures either fake: it is both an [LLMOption] and an
// [EmbedderOption].
type Option interface {
	LLMOption
	EmbedderOption
}

type llmOption func(*LLM)

func (f llmOption) applyLLM(l *LLM) { f(l) }

type embedderOption func(*Embedder)

func (f embedderOption) applyEmbedder(e *Embedder) { f(e) }

type commonOption func(*common)

func (f commonOption) applyLLM(l *LLM)           { f(&l.common) }
func (f commonOption) applyEmbedder(e *Embedder) { f(&e.common) }

// WithLatency delays every call — for the [Embedder], every internal batch —
// by d. The delay ends early when the call's context ends, and the call then
// returns the context's error. It panics if d is negative.
func WithLatency(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("fake: WithLatency: negative latency %v", d))
	}
	return commonOption(func(c *common) { c.latency = d })
}

// WithFailNext makes the first n calls fail with err; see [LLM.FailNext] and
// [Embedder.FailNext]. It panics if n is negative or err is nil.
func WithFailNext(n int, err error) Option {
	checkFailNext("WithFailNext", n, err)
	return commonOption(func(c *common) { c.scheduleFailures(n, err) })
}

// WithReplies queues replies: each call takes the next one, before the
// reply function (if any) is consulted. See [LLM.Enqueue].
func WithReplies(texts ...string) LLMOption {
	texts = append([]string(nil), texts...)
	return llmOption(func(l *LLM) { l.queue = append(l.queue, texts...) })
}

// WithReplyFunc answers every call that finds the reply queue empty by
// calling fn. fn is called without any lock held, possibly concurrently,
// and receives a copy of the request.
func WithReplyFunc(fn ReplyFunc) LLMOption {
	return llmOption(func(l *LLM) { l.replyFunc = fn })
}

// WithModel sets the model name reported in responses to requests that do
// not name one. The default is "fake-llm".
func WithModel(name string) LLMOption {
	return llmOption(func(l *LLM) { l.model = name })
}

// WithDimension sets the length of the vectors; the default is 256. It
// panics if n is less than 1.
func WithDimension(n int) EmbedderOption {
	if n < 1 {
		panic(fmt.Sprintf("fake: WithDimension: dimension must be at least 1, got %d", n))
	}
	return embedderOption(func(e *Embedder) { e.dim = n })
}

// WithMaxBatch sets how many texts one internal call embeds; a larger input
// is split into several calls, each counted by [Embedder.Calls] and each
// subject to latency and failures. 0, the default, means no limit. It
// panics if n is negative.
func WithMaxBatch(n int) EmbedderOption {
	if n < 0 {
		panic(fmt.Sprintf("fake: WithMaxBatch: negative batch size %d", n))
	}
	return embedderOption(func(e *Embedder) { e.maxBatch = n })
}
