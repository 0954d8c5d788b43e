package fake

import (
	"context"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/forgemem/forgemem/memcore"
)

// ReplyFunc plays the model for an [LLM]: it answers one request. An error
// it returns is reported like a failure scheduled with [LLM.FailNext]; a nil
// response with a nil error is reported as [memcore.ErrInvalidResponse].
type ReplyFunc func(ctx context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error)

// LLM is a scripted [memcore.LLMProvider]. Make one with [NewLLM]; it is
// safe for concurrent use.
//
// Each call of [LLM.Complete] that starts with a live context is recorded
// and counted, waits for the configured latency, and then, in this order:
// fails if a failure is scheduled, takes the next queued reply if there is
// one, or asks the reply function. With none of these it fails with an error
// wrapping [memcore.ErrInvalidResponse].
//
// A response's Model is, unless the reply function set one, the request's
// Model, or the LLM's own ([LLMConfig].Model, [DefaultModel] by default) when the
// request names none. A response's Usage is, unless the reply function set
// one, computed by this rule: InputTokens is a quarter of the runes of the
// request's System and of all its messages' Content together, and
// OutputTokens a quarter of the runes of the reply, each rounded up. A
// system prompt of 8 runes, one message of 5 and a reply of 5 report
// {InputTokens: 4, OutputTokens: 2}.
type LLM struct {
	common
	model     string
	replyFunc ReplyFunc

	// Guarded by common.mu.
	queue    []string
	requests []memcore.CompletionRequest
}

var _ memcore.LLMProvider = (*LLM)(nil)

// NewLLM returns a scripted LLM configured by cfg. Without Replies or a
// ReplyFunc every call fails until replies are queued with [LLM.Enqueue].
//
// A field of cfg out of range makes NewLLM return no LLM and a
// *memcore.ConfigError (matching [ErrInvalidConfig]) that names every such
// field.
func NewLLM(cfg LLMConfig) (*LLM, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &LLM{model: cfg.Model, replyFunc: cfg.ReplyFunc, queue: append([]string(nil), cfg.Replies...)}
	if l.model == "" {
		l.model = DefaultModel
	}
	l.latency = cfg.Latency
	l.scheduleFailures(cfg.FailNext, cfg.FailWith)
	return l, nil
}

// Complete implements [memcore.LLMProvider]. A context that has already
// ended gives its error without the call being recorded or counted.
func (l *LLM) Complete(ctx context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req = cloneRequest(req)
	l.mu.Lock()
	l.requests = append(l.requests, req)
	call := len(l.requests)
	l.mu.Unlock()

	if err := l.wait(ctx); err != nil {
		return nil, err
	}
	if err := l.nextFailure(); err != nil {
		return nil, failureError("complete", err)
	}

	var resp *memcore.CompletionResponse
	if text, ok := l.dequeue(); ok {
		resp = &memcore.CompletionResponse{Text: text}
	} else if l.replyFunc != nil {
		r, err := l.replyFunc(ctx, cloneRequest(req))
		if err != nil {
			return nil, failureError("complete", err)
		}
		if r == nil {
			return nil, fmt.Errorf("fake: complete: %w: the reply function returned no response", memcore.ErrInvalidResponse)
		}
		copied := *r
		resp = &copied
	} else {
		return nil, fmt.Errorf("fake: complete: %w: no reply scripted for call %d (use LLMConfig.Replies, Enqueue or LLMConfig.ReplyFunc)",
			memcore.ErrInvalidResponse, call)
	}

	if resp.Model == "" {
		resp.Model = req.Model
		if resp.Model == "" {
			resp.Model = l.model
		}
	}
	if resp.Usage == (memcore.Usage{}) {
		resp.Usage = estimateUsage(req, resp.Text)
	}
	return resp, nil
}

func (l *LLM) dequeue() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.queue) == 0 {
		return "", false
	}
	text := l.queue[0]
	l.queue = l.queue[1:]
	return text, true
}

// Enqueue adds replies to the end of the queue. Queued replies are used
// before the reply function.
func (l *LLM) Enqueue(texts ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue = append(l.queue, texts...)
}

// FailNext makes the next n calls fail with err, after any failures already
// scheduled; n 0 schedules nothing. When err is one of memcore's taxonomy
// sentinels (for example [memcore.ErrRateLimited]) the calls return what a
// provider would: the sentinel wrapped together with an [*APIError]. Any
// other error is returned wrapped as it is.
//
// A negative n or a nil err schedules nothing and returns a
// *memcore.ConfigError (matching [ErrInvalidConfig]); otherwise FailNext
// returns nil.
func (l *LLM) FailNext(n int, err error) error {
	return l.failNext("LLM.FailNext", n, err)
}

// Requests returns copies of the requests received so far, in the order the
// calls arrived.
func (l *LLM) Requests() []memcore.CompletionRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]memcore.CompletionRequest, len(l.requests))
	for i, r := range l.requests {
		out[i] = cloneRequest(r)
	}
	return out
}

// Calls returns the number of calls received so far: calls that started
// with a live context, whatever their outcome.
func (l *LLM) Calls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.requests)
}

// estimateUsage is the token usage the LLM reports when the reply does not
// carry its own (see [LLM]): a quarter of the runes, rounded up, of the
// system prompt and the messages together (input) and of the reply
// (output).
func estimateUsage(req memcore.CompletionRequest, reply string) memcore.Usage {
	in := utf8.RuneCountInString(req.System)
	for _, m := range req.Messages {
		in += utf8.RuneCountInString(m.Content)
	}
	return memcore.Usage{InputTokens: (in + 3) / 4, OutputTokens: (utf8.RuneCountInString(reply) + 3) / 4}
}

// cloneRequest copies everything req refers to, so that neither the caller
// nor the reader of Requests can change what was recorded.
func cloneRequest(req memcore.CompletionRequest) memcore.CompletionRequest {
	req.Messages = slices.Clone(req.Messages)
	if req.Temperature != nil {
		t := *req.Temperature
		req.Temperature = &t
	}
	if req.ResponseSchema != nil {
		s := *req.ResponseSchema
		s.Definition = slices.Clone(s.Definition)
		req.ResponseSchema = &s
	}
	return req
}
