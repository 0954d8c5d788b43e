package llmtest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/conformance/internal/conform"
	"github.com/forgemem/forgemem/conformance/llmtest"
	"github.com/forgemem/forgemem/memcore"
)

// The suite must pass a correct provider and fail a broken one on exactly the
// rules it breaks. Run takes a *testing.T, so TestSuiteJudgesProviders runs
// the suite in a subprocess — this test binary, running
// TestHelperRunSuite with brokenEnv naming a case — and reads which subtests
// failed.

const brokenEnv = "FORGEMEM_LLMTEST_CASE"

// defects make testProvider break rules, one defect per rule.
type defects struct {
	dropSystem    bool  // sends no system prompt
	dropHistory   bool  // sends only the last message
	ignoreSchema  bool  // sends no response schema
	ignoreContext bool  // neither checks nor watches ctx
	noUsage       bool  // reports no token usage
	stickyAnswer  bool  // answers every call with its first answer
	failureKind   error // when set, reports every failure as this kind
	stringErrors  bool  // reports failures as bare strings
}

// testAPIError is testProvider's native error.
type testAPIError struct{ status int }

func (e *testAPIError) Error() string { return fmt.Sprintf("test api: status %d", e.status) }

// testProvider plays the model with llmtest.Respond, except where its
// defects say otherwise.
type testProvider struct {
	defects
	slow bool  // calls last until ctx ends
	fail error // every call fails with this

	mu    sync.Mutex
	first *memcore.CompletionResponse
}

func (p *testProvider) Complete(ctx context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	if !p.ignoreContext {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if p.slow {
		if p.ignoreContext {
			time.Sleep(time.Hour) // the defect: a call that cannot be stopped
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if p.fail != nil {
		return nil, p.fail
	}
	if p.dropSystem {
		req.System = ""
	}
	if p.dropHistory {
		req.Messages = req.Messages[len(req.Messages)-1:]
	}
	if p.ignoreSchema {
		req.ResponseSchema = nil
	}
	text, err := llmtest.Respond(req)
	if err != nil {
		return nil, fmt.Errorf("testprovider: %w: %w", memcore.ErrInvalidRequest, &testAPIError{400})
	}
	resp := &memcore.CompletionResponse{Text: text}
	if !p.noUsage {
		resp.Usage = memcore.Usage{InputTokens: 10, OutputTokens: len(text)}
	}
	if p.stickyAnswer {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.first == nil {
			p.first = resp
		}
		return p.first, nil
	}
	return resp, nil
}

var statusOf = map[error]int{
	memcore.ErrRateLimited:     429,
	memcore.ErrUnauthenticated: 401,
	memcore.ErrUnavailable:     503,
	memcore.ErrInputTooLarge:   413,
	memcore.ErrInvalidRequest:  400,
	memcore.ErrInvalidResponse: 200,
}

// testHarness makes testProviders with its defects, and implements every
// optional harness interface.
type testHarness struct {
	defects
	caps llmtest.Capabilities
}

func (h *testHarness) NewProvider(context.Context) (memcore.LLMProvider, error) {
	return &testProvider{defects: h.defects}, nil
}

func (h *testHarness) NewFailingProvider(_ context.Context, kind error) (memcore.LLMProvider, error) {
	var err error
	switch {
	case h.stringErrors:
		err = errors.New("test api: " + kind.Error())
	case h.failureKind != nil:
		err = fmt.Errorf("testprovider: %w: %w", h.failureKind, &testAPIError{statusOf[kind]})
	default:
		err = fmt.Errorf("testprovider: %w: %w", kind, &testAPIError{statusOf[kind]})
	}
	return &testProvider{defects: h.defects, fail: err}, nil
}

func (h *testHarness) NewSlowProvider(context.Context) (memcore.LLMProvider, error) {
	return &testProvider{defects: h.defects, slow: true}, nil
}

func (h *testHarness) AsNative(err error) bool {
	var native *testAPIError
	return errors.As(err, &native)
}

func (h *testHarness) Capabilities() llmtest.Capabilities { return h.caps }
func (h *testHarness) Close()                             {}

// minimalHarness hides testHarness's optional interfaces, and cannot make
// providers fail as anything but rate limited.
type minimalHarness struct{ h *testHarness }

func (m minimalHarness) NewProvider(ctx context.Context) (memcore.LLMProvider, error) {
	return m.h.NewProvider(ctx)
}

func (m minimalHarness) NewFailingProvider(ctx context.Context, kind error) (memcore.LLMProvider, error) {
	if kind != memcore.ErrRateLimited {
		return nil, fmt.Errorf("%w: the test API only ever says 429", errors.ErrUnsupported)
	}
	return m.h.NewFailingProvider(ctx, kind)
}

func (m minimalHarness) Capabilities() llmtest.Capabilities { return m.h.caps }
func (m minimalHarness) Close()                             {}

var allKinds = []string{"RateLimited", "Unauthenticated", "Unavailable", "InputTooLarge", "InvalidRequest", "InvalidResponse"}

// perKind returns "Errors/<kind>/<suffix>" for each of kinds.
func perKind(suffix string, kinds ...string) []string {
	var out []string
	for _, k := range kinds {
		out = append(out, "Errors/"+k+"/"+suffix)
	}
	return out
}

// suiteCase is a harness and what the suite must say about it.
type suiteCase struct {
	name        string
	harness     llmtest.Harness
	wantFailed  []string // leaf subtests
	wantSkipped []string // checked when not nil
	// cancelGrace, when set, replaces the generous default grace that keeps
	// the correct cases from failing on a busy machine (the cases run in
	// parallel subprocesses, maybe under -race). A provider that ignores
	// cancellation never returns, so a short grace catches it as surely.
	cancelGrace time.Duration
}

func (c suiteCase) grace() time.Duration {
	if c.cancelGrace == 0 {
		return 30 * time.Second
	}
	return c.cancelGrace
}

var suiteCases = []suiteCase{
	{
		name:        "Correct",
		harness:     &testHarness{},
		wantSkipped: []string{},
	},
	{
		name: "CorrectWithDeclaredLimitations",
		harness: minimalHarness{&testHarness{
			defects: defects{ignoreSchema: true, noUsage: true},
			caps:    llmtest.Capabilities{NoJSONSchema: "no structured output", NoUsage: "no usage reported"},
		}},
		wantSkipped: []string{
			"Complete/JSONSchemaReply",
			"Complete/ReportsUsage",
			"Context/CanceledInFlight",
			"Context/DeadlineExpiresInFlight",
			"Errors/InputTooLarge",
			"Errors/InvalidRequest",
			"Errors/InvalidResponse",
			"Errors/RateLimited/NativeErrorReachable",
			"Errors/Unauthenticated",
			"Errors/Unavailable",
		},
	},
	{
		name:       "DropsSystemPrompt",
		harness:    &testHarness{defects: defects{dropSystem: true}},
		wantFailed: []string{"Complete/SystemPromptReachesModel"},
	},
	{
		name:       "DropsHistory",
		harness:    &testHarness{defects: defects{dropHistory: true}},
		wantFailed: []string{"Complete/HistoryReachesModel"},
	},
	{
		name:       "IgnoresSchema",
		harness:    &testHarness{defects: defects{ignoreSchema: true}},
		wantFailed: []string{"Complete/JSONSchemaReply"},
	},
	{
		name:       "ReportsNoUsage",
		harness:    &testHarness{defects: defects{noUsage: true}},
		wantFailed: []string{"Complete/ReportsUsage"},
	},
	{
		name:        "IgnoresCancellation",
		harness:     &testHarness{defects: defects{ignoreContext: true}},
		cancelGrace: time.Second,
		wantFailed: []string{
			"Context/CanceledBeforeCall",
			"Context/CanceledInFlight",
			"Context/DeadlineExpiredBeforeCall",
			"Context/DeadlineExpiresInFlight",
		},
	},
	{
		name:       "StringErrors",
		harness:    &testHarness{defects: defects{stringErrors: true}},
		wantFailed: append(perKind("MatchesKind", allKinds...), perKind("NativeErrorReachable", allKinds...)...),
	},
	{
		name:       "EveryFailureUnavailable",
		harness:    &testHarness{defects: defects{failureKind: memcore.ErrUnavailable}},
		wantFailed: perKind("MatchesKind", "InputTooLarge", "InvalidRequest", "InvalidResponse", "RateLimited", "Unauthenticated"),
	},
	{
		name:       "AnswersEveryCallAlike",
		harness:    &testHarness{defects: defects{stickyAnswer: true}},
		wantFailed: []string{"ConcurrentCalls"},
	},
}

// TestHelperRunSuite runs the suite against the case named by brokenEnv. It
// does nothing in a normal test run.
func TestHelperRunSuite(t *testing.T) {
	name := os.Getenv(brokenEnv)
	if name == "" {
		t.Skip("runs only as the subprocess of TestSuiteJudgesProviders")
	}
	for _, c := range suiteCases {
		if c.name == name {
			llmtest.Run(t, func(context.Context, *testing.T) (llmtest.Harness, error) { return c.harness, nil },
				llmtest.Config{CancelGrace: c.grace(), CallTimeout: 10 * time.Second})
			return
		}
	}
	t.Fatalf("no suite case named %q", name)
}

func TestSuiteJudgesProviders(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary once per case")
	}
	for _, c := range suiteCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			conform.CheckSuiteRun(t, "TestHelperRunSuite", c.wantFailed, c.wantSkipped, brokenEnv+"="+c.name)
		})
	}
}

// TestSkipsSayWhy checks that the reasons the harness gives reach the skip
// messages.
func TestSkipsSayWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	got := conform.RunTestInSubprocess(t, "TestHelperRunSuite", 2*time.Minute, brokenEnv+"=CorrectWithDeclaredLimitations")
	for _, reason := range []string{
		"no structured output",
		"no usage reported",
		"the test API only ever says 429",
		"does not implement llmtest.SlowHarness",
		"does not implement llmtest.NativeErrorHarness",
	} {
		if !strings.Contains(got.Output, reason) {
			t.Errorf("no skip message gives the reason %q; output:\n%s", reason, got.Output)
		}
	}
}
