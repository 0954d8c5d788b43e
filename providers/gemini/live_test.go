package gemini

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/forgemem/forgemem/conformance/embedtest"
	"github.com/forgemem/forgemem/conformance/llmtest"
	"github.com/forgemem/forgemem/memcore"
)

// The live tests run both suites against the real Gemini API. They run
// only when FORGEMEM_LIVE=1 and GEMINI_API_KEY are both set, and are
// skipped with the reason otherwise: an API key in the environment alone
// never makes a test reach the network. FORGEMEM_GEMINI_MODEL and
// FORGEMEM_GEMINI_EMBEDDING_MODEL override the models.

func liveConfig(t *testing.T) Config {
	t.Helper()
	if os.Getenv("FORGEMEM_LIVE") != "1" {
		t.Skip("live test: set FORGEMEM_LIVE=1 and GEMINI_API_KEY to run it against the Gemini API")
	}
	key := os.Getenv("GEMINI_API_KEY")
	if key == "" {
		t.Skip("live test: FORGEMEM_LIVE=1 but GEMINI_API_KEY is not set")
	}
	return Config{
		APIKey:         key,
		Model:          os.Getenv("FORGEMEM_GEMINI_MODEL"),
		EmbeddingModel: os.Getenv("FORGEMEM_GEMINI_EMBEDDING_MODEL"),
		Dimensions:     768,
	}
}

// liveRetry is the policy of the working live providers: the free tier's
// rate limits are not what the suites test.
var liveRetry = memcore.RetryPolicy{MaxAttempts: 4, BaseDelay: 2 * time.Second, MaxDelay: 20 * time.Second}

type retryingLLM struct{ c *Client }

func (r retryingLLM) Complete(ctx context.Context, req memcore.CompletionRequest) (resp *memcore.CompletionResponse, err error) {
	err = memcore.Retry(ctx, liveRetry, func(ctx context.Context) error {
		resp, err = r.c.Complete(ctx, req)
		return err
	})
	return resp, err
}

type retryingEmbedder struct{ c *Client }

func (r retryingEmbedder) Embed(ctx context.Context, texts []string) (vecs [][]float32, err error) {
	err = memcore.Retry(ctx, liveRetry, func(ctx context.Context) error {
		vecs, err = r.c.Embed(ctx, texts)
		return err
	})
	return vecs, err
}

func (r retryingEmbedder) Model() string { return r.c.Model() }

// liveHarness makes clients of the real API. It can make them fail only as
// the API can be made to on purpose: with a wrong key (Unauthenticated)
// and an unknown model (InvalidRequest).
type liveHarness struct {
	t   *testing.T
	cfg Config
}

func (h liveHarness) client(cfg Config) (*Client, error) { return New(cfg) }

func (h liveHarness) failing(kind error) (*Client, error) {
	cfg := h.cfg
	switch kind {
	case memcore.ErrUnauthenticated:
		cfg.APIKey = "AIzaSyThisKeyIsNotValidForForgememLive00"
	case memcore.ErrInvalidRequest:
		cfg.Model = "gemini-0.0-does-not-exist"
		cfg.EmbeddingModel = "gemini-embedding-does-not-exist"
		cfg.Dimensions = 0
	default:
		return nil, fmt.Errorf("the live API cannot be made to fail as %v on purpose: %w", kind, errors.ErrUnsupported)
	}
	return New(cfg)
}

func (h liveHarness) Close() {}

func (h liveHarness) AsNative(err error) bool { return isNative(err) }

type liveLLMHarness struct{ liveHarness }

func (h liveLLMHarness) NewProvider(context.Context) (memcore.LLMProvider, error) {
	c, err := h.client(h.cfg)
	if err != nil {
		return nil, err
	}
	return retryingLLM{c}, nil
}

func (h liveLLMHarness) NewFailingProvider(_ context.Context, kind error) (memcore.LLMProvider, error) {
	return h.failing(kind)
}

func (h liveLLMHarness) Capabilities() llmtest.Capabilities { return llmtest.Capabilities{} }

type liveEmbedHarness struct{ liveHarness }

func (h liveEmbedHarness) NewEmbedder(context.Context) (memcore.Embedder, error) {
	c, err := h.client(h.cfg)
	if err != nil {
		return nil, err
	}
	return retryingEmbedder{c}, nil
}

func (h liveEmbedHarness) NewFailingEmbedder(_ context.Context, kind error) (memcore.Embedder, error) {
	return h.failing(kind)
}

func (h liveEmbedHarness) Capabilities() embedtest.Capabilities {
	return embedtest.Capabilities{
		MaxBatch:         MaxBatchLimit,
		Dimension:        h.cfg.Dimensions,
		Nondeterministic: "the API does not promise bit-identical vectors for identical texts across calls",
	}
}

func TestLiveLLMConformance(t *testing.T) {
	cfg := liveConfig(t)
	llmtest.Run(t, func(_ context.Context, t *testing.T) (llmtest.Harness, error) {
		return liveLLMHarness{liveHarness{t: t, cfg: cfg}}, nil
	}, llmtest.Config{Concurrency: 4})
}

func TestLiveEmbedConformance(t *testing.T) {
	cfg := liveConfig(t)
	embedtest.Run(t, func(_ context.Context, t *testing.T) (embedtest.Harness, error) {
		return liveEmbedHarness{liveHarness{t: t, cfg: cfg}}, nil
	}, embedtest.Config{Concurrency: 4})
}
