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
		cfg     fake.LLMConfig
		enqueue []string
		want    []string
	}{
		{"queued", fake.LLMConfig{Replies: []string{"one", "two"}}, nil, []string{"one", "two"}},
		{"function", fake.LLMConfig{ReplyFunc: echo}, nil, []string{"echo: a", "echo: b"}},
		{"queue before function", fake.LLMConfig{Replies: []string{"one"}, ReplyFunc: echo}, nil,
			[]string{"one", "echo: b", "echo: c"}},
		{"config then Enqueue", fake.LLMConfig{Replies: []string{"one"}}, []string{"two"}, []string{"one", "two"}},
		{"Enqueue alone", fake.LLMConfig{}, []string{"x", "y"}, []string{"x", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLLM(t, tt.cfg)
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
	l := newLLM(t, fake.LLMConfig{Replies: []string{"only"}})
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
			_, err := newLLM(t, fake.LLMConfig{ReplyFunc: tt.fn}).Complete(context.Background(), ask("hi"))
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
		{"defaults", newLLM(t, fake.LLMConfig{Replies: []string{"abcde"}}), req,
			memcore.CompletionResponse{Text: "abcde", Model: "fake-llm", Usage: memcore.Usage{InputTokens: 4, OutputTokens: 2}}},
		{"Model", newLLM(t, fake.LLMConfig{Replies: []string{""}, Model: "m"}), req,
			memcore.CompletionResponse{Text: "", Model: "m", Usage: memcore.Usage{InputTokens: 4}}},
		{"request names the model", newLLM(t, fake.LLMConfig{Replies: []string{"a"}}), named,
			memcore.CompletionResponse{Text: "a", Model: "asked-for", Usage: memcore.Usage{InputTokens: 4, OutputTokens: 1}}},
		{"reply function's own values kept", newLLM(t, fake.LLMConfig{ReplyFunc: own}), req,
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
		resp, err := newLLM(t, fake.LLMConfig{Replies: []string{tt.reply}}).Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("Complete: %v", err)
		}
		if resp.Usage != tt.want {
			t.Errorf("usage of system %q, messages %q, reply %q = %+v, want %+v", tt.system, tt.messages, tt.reply, resp.Usage, tt.want)
		}
	}
}

func TestLLMRecordsCopiesOfRequests(t *testing.T) {
	l := newLLM(t, fake.LLMConfig{ReplyFunc: func(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		req.Messages[0].Content = "changed by the reply function"
		return &memcore.CompletionResponse{Text: "ok"}, nil
	}})
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
			l := newLLM(t, fake.LLMConfig{Replies: []string{"recovered"}})
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
	l := newLLM(t, fake.LLMConfig{FailNext: 1, FailWith: memcore.ErrRateLimited, ReplyFunc: echo})
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
			l := newLLM(t, fake.LLMConfig{Replies: []string{"never"}})
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
	l := newLLM(t, fake.LLMConfig{Replies: []string{"late"}, Latency: time.Hour})
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
	l := newLLM(t, fake.LLMConfig{Replies: []string{"ok"}, Latency: latency})
	start := time.Now()
	replies(t, l, "hi")
	if elapsed := time.Since(start); elapsed < latency {
		t.Errorf("Complete returned after %v, want at least the latency %v", elapsed, latency)
	}
}

func TestLLMConcurrentCalls(t *testing.T) {
	const n = 64
	l := newLLM(t, fake.LLMConfig{ReplyFunc: echo})
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

func TestInvalidConfig(t *testing.T) {
	tests := []struct {
		name string
		make func(t testing.TB) error
		want string // the whole message
	}{
		{"negative latency", func(t testing.TB) error { _, err := fake.NewLLM(fake.LLMConfig{Latency: -time.Second}); return err },
			"fake: invalid config: Latency is -1s, want at least 0 (0 means no delay)"},
		{"negative latency, embedder", func(t testing.TB) error { _, err := fake.NewEmbedder(fake.EmbedderConfig{Latency: -1}); return err },
			"fake: invalid config: Latency is -1ns, want at least 0 (0 means no delay)"},
		{"negative fail count", func(t testing.TB) error {
			_, err := fake.NewLLM(fake.LLMConfig{FailNext: -1, FailWith: memcore.ErrUnavailable})
			return err
		}, "fake: invalid config: FailNext is -1, want at least 0 (0 schedules no failure)"},
		{"nil failure", func(t testing.TB) error { _, err := fake.NewEmbedder(fake.EmbedderConfig{FailNext: 2}); return err },
			"fake: invalid config: FailWith is nil, want an error to fail the first 2 calls with (FailNext is 2)"},
		{"negative dimension", func(t testing.TB) error { _, err := fake.NewEmbedder(fake.EmbedderConfig{Dimension: -1}); return err },
			"fake: invalid config: Dimension is -1, want 1–65536 (0 means 1024)"},
		{"huge dimension", func(t testing.TB) error {
			_, err := fake.NewEmbedder(fake.EmbedderConfig{Dimension: math.MaxInt})
			return err
		},
			fmt.Sprintf("fake: invalid config: Dimension is %d, want 1–65536 (0 means 1024)", math.MaxInt)},
		{"negative max batch", func(t testing.TB) error { _, err := fake.NewEmbedder(fake.EmbedderConfig{MaxBatch: -1}); return err },
			"fake: invalid config: MaxBatch is -1, want at least 0 (0 means no limit)"},
		{"every bad field reported", func(t testing.TB) error {
			_, err := fake.NewEmbedder(fake.EmbedderConfig{Dimension: -3, Latency: -time.Minute, MaxBatch: math.MinInt})
			return err
		}, fmt.Sprintf("fake: invalid config: Dimension is -3, want 1–65536 (0 means 1024); MaxBatch is %d, want at least 0 (0 means no limit); "+
			"Latency is -1m0s, want at least 0 (0 means no delay)", math.MinInt)},
		{"LLM.FailNext nil", func(t testing.TB) error { return newLLM(t, fake.LLMConfig{}).FailNext(1, nil) },
			"fake: invalid config: LLM.FailNext error is nil, want an error to fail with"},
		{"LLM.FailNext negative and nil", func(t testing.TB) error { return newLLM(t, fake.LLMConfig{}).FailNext(math.MinInt, nil) },
			fmt.Sprintf("fake: invalid config: LLM.FailNext count is %d, want at least 0; LLM.FailNext error is nil, want an error to fail with", math.MinInt)},
		{"Embedder.FailNext negative", func(t testing.TB) error {
			return newEmbedder(t, fake.EmbedderConfig{}).FailNext(-2, memcore.ErrUnavailable)
		},
			"fake: invalid config: Embedder.FailNext count is -2, want at least 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.make(t)
			var ce *memcore.ConfigError
			if !errors.Is(err, memcore.ErrInvalidConfig) || !errors.Is(err, fake.ErrInvalidConfig) || !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *memcore.ConfigError matching memcore.ErrInvalidConfig (and fake.ErrInvalidConfig)", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n%s\nwant\n%s", err, tt.want)
			}
		})
	}
}

// A zero field means its default: the zero configs are the defaults.
func TestZeroConfigIsDefault(t *testing.T) {
	for _, cfg := range []fake.LLMConfig{{}, fake.DefaultLLMConfig()} {
		l := newLLM(t, cfg)
		l.Enqueue("x")
		resp, err := l.Complete(context.Background(), ask("a"))
		if err != nil || resp.Model != fake.DefaultModel {
			t.Errorf("%+v: Complete = %+v, %v; want the model %q", cfg, resp, err, fake.DefaultModel)
		}
	}
	for _, cfg := range []fake.EmbedderConfig{{}, fake.DefaultEmbedderConfig()} {
		e := newEmbedder(t, cfg)
		if e.Dimension() != fake.DefaultDimension || e.MaxBatch() != 0 {
			t.Errorf("%+v: Dimension, MaxBatch = %d, %d; want %d, 0", cfg, e.Dimension(), e.MaxBatch(), fake.DefaultDimension)
		}
	}
}

// TestFailNextRejectedSchedulesNothing checks that a FailNext call that
// returns an error leaves the failures scheduled before it, and adds none.
func TestFailNextRejectedSchedulesNothing(t *testing.T) {
	l := newLLM(t, fake.LLMConfig{ReplyFunc: echo})
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

// TestConfigNeverPanics makes fakes of configs with extreme values, and
// calls FailNext with them.
func TestConfigNeverPanics(t *testing.T) {
	durations := []time.Duration{math.MinInt64, -1, 0, 1, math.MaxInt64}
	ints := []int{math.MinInt, -1, 0, 1, 1 << 16, 1<<16 + 1, math.MaxInt}
	errs := []error{nil, memcore.ErrRateLimited, errors.New("other")}
	noPanic := func(t *testing.T, what string, f func()) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s panicked: %v", what, r)
			}
		}()
		f()
	}
	for _, d := range durations {
		for _, n := range ints {
			for _, e := range errs {
				llm := fake.LLMConfig{Latency: d, FailNext: n, FailWith: e, Model: strings.Repeat("m", n&0xff), Replies: []string{""}}
				noPanic(t, fmt.Sprintf("NewLLM(%+v)", llm), func() { _, _ = fake.NewLLM(llm) })
				emb := fake.EmbedderConfig{Latency: d, FailNext: n, FailWith: e, Dimension: n, MaxBatch: n}
				noPanic(t, fmt.Sprintf("NewEmbedder(%+v)", emb), func() { _, _ = fake.NewEmbedder(emb) })
			}
		}
	}
	for _, n := range ints {
		for _, e := range errs {
			noPanic(t, fmt.Sprintf("LLM.FailNext(%d, %v)", n, e), func() { _ = newLLM(t, fake.LLMConfig{}).FailNext(n, e) })
			noPanic(t, fmt.Sprintf("Embedder.FailNext(%d, %v)", n, e), func() { _ = newEmbedder(t, fake.EmbedderConfig{}).FailNext(n, e) })
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
