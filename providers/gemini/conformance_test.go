package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/genai"

	"github.com/forgemem/forgemem/conformance/embedtest"
	"github.com/forgemem/forgemem/conformance/llmtest"
	"github.com/forgemem/forgemem/memcore"
)

// The conformance suites run against the fake Gemini API of server_test.go:
// every provider a harness makes is a real Client talking HTTP to an
// httptest server that answers in the Gemini wire format, playing the
// model with the suite's reference responder.

// failureFor is the answer, in the Gemini wire format, that makes a call
// fail as kind, the way the real API fails: a 429 RESOURCE_EXHAUSTED, a
// 503 UNAVAILABLE, a 400 naming the token limit, a 400 INVALID_ARGUMENT,
// a 200 whose body is cut short. An unauthenticated call is not scripted:
// the client is given a wrong key and the server answers it as Gemini
// does, with 400 API_KEY_INVALID.
func failureFor(t testing.TB, kind error) (answer canned, wrongKey bool, err error) {
	switch kind {
	case memcore.ErrRateLimited:
		return fixtureError(t, "429_resource_exhausted.json"), false, nil
	case memcore.ErrUnauthenticated:
		return canned{}, true, nil
	case memcore.ErrUnavailable:
		return fixtureError(t, "503_unavailable.json"), false, nil
	case memcore.ErrInputTooLarge:
		return fixtureError(t, "400_token_limit.json"), false, nil
	case memcore.ErrInvalidRequest:
		return fixtureError(t, "400_invalid_argument.json"), false, nil
	case memcore.ErrInvalidResponse:
		return okFixture(t, "malformed_truncated.txt"), false, nil
	}
	return canned{}, false, fmt.Errorf("no failure for %v: %w", kind, errors.ErrUnsupported)
}

// isNative reports whether err still carries the SDK's error: the
// genai.APIError of an error answer, or, for a 2xx body that could not be
// decoded, the JSON decoding error the SDK returned.
func isNative(err error) bool {
	var apiErr genai.APIError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	return errors.As(err, &apiErr) || errors.As(err, &syntaxErr) || errors.As(err, &typeErr)
}

// harness is the offline harness of both suites. Its working providers
// share one fake server, whose requests it counts; failing and slow ones
// get a server of their own.
type harness struct {
	t   *testing.T
	cfg Config // fields other than APIKey and BaseURL
	srv *fakeServer
}

func newHarness(t *testing.T, cfg Config) *harness {
	return &harness{t: t, cfg: cfg, srv: newFakeServer(t)}
}

func (h *harness) working() *Client {
	return h.srv.client(h.t, h.cfg)
}

func (h *harness) failing(kind error) (*Client, error) {
	srv := newFakeServer(h.t)
	answer, wrongKey, err := failureFor(h.t, kind)
	if err != nil {
		return nil, err
	}
	cfg := h.cfg
	if wrongKey {
		cfg.APIKey = "AIzaSy-not-the-right-key"
	} else {
		srv.failNext(1, answer)
	}
	return srv.client(h.t, cfg), nil
}

func (h *harness) slow() *Client {
	srv := newFakeServer(h.t)
	srv.holdRequests()
	return srv.client(h.t, h.cfg)
}

// Close is a no-op: each server is closed by the cleanup of the subtest
// that made it.
func (h *harness) Close() {}

// AsNative implements the suites' NativeErrorHarness.
func (h *harness) AsNative(err error) bool { return isNative(err) }

// Calls implements embedtest.CallCounter: the requests the working
// providers made.
func (h *harness) Calls() int { return len(h.srv.Requests()) }

// llmHarness adapts harness to llmtest.Harness.
type llmHarness struct{ *harness }

func (h llmHarness) NewProvider(context.Context) (memcore.LLMProvider, error) {
	return h.working(), nil
}

func (h llmHarness) NewFailingProvider(_ context.Context, kind error) (memcore.LLMProvider, error) {
	return h.failing(kind)
}

func (h llmHarness) NewSlowProvider(context.Context) (memcore.LLMProvider, error) {
	return h.slow(), nil
}

func (h llmHarness) Capabilities() llmtest.Capabilities { return llmtest.Capabilities{} }

var (
	_ llmtest.Harness            = llmHarness{}
	_ llmtest.SlowHarness        = llmHarness{}
	_ llmtest.NativeErrorHarness = llmHarness{}
)

func TestLLMConformance(t *testing.T) {
	llmtest.Run(t, func(_ context.Context, t *testing.T) (llmtest.Harness, error) {
		return llmHarness{newHarness(t, Config{})}, nil
	}, llmtest.Config{})
}

// TestLLMConformanceIgnoresEnvironment runs the suite with the SDK's
// environment variables set to values that would break every call if the
// client used them.
func TestLLMConformanceIgnoresEnvironment(t *testing.T) {
	setJunkEnvironment(t, false)
	llmtest.Run(t, func(_ context.Context, t *testing.T) (llmtest.Harness, error) {
		return llmHarness{newHarness(t, Config{})}, nil
	}, llmtest.Config{})
}

// embedHarness adapts harness to embedtest.Harness.
type embedHarness struct{ *harness }

func (h embedHarness) NewEmbedder(context.Context) (memcore.Embedder, error) {
	return h.working(), nil
}

func (h embedHarness) NewFailingEmbedder(_ context.Context, kind error) (memcore.Embedder, error) {
	if kind == memcore.ErrInvalidResponse {
		// A 200 whose embeddings are not vectors: the SDK's decoding
		// error is the native error. (A reply with the wrong number of
		// embeddings, which has no native error, is tested in
		// TestEmbedReplyOrder.)
		srv := newFakeServer(h.t)
		srv.failNext(1, okFixture(h.t, "malformed_embeddings_type.json"))
		return srv.client(h.t, h.cfg), nil
	}
	return h.failing(kind)
}

func (h embedHarness) NewSlowEmbedder(context.Context) (memcore.Embedder, error) {
	return h.slow(), nil
}

func (h embedHarness) Capabilities() embedtest.Capabilities {
	maxBatch := h.cfg.MaxBatch
	if maxBatch == 0 {
		maxBatch = MaxBatchLimit
	}
	return embedtest.Capabilities{MaxBatch: maxBatch, Dimension: h.cfg.Dimensions}
}

var (
	_ embedtest.Harness            = embedHarness{}
	_ embedtest.SlowHarness        = embedHarness{}
	_ embedtest.NativeErrorHarness = embedHarness{}
	_ embedtest.CallCounter        = embedHarness{}
)

func TestEmbedConformance(t *testing.T) {
	for _, cfg := range []Config{
		{Dimensions: 768},
		// Small batches, so that splitting is exercised with many calls.
		{Dimensions: 128, MaxBatch: 7},
		{Dimensions: 256, TaskType: TaskRetrievalQuery},
	} {
		t.Run(fmt.Sprintf("Dimensions=%d,MaxBatch=%d,TaskType=%s", cfg.Dimensions, cfg.MaxBatch, cfg.TaskType), func(t *testing.T) {
			embedtest.Run(t, func(_ context.Context, t *testing.T) (embedtest.Harness, error) {
				return embedHarness{newHarness(t, cfg)}, nil
			}, embedtest.Config{})
		})
	}
}

func TestEmbedConformanceIgnoresEnvironment(t *testing.T) {
	setJunkEnvironment(t, false)
	embedtest.Run(t, func(_ context.Context, t *testing.T) (embedtest.Harness, error) {
		return embedHarness{newHarness(t, Config{Dimensions: 768})}, nil
	}, embedtest.Config{})
}
