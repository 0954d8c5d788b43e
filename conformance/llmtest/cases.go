package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/forgemem/forgemem/conformance/internal/conform"
	"github.com/forgemem/forgemem/memcore"
)

// Run runs the conformance suite for [memcore.LLMProvider] as subtests of t,
// each against providers from a fresh [Harness]:
//
//	Complete/NonEmptyReply             a call returns a non-empty reply
//	Complete/ReportsUsage              the reply reports token usage (unless NoUsage)
//	Complete/SystemPromptReachesModel  the model sees the system prompt
//	Complete/HistoryReachesModel       the model sees earlier messages, not only the last
//	Complete/JSONSchemaReply           with a ResponseSchema, the reply is the JSON asked for (unless NoJSONSchema)
//	Context/CanceledBeforeCall         a canceled context fails promptly with context.Canceled
//	Context/DeadlineExpiredBeforeCall  an expired deadline fails promptly with context.DeadlineExceeded
//	Context/CanceledInFlight           so does cancelling a call in flight (needs SlowHarness)
//	Context/DeadlineExpiresInFlight    and a deadline passing in flight (needs SlowHarness)
//	Errors/<Kind>                      a provider made to fail as <Kind> returns an error
//	Errors/<Kind>/MatchesKind          which matches <Kind>'s sentinel and no other, and
//	                                   memcore.IsTransient agrees with the kind
//	Errors/<Kind>/NativeErrorReachable and keeps the native error reachable (needs NativeErrorHarness)
//	ConcurrentCalls                    simultaneous calls each get their own answer
//
// Failure messages state the rule that was broken. A field of cfg out of
// range fails t at once (t.Fatalf), naming every such field and the values
// it accepts, and no case runs.
func Run(t *testing.T, newHarness HarnessMaker, cfg Config) {
	t.Helper()
	conform.FailNow(t, cfg.Validate())
	s := &suite{newHarness: newHarness, cfg: conform.Config(cfg).WithDefaults()}
	t.Run("Complete", func(t *testing.T) {
		t.Run("NonEmptyReply", s.testNonEmptyReply)
		t.Run("ReportsUsage", s.testReportsUsage)
		t.Run("SystemPromptReachesModel", s.testSystemPrompt)
		t.Run("HistoryReachesModel", s.testHistory)
		t.Run("JSONSchemaReply", s.testJSONSchema)
	})
	t.Run("Context", func(t *testing.T) { conform.RunContextCases(t, s.subject()) })
	t.Run("Errors", func(t *testing.T) { conform.RunFailureCases(t, s.subject()) })
	t.Run("ConcurrentCalls", s.testConcurrentCalls)
}

type suite struct {
	newHarness HarnessMaker
	cfg        conform.Config
}

// result is the outcome of one Complete call.
type result struct {
	resp *memcore.CompletionResponse
	err  error
}

func (s *suite) harness(t *testing.T) Harness {
	t.Helper()
	h, err := s.newHarness(t.Context(), t)
	if err != nil {
		t.Fatalf("llmtest: making the harness: %v", err)
	}
	if h == nil {
		t.Fatal("llmtest: the HarnessMaker returned a nil Harness and no error")
	}
	t.Cleanup(h.Close)
	return h
}

func (s *suite) provider(t *testing.T, h Harness) memcore.LLMProvider {
	t.Helper()
	p, err := h.NewProvider(t.Context())
	if err != nil {
		t.Fatalf("llmtest: Harness.NewProvider: %v", err)
	}
	return p
}

// call runs p.Complete(ctx, req) and waits at most limit for it.
func call(ctx context.Context, p memcore.LLMProvider, req memcore.CompletionRequest, limit time.Duration) (result, bool) {
	return conform.Within(limit, func() result {
		resp, err := p.Complete(ctx, req)
		return result{resp, err}
	})
}

// complete makes an ordinary call that must succeed. It reports a failure
// and returns nil when it does not.
func (s *suite) complete(t *testing.T, p memcore.LLMProvider, req memcore.CompletionRequest) *memcore.CompletionResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), s.cfg.CallTimeout)
	defer cancel()
	res, ok := call(ctx, p, req, s.cfg.CallTimeout+s.cfg.CancelGrace)
	switch {
	case !ok:
		t.Errorf("Complete must honour its context: still running %v after its %v deadline",
			s.cfg.CancelGrace, s.cfg.CallTimeout)
		return nil
	case res.err != nil:
		t.Errorf("Complete must succeed on a working provider; got %v", res.err)
		return nil
	case res.resp == nil:
		t.Error("Complete must return a response when it returns no error; got nil")
		return nil
	}
	return res.resp
}

func (s *suite) testNonEmptyReply(t *testing.T) {
	p := s.provider(t, s.harness(t))
	resp := s.complete(t, p, greetingRequest())
	if resp != nil && strings.TrimSpace(resp.Text) == "" {
		t.Errorf("Complete must return a non-empty reply; got %q", resp.Text)
	}
}

func (s *suite) testReportsUsage(t *testing.T) {
	h := s.harness(t)
	if reason := h.Capabilities().NoUsage; reason != "" {
		t.Skipf("the provider does not report token usage: %s", reason)
	}
	resp := s.complete(t, s.provider(t, h), greetingRequest())
	if resp == nil {
		return
	}
	if resp.Usage.InputTokens <= 0 || resp.Usage.OutputTokens <= 0 {
		t.Errorf("a provider that reports usage must count both input and output tokens; got %+v "+
			"(declare Capabilities.NoUsage if the API does not report it)", resp.Usage)
	}
}

func (s *suite) testSystemPrompt(t *testing.T) {
	p := s.provider(t, s.harness(t))
	codeword := newCodewords(1)[0]
	resp := s.complete(t, p, systemPromptRequest(codeword))
	if resp != nil && !containsCodeword(resp.Text, codeword) {
		t.Errorf("the system prompt must reach the model: asked for the codeword %s, stated only in the system prompt, "+
			"the model replied %q", codeword, resp.Text)
	}
}

func (s *suite) testHistory(t *testing.T) {
	p := s.provider(t, s.harness(t))
	codeword := newCodewords(1)[0]
	resp := s.complete(t, p, historyRequest(codeword))
	if resp != nil && !containsCodeword(resp.Text, codeword) {
		t.Errorf("every message must reach the model, not only the last: asked for the codeword %s, "+
			"stated only in an earlier message, the model replied %q", codeword, resp.Text)
	}
}

func (s *suite) testJSONSchema(t *testing.T) {
	h := s.harness(t)
	if reason := h.Capabilities().NoJSONSchema; reason != "" {
		t.Skipf("the provider does not honour ResponseSchema: %s", reason)
	}
	p := s.provider(t, h)
	codeword, count := newCodewords(1)[0], 100+rand.IntN(900)
	resp := s.complete(t, p, jsonRequest(codeword, count))
	if resp == nil {
		return
	}
	got, err := decodeObject(resp.Text)
	if err != nil {
		t.Errorf("with a ResponseSchema the reply must be one bare JSON object: %v; reply %q", err, resp.Text)
		return
	}
	want := map[string]any{"codeword": codeword, "count": json.Number(strconv.Itoa(count))}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("with a ResponseSchema the reply must hold the schema's properties, with the values asked for "+
			"(-want +got):\n%s", diff)
	}
}

// decodeObject decodes text, which must be exactly one JSON object.
func decodeObject(text string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var object map[string]any
	if err := dec.Decode(&object); err != nil {
		return nil, err
	}
	if object == nil {
		return nil, errors.New("not an object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("text follows the object")
	}
	return object, nil
}

// slowProvider returns a provider from the harness's SlowHarness, or skips
// the test saying why there is none.
func (s *suite) slowProvider(t *testing.T) memcore.LLMProvider {
	t.Helper()
	sh, ok := s.harness(t).(SlowHarness)
	if !ok {
		t.Skip("the harness does not implement llmtest.SlowHarness, so no call can be held in flight")
	}
	p, err := sh.NewSlowProvider(t.Context())
	if reason := conform.UnsupportedReason(err); reason != "" {
		t.Skipf("the harness cannot make a slow provider: %s", reason)
	}
	if err != nil {
		t.Fatalf("llmtest: SlowHarness.NewSlowProvider: %v", err)
	}
	return p
}

// subject is what the shared Context and Errors cases need of this suite.
func (s *suite) subject() conform.Subject[memcore.LLMProvider] {
	return conform.Subject[memcore.LLMProvider]{
		Suite: "llmtest", Noun: "provider", Config: s.cfg,
		New:  func(t *testing.T) memcore.LLMProvider { return s.provider(t, s.harness(t)) },
		Slow: s.slowProvider,
		Failing: func(t *testing.T, kind error) (memcore.LLMProvider, any, error) {
			h := s.harness(t)
			p, err := h.NewFailingProvider(t.Context(), kind)
			return p, h, err
		},
		Call: func(ctx context.Context, p memcore.LLMProvider) error {
			_, err := p.Complete(ctx, greetingRequest())
			return err
		},
	}
}

func (s *suite) testConcurrentCalls(t *testing.T) {
	p := s.provider(t, s.harness(t))
	n := s.cfg.Concurrency
	codewords := newCodewords(n)
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), s.cfg.CallTimeout)
			defer cancel()
			resp, err := p.Complete(ctx, repeatCodewordRequest(codewords[i]))
			results[i] = result{resp, err}
		}()
	}
	_, ok := conform.Within(s.cfg.CallTimeout+s.cfg.CancelGrace, func() struct{} {
		wg.Wait()
		return struct{}{}
	})
	if !ok {
		t.Errorf("%d concurrent calls must all return; some were still running %v after their %v deadline",
			n, s.cfg.CancelGrace, s.cfg.CallTimeout)
		return
	}
	for i, res := range results {
		switch {
		case res.err != nil:
			t.Errorf("concurrent calls must succeed; call %d of %d failed: %v", i, n, res.err)
		case res.resp == nil:
			t.Errorf("concurrent calls must return a response when they return no error; call %d got nil", i)
		case !containsCodeword(res.resp.Text, codewords[i]):
			t.Errorf("each concurrent call must get its own answer: call %d asked to repeat %s, got %q",
				i, codewords[i], res.resp.Text)
		default:
			for j, other := range codewords {
				if j != i && containsCodeword(res.resp.Text, other) {
					t.Errorf("each concurrent call must get its own answer: call %d (codeword %s) got %q, "+
						"which carries call %d's codeword", i, codewords[i], res.resp.Text, j)
				}
			}
		}
	}
}

// The prompts of the suite. See respond.go for the conventions they follow.

func userMessage(text string) memcore.Message {
	return memcore.Message{Role: memcore.RoleUser, Content: text}
}

func greetingRequest() memcore.CompletionRequest {
	return memcore.CompletionRequest{Messages: []memcore.Message{userMessage("Say hello in one short sentence.")}}
}

func systemPromptRequest(codeword string) memcore.CompletionRequest {
	return memcore.CompletionRequest{
		System: fmt.Sprintf("You are taking part in an automated test. The codeword is %s. "+
			"When the user asks for the codeword, reply with the codeword only.", codeword),
		Messages: []memcore.Message{userMessage("What is the codeword? Reply with the codeword only.")},
	}
}

func historyRequest(codeword string) memcore.CompletionRequest {
	return memcore.CompletionRequest{Messages: []memcore.Message{
		userMessage(fmt.Sprintf("Please remember this codeword: %s. Reply with OK.", codeword)),
		{Role: memcore.RoleAssistant, Content: "OK."},
		userMessage("What codeword did I give you in my previous message? Reply with the codeword only."),
	}}
}

func repeatCodewordRequest(codeword string) memcore.CompletionRequest {
	return memcore.CompletionRequest{Messages: []memcore.Message{
		userMessage(fmt.Sprintf("The codeword is %s. Reply with the codeword only.", codeword)),
	}}
}

// answerSchema is the schema of jsonRequest's reply.
const answerSchema = `{
	"type": "object",
	"properties": {
		"codeword": {"type": "string"},
		"count": {"type": "integer"}
	},
	"required": ["codeword", "count"],
	"additionalProperties": false
}`

func jsonRequest(codeword string, count int) memcore.CompletionRequest {
	return memcore.CompletionRequest{
		System: "You are taking part in an automated test. Follow the user's instructions exactly.",
		Messages: []memcore.Message{userMessage(fmt.Sprintf(
			`Reply with a JSON object in which "codeword" is %q and "count" is %d.`, codeword, count))},
		ResponseSchema: &memcore.Schema{
			Name:        "codeword_answer",
			Description: "The codeword and count the user asked for.",
			Definition:  json.RawMessage(answerSchema),
		},
	}
}

var codewordStems = strings.Fields(`AMBER BASALT CEDAR DELTA EMBER FALCON GRANITE HARBOR
	INDIGO JUNIPER KESTREL LANTERN MAGNET NIMBUS ORCHID PEBBLE QUARTZ RAVEN SPRUCE
	TUNDRA UMBER VIOLET WALNUT XENON YARROW ZEPHYR`)

// newCodewords returns n distinct random codewords such as "CEDAR-4821",
// new in every run so that no answer can be remembered from an earlier one.
func newCodewords(n int) []string {
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		cw := fmt.Sprintf("%s-%04d", codewordStems[rand.IntN(len(codewordStems))], rand.IntN(10000))
		if !seen[cw] {
			seen[cw] = true
			out = append(out, cw)
		}
	}
	return out
}

// containsCodeword reports whether reply states codeword, in any case.
func containsCodeword(reply, codeword string) bool {
	return strings.Contains(strings.ToUpper(reply), codeword)
}
