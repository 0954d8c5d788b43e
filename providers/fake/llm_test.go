package fake_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

func ask(text string) memcore.CompletionRequest {
	return memcore.CompletionRequest{Messages: []memcore.Message{{Role: memcore.RoleUser, Content: text}}}
}

func echo(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	return &memcore.CompletionResponse{Text: "echo: " + req.Messages[len(req.Messages)-1].Content}, nil
}

// replies calls l once per prompt and returns the replies, or the first
// error.
func replies(t *testing.T, l *fake.LLM, prompts ...string) []string {
	t.Helper()
	var out []string
	for _, p := range prompts {
		resp, err := l.Complete(context.Background(), ask(p))
		if err != nil {
			t.Fatalf("Complete(%q): %v", p, err)
		}
		out = append(out, resp.Text)
	}
	return out
}

func TestLLMRepliesInOrder(t *testing.T) {
	tests := []struct {
		name    string
		opts    []fake.LLMOption
		enqueue []string
		want    []string
	}{
		{"queued", []fake.LLMOption{fake.WithReplies("one", "two")}, nil, []string{"one", "two"}},
		{"function", []fake.LLMOption{fake.WithReplyFunc(echo)}, nil, []string{"echo: a", "echo: b"}},
		{"queue before function", []fake.LLMOption{fake.WithReplies("one"), fake.WithReplyFunc(echo)}, nil,
			[]string{"one", "echo: b", "echo: c"}},
		{"options then Enqueue", []fake.LLMOption{fake.WithReplies("one")}, []string{"two"}, []string{"one", "two"}},
		{"Enqueue alone", nil, []string{"x", "y"}, []string{"x", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := fake.NewLLM(tt.opts...)
			l.Enqueue(tt.enqueue...)
			prompts := []string{"a", "b", "c"}[:len(tt.want)]
			if got := replies(t, l, prompts...); !slices.Equal(got, tt.want) {
				t.Errorf("replies = %q, want %q", got, tt.want)
			}
			if got := l.Calls(); got != len(tt.want) {
				t.Errorf("Calls() = %d, want %d", got, len(tt.want))
			}
		})
	}
}

func TestLLMUnscriptedCallFails(t *testing.T) {
	l := fake.NewLLM(fake.WithReplies("only"))
	replies(t, l, "first")
	resp, err := l.Complete(context.Background(), ask("second"))
	if !errors.Is(err, memcore.ErrInvalidResponse) || resp != nil {
		t.Errorf("Complete after the queue ran dry = %v, %v; want nil and an error wrapping ErrInvalidResponse", resp, err)
	}
	if memcore.IsTransient(err) {
		t.Errorf("an unscripted call must be a permanent failure; IsTransient(%v) = true", err)
	}
}

func TestLLMReplyFuncResults(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name   string
		fn     fake.ReplyFunc
		wantIs []error
		native bool
	}{
		{"sentinel becomes a provider error", func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
			return nil, memcore.ErrUnavailable
		}, []error{memcore.ErrUnavailable}, true},
		{"other error passes through", func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
			return nil, boom
		}, []error{boom}, false},
		{"nil response is invalid", func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
			return nil, nil
		}, []error{memcore.ErrInvalidResponse}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fake.NewLLM(fake.WithReplyFunc(tt.fn)).Complete(context.Background(), ask("hi"))
			for _, want := range tt.wantIs {
				if !errors.Is(err, want) {
					t.Errorf("err = %v, want it to match %v", err, want)
				}
			}
			var apiErr *fake.APIError
			if got := errors.As(err, &apiErr); got != tt.native {
				t.Errorf("errors.As(%v, *APIError) = %t, want %t", err, got, tt.native)
			}
		})
	}
}

func TestLLMFillsModelAndUsage(t *testing.T) {
	own := func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		return &memcore.CompletionResponse{Text: "x", Model: "their-model", Usage: memcore.Usage{InputTokens: 7, OutputTokens: 9}}, nil
	}
	req := memcore.CompletionRequest{
		System:   "12345678",                                                    // 8 runes
		Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "héllo"}}, // 5 runes
	}
	named := req
	named.Model = "asked-for"
	tests := []struct {
		name string
		l    *fake.LLM
		req  memcore.CompletionRequest
		want memcore.CompletionResponse
	}{
		{"defaults", fake.NewLLM(fake.WithReplies("abcde")), req,
			memcore.CompletionResponse{Text: "abcde", Model: "fake-llm", Usage: memcore.Usage{InputTokens: 4, OutputTokens: 2}}},
		{"WithModel", fake.NewLLM(fake.WithReplies(""), fake.WithModel("m")), req,
			memcore.CompletionResponse{Text: "", Model: "m", Usage: memcore.Usage{InputTokens: 4}}},
		{"request names the model", fake.NewLLM(fake.WithReplies("a")), named,
			memcore.CompletionResponse{Text: "a", Model: "asked-for", Usage: memcore.Usage{InputTokens: 4, OutputTokens: 1}}},
		{"reply function's own values kept", fake.NewLLM(fake.WithReplyFunc(own)), req,
			memcore.CompletionResponse{Text: "x", Model: "their-model", Usage: memcore.Usage{InputTokens: 7, OutputTokens: 9}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.l.Complete(context.Background(), tt.req)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if *resp != tt.want {
				t.Errorf("response = %+v, want %+v", *resp, tt.want)
			}
		})
	}
}

func TestEstimateUsage(t *testing.T) {
	tests := []struct {
		system, message, reply string
		want                   memcore.Usage
	}{
		{"", "", "", memcore.Usage{}},
		{"a", "", "b", memcore.Usage{InputTokens: 1, OutputTokens: 1}},
		{"abcd", "efgh", "ijklm", memcore.Usage{InputTokens: 2, OutputTokens: 2}},
		{"日本語", "", "🚀🚀🚀🚀", memcore.Usage{InputTokens: 1, OutputTokens: 1}},
	}
	for _, tt := range tests {
		req := memcore.CompletionRequest{System: tt.system, Messages: []memcore.Message{{Role: memcore.RoleUser, Content: tt.message}}}
		if got := fake.EstimateUsage(req, tt.reply); got != tt.want {
			t.Errorf("EstimateUsage(%q, %q, %q) = %+v, want %+v", tt.system, tt.message, tt.reply, got, tt.want)
		}
	}
}

func TestLLMRecordsCopiesOfRequests(t *testing.T) {
	l := fake.NewLLM(fake.WithReplyFunc(func(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		req.Messages[0].Content = "changed by the reply function"
		return &memcore.CompletionResponse{Text: "ok"}, nil
	}))
	temp := 0.5
	req := memcore.CompletionRequest{
		System:         "sys",
		Messages:       []memcore.Message{{Role: memcore.RoleUser, Content: "original"}},
		Temperature:    &temp,
		ResponseSchema: &memcore.Schema{Name: "s", Definition: json.RawMessage(`{"type":"object"}`)},
	}
	if _, err := l.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	// The caller changes its request, then the reader changes what it got.
	req.Messages[0].Content = "changed by the caller"
	temp = 1.5
	req.ResponseSchema.Definition[2] = 'X'
	got := l.Requests()
	got[0].Messages[0].Content = "changed by the reader"
	*got[0].Temperature = 2.5

	rec := l.Requests()
	if len(rec) != 1 {
		t.Fatalf("Requests() has %d entries, want 1", len(rec))
	}
	if c := rec[0].Messages[0].Content; c != "original" {
		t.Errorf("recorded message = %q, want %q", c, "original")
	}
	if *rec[0].Temperature != 0.5 {
		t.Errorf("recorded temperature = %v, want 0.5", *rec[0].Temperature)
	}
	if d := string(rec[0].ResponseSchema.Definition); d != `{"type":"object"}` {
		t.Errorf("recorded schema = %s, want the original", d)
	}
}

func TestLLMFailNext(t *testing.T) {
	tests := []struct {
		kind   error
		status int
	}{
		{memcore.ErrRateLimited, http.StatusTooManyRequests},
		{memcore.ErrUnauthenticated, http.StatusUnauthorized},
		{memcore.ErrUnavailable, http.StatusServiceUnavailable},
		{memcore.ErrInputTooLarge, http.StatusRequestEntityTooLarge},
		{memcore.ErrInvalidRequest, http.StatusBadRequest},
		{memcore.ErrInvalidResponse, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.kind.Error(), func(t *testing.T) {
			l := fake.NewLLM(fake.WithReplies("recovered"))
			l.FailNext(2, tt.kind)
			for i := range 2 {
				_, err := l.Complete(context.Background(), ask("hi"))
				if !errors.Is(err, tt.kind) {
					t.Errorf("call %d: err = %v, want it to match %v", i, err, tt.kind)
				}
				var apiErr *fake.APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != tt.status {
					t.Errorf("call %d: err = %v, want it to carry an *APIError with status %d", i, err, tt.status)
				}
			}
			if got := replies(t, l, "again"); got[0] != "recovered" {
				t.Errorf("after the failures: reply %q, want %q", got[0], "recovered")
			}
			if l.Calls() != 3 {
				t.Errorf("Calls() = %d, want 3 (failed calls count)", l.Calls())
			}
		})
	}
}

func TestFailuresQueueInOrder(t *testing.T) {
	boom := errors.New("boom")
	l := fake.NewLLM(fake.WithFailNext(1, memcore.ErrRateLimited), fake.WithReplyFunc(echo))
	l.FailNext(2, boom)
	l.FailNext(0, memcore.ErrUnavailable) // no-op
	want := []error{memcore.ErrRateLimited, boom, boom, nil}
	for i, w := range want {
		_, err := l.Complete(context.Background(), ask("hi"))
		if w == nil {
			if err != nil {
				t.Errorf("call %d: err = %v, want none", i, err)
			}
			continue
		}
		if !errors.Is(err, w) {
			t.Errorf("call %d: err = %v, want it to match %v", i, err, w)
		}
	}
}

func TestLLMHonoursContext(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	canceled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	tests := []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"canceled", canceled, context.Canceled},
		{"expired", expired, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := fake.NewLLM(fake.WithReplies("never"))
			if _, err := l.Complete(tt.ctx, ask("hi")); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if l.Calls() != 0 || len(l.Requests()) != 0 {
				t.Errorf("a call with an ended context must not be counted or recorded; Calls() = %d", l.Calls())
			}
			if got := replies(t, l, "hi"); got[0] != "never" {
				t.Errorf("the queued reply must still be there; got %q", got[0])
			}
		})
	}
}

func TestLLMLatencyEndsWithContext(t *testing.T) {
	l := fake.NewLLM(fake.WithReplies("late"), fake.WithLatency(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := l.Complete(ctx, ask("hi"))
		done <- err
	}()
	// Cancel once the call is in flight: it is recorded before it waits.
	waitFor(t, func() bool { return l.Calls() == 1 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Complete did not return after its context was canceled")
	}
}

func TestLLMLatencyDelaysReply(t *testing.T) {
	const latency = 20 * time.Millisecond
	l := fake.NewLLM(fake.WithReplies("ok"), fake.WithLatency(latency))
	start := time.Now()
	replies(t, l, "hi")
	if elapsed := time.Since(start); elapsed < latency {
		t.Errorf("Complete returned after %v, want at least the latency %v", elapsed, latency)
	}
}

func TestLLMConcurrentCalls(t *testing.T) {
	const n = 64
	l := fake.NewLLM(fake.WithReplyFunc(echo))
	l.FailNext(n/4, memcore.ErrRateLimited)
	var wg sync.WaitGroup
	errs := make([]error, n)
	texts := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := l.Complete(context.Background(), ask(fmt.Sprint(i)))
			if err == nil {
				texts[i] = resp.Text
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	failed := 0
	for i := range n {
		switch {
		case errs[i] != nil:
			failed++
		case texts[i] != fmt.Sprintf("echo: %d", i):
			t.Errorf("call %d got %q", i, texts[i])
		}
	}
	if failed != n/4 {
		t.Errorf("%d calls failed, want exactly the %d scheduled", failed, n/4)
	}
	if l.Calls() != n || len(l.Requests()) != n {
		t.Errorf("Calls() = %d, len(Requests()) = %d, want %d", l.Calls(), len(l.Requests()), n)
	}
}

func TestInvalidOptionsPanic(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"negative latency", func() { fake.WithLatency(-time.Second) }},
		{"negative fail count", func() { fake.WithFailNext(-1, memcore.ErrUnavailable) }},
		{"nil failure", func() { fake.WithFailNext(1, nil) }},
		{"LLM.FailNext nil", func() { fake.NewLLM().FailNext(1, nil) }},
		{"Embedder.FailNext negative", func() { fake.NewEmbedder().FailNext(-2, memcore.ErrUnavailable) }},
		{"zero dimension", func() { fake.WithDimension(0) }},
		{"negative max batch", func() { fake.WithMaxBatch(-1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("did not panic")
				}
			}()
			tt.f()
		})
	}
}

// waitFor polls cond until it holds, failing the test after a few seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatal("condition not reached within 5s")
		case <-tick.C:
		}
	}
}
