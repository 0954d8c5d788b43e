package fake_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
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
			l := newLLM(t, tt.opts...)
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
	l := newLLM(t, fake.WithReplies("only"))
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
			_, err := newLLM(t, fake.WithReplyFunc(tt.fn)).Complete(context.Background(), ask("hi"))
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
		{"defaults", newLLM(t, fake.WithReplies("abcde")), req,
			memcore.CompletionResponse{Text: "abcde", Model: "fake-llm", Usage: memcore.Usage{InputTokens: 4, OutputTokens: 2}}},
		{"WithModel", newLLM(t, fake.WithReplies(""), fake.WithModel("m")), req,
			memcore.CompletionResponse{Text: "", Model: "m", Usage: memcore.Usage{InputTokens: 4}}},
		{"request names the model", newLLM(t, fake.WithReplies("a")), named,
			memcore.CompletionResponse{Text: "a", Model: "asked-for", Usage: memcore.Usage{InputTokens: 4, OutputTokens: 1}}},
		{"reply function's own values kept", newLLM(t, fake.WithReplyFunc(own)), req,
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

// TestLLMUsageRule checks the documented rule for the usage of a reply
// that carries none: a quarter of the runes, rounded up, of the system
// prompt and the messages together (input) and of the reply (output).
func TestLLMUsageRule(t *testing.T) {
	tests := []struct {
		system   string
		messages []string
		reply    string
		want     memcore.Usage
	}{
		{"", []string{""}, "", memcore.Usage{}},
		{"a", nil, "b", memcore.Usage{InputTokens: 1, OutputTokens: 1}},
		{"abcd", []string{"efgh"}, "ijklm", memcore.Usage{InputTokens: 2, OutputTokens: 2}},
		{"ab", []string{"cd", "e"}, "", memcore.Usage{InputTokens: 2}}, // 5 runes over two messages and the system prompt
		{"日本語", []string{""}, "🚀🚀🚀🚀", memcore.Usage{InputTokens: 1, OutputTokens: 1}},
	}
	for _, tt := range tests {
		req := memcore.CompletionRequest{System: tt.system}
		for _, m := range tt.messages {
			req.Messages = append(req.Messages, memcore.Message{Role: memcore.RoleUser, Content: m})
		}
		resp, err := newLLM(t, fake.WithReplies(tt.reply)).Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("Complete: %v", err)
		}
		if resp.Usage != tt.want {
			t.Errorf("usage of system %q, messages %q, reply %q = %+v, want %+v", tt.system, tt.messages, tt.reply, resp.Usage, tt.want)
		}
	}
}

func TestLLMRecordsCopiesOfRequests(t *testing.T) {
	l := newLLM(t, fake.WithReplyFunc(func(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
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
			l := newLLM(t, fake.WithReplies("recovered"))
			failNext(t, l, 2, tt.kind)
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
	l := newLLM(t, fake.WithFailNext(1, memcore.ErrRateLimited), fake.WithReplyFunc(echo))
	failNext(t, l, 2, boom)
	failNext(t, l, 0, memcore.ErrUnavailable) // no-op
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
			l := newLLM(t, fake.WithReplies("never"))
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
	l := newLLM(t, fake.WithReplies("late"), fake.WithLatency(time.Hour))
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
	l := newLLM(t, fake.WithReplies("ok"), fake.WithLatency(latency))
	start := time.Now()
	replies(t, l, "hi")
	if elapsed := time.Since(start); elapsed < latency {
		t.Errorf("Complete returned after %v, want at least the latency %v", elapsed, latency)
	}
}

func TestLLMConcurrentCalls(t *testing.T) {
	const n = 64
	l := newLLM(t, fake.WithReplyFunc(echo))
	failNext(t, l, n/4, memcore.ErrRateLimited)
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

func TestInvalidOptions(t *testing.T) {
	tests := []struct {
		name string
		make func(t testing.TB) error
		// mention lists what the message must say: the option and the
		// values it accepts.
		mention []string
	}{
		{"negative latency", func(t testing.TB) error { _, err := fake.NewLLM(fake.WithLatency(-time.Second)); return err },
			[]string{"WithLatency is -1s", "want at least 0"}},
		{"negative latency, embedder", func(t testing.TB) error { _, err := fake.NewEmbedder(fake.WithLatency(-1)); return err },
			[]string{"WithLatency is -1ns", "want at least 0"}},
		{"negative fail count", func(t testing.TB) error {
			_, err := fake.NewLLM(fake.WithFailNext(-1, memcore.ErrUnavailable))
			return err
		},
			[]string{"WithFailNext count is -1", "want at least 0"}},
		{"nil failure", func(t testing.TB) error { _, err := fake.NewEmbedder(fake.WithFailNext(1, nil)); return err },
			[]string{"WithFailNext error is nil", "want an error"}},
		{"empty model", func(t testing.TB) error { _, err := fake.NewLLM(fake.WithModel("")); return err },
			[]string{`WithModel is ""`, "want a non-empty name"}},
		{"zero dimension", func(t testing.TB) error { _, err := fake.NewEmbedder(fake.WithDimension(0)); return err },
			[]string{"WithDimension is 0", "want 1–65536"}},
		{"huge dimension", func(t testing.TB) error { _, err := fake.NewEmbedder(fake.WithDimension(math.MaxInt)); return err },
			[]string{fmt.Sprintf("WithDimension is %d", math.MaxInt), "want 1–65536"}},
		{"negative max batch", func(t testing.TB) error { _, err := fake.NewEmbedder(fake.WithMaxBatch(-1)); return err },
			[]string{"WithMaxBatch is -1", "want at least 0"}},
		{"every bad option reported", func(t testing.TB) error {
			_, err := fake.NewEmbedder(fake.WithDimension(-3), fake.WithLatency(-time.Minute), fake.WithMaxBatch(math.MinInt))
			return err
		}, []string{"WithDimension is -3", "WithLatency is -1m0s", fmt.Sprintf("WithMaxBatch is %d", math.MinInt)}},
		{"LLM.FailNext nil", func(t testing.TB) error { return newLLM(t).FailNext(1, nil) },
			[]string{"LLM.FailNext error is nil", "want an error"}},
		{"LLM.FailNext negative and nil", func(t testing.TB) error { return newLLM(t).FailNext(math.MinInt, nil) },
			[]string{fmt.Sprintf("LLM.FailNext count is %d", math.MinInt), "LLM.FailNext error is nil"}},
		{"Embedder.FailNext negative", func(t testing.TB) error { return newEmbedder(t).FailNext(-2, memcore.ErrUnavailable) },
			[]string{"Embedder.FailNext count is -2", "want at least 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.make(t)
			if !errors.Is(err, fake.ErrInvalidConfig) {
				t.Fatalf("err = %v, want an error wrapping fake.ErrInvalidConfig", err)
			}
			for _, m := range tt.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not say %q", err, m)
				}
			}
		})
	}
}

// TestFailNextRejectedSchedulesNothing checks that a FailNext call that
// returns an error leaves the failures scheduled before it, and adds none.
func TestFailNextRejectedSchedulesNothing(t *testing.T) {
	l := newLLM(t, fake.WithReplyFunc(echo))
	failNext(t, l, 1, memcore.ErrRateLimited)
	if err := l.FailNext(-1, memcore.ErrUnavailable); err == nil {
		t.Fatal("FailNext(-1, …) returned no error")
	}
	if err := l.FailNext(3, nil); err == nil {
		t.Fatal("FailNext(3, nil) returned no error")
	}
	if _, err := l.Complete(context.Background(), ask("a")); !errors.Is(err, memcore.ErrRateLimited) {
		t.Errorf("first call: err = %v, want the failure scheduled before", err)
	}
	if got := replies(t, l, "b", "c"); !slices.Equal(got, []string{"echo: b", "echo: c"}) {
		t.Errorf("replies after the rejected FailNext calls = %q, want them answered", got)
	}
}

// TestNilOptionIgnored checks that a nil option changes nothing.
func TestNilOptionIgnored(t *testing.T) {
	l := newLLM(t, nil, fake.WithReplies("x"), nil)
	if got := replies(t, l, "a"); got[0] != "x" {
		t.Errorf("reply = %q, want %q", got[0], "x")
	}
	var o fake.Option
	e := newEmbedder(t, o, fake.WithDimension(8))
	if e.Dimension() != 8 {
		t.Errorf("Dimension() = %d, want 8", e.Dimension())
	}
}

// TestOptionsNeverPanic calls every option constructor, and the
// constructors with each option, with extreme values.
func TestOptionsNeverPanic(t *testing.T) {
	durations := []time.Duration{math.MinInt64, -1, 0, 1, math.MaxInt64}
	ints := []int{math.MinInt, -1, 0, 1, 1 << 16, 1<<16 + 1, math.MaxInt}
	errs := []error{nil, memcore.ErrRateLimited, errors.New("other")}
	var llmOpts []fake.LLMOption
	var embOpts []fake.EmbedderOption
	for _, d := range durations {
		llmOpts = append(llmOpts, fake.WithLatency(d))
		embOpts = append(embOpts, fake.WithLatency(d))
	}
	for _, n := range ints {
		for _, e := range errs {
			llmOpts = append(llmOpts, fake.WithFailNext(n, e))
			embOpts = append(embOpts, fake.WithFailNext(n, e))
		}
		embOpts = append(embOpts, fake.WithDimension(n), fake.WithMaxBatch(n))
	}
	llmOpts = append(llmOpts, fake.WithModel(""), fake.WithModel(strings.Repeat("m", 1<<16)),
		fake.WithReplies(), fake.WithReplies(""), fake.WithReplyFunc(nil))
	noPanic := func(t *testing.T, what string, f func()) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s panicked: %v", what, r)
			}
		}()
		f()
	}
	for i, o := range llmOpts {
		noPanic(t, fmt.Sprintf("NewLLM with LLM option %d", i), func() { _, _ = fake.NewLLM(o) })
	}
	for i, o := range embOpts {
		noPanic(t, fmt.Sprintf("NewEmbedder with embedder option %d", i), func() { _, _ = fake.NewEmbedder(o) })
	}
	noPanic(t, "NewLLM with every option", func() { _, _ = fake.NewLLM(llmOpts...) })
	noPanic(t, "NewEmbedder with every option", func() { _, _ = fake.NewEmbedder(embOpts...) })
	for _, n := range ints {
		for _, e := range errs {
			noPanic(t, fmt.Sprintf("LLM.FailNext(%d, %v)", n, e), func() { _ = newLLM(t).FailNext(n, e) })
			noPanic(t, fmt.Sprintf("Embedder.FailNext(%d, %v)", n, e), func() { _ = newEmbedder(t).FailNext(n, e) })
		}
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
