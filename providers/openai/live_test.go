package openai_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/forgemem/forgemem/conformance/embedtest"
	"github.com/forgemem/forgemem/conformance/llmtest"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/openai"
)

// Live runs of both suites against api.openai.com. They need
// OPENAI_API_KEY and FORGEMEM_LIVE=1, and are skipped otherwise. The models
// can be changed with OPENAI_LIVE_MODEL and OPENAI_LIVE_EMBEDDING_MODEL.

// liveConfig returns the configuration of the live tests, or skips t.
func liveConfig(t *testing.T) openai.Config {
	t.Helper()
	key := os.Getenv("OPENAI_API_KEY")
	switch {
	case os.Getenv("FORGEMEM_LIVE") != "1":
		t.Skip("live test: set FORGEMEM_LIVE=1 and OPENAI_API_KEY to run it against the OpenAI API")
	case key == "":
		t.Skip("live test: FORGEMEM_LIVE=1 but OPENAI_API_KEY is not set")
	}
	return openai.Config{
		APIKey:         key,
		BaseURL:        os.Getenv("OPENAI_BASE_URL"),
		Model:          envOr("OPENAI_LIVE_MODEL", "gpt-4o-mini"),
		EmbeddingModel: envOr("OPENAI_LIVE_EMBEDDING_MODEL", "text-embedding-3-small"),
		MaxBatch:       liveBatch,
	}
}

// liveBatch keeps the suite's large batch small (2×8+1 texts).
const liveBatch = 8

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// liveHarness makes clients for the live API. Failures it can produce
// without a test server: a wrong key (unauthenticated), an unknown model
// (invalid request) and an oversized input (input too large); the others
// are skipped, with the reason.
type liveHarness struct {
	cfg openai.Config
}

func (h *liveHarness) NewProvider(context.Context) (memcore.LLMProvider, error) {
	return openai.New(h.cfg)
}
func (h *liveHarness) NewEmbedder(context.Context) (memcore.Embedder, error) {
	return openai.New(h.cfg)
}
func (h *liveHarness) Close() {}

func (h *liveHarness) failing(kind error) (*openai.Client, error) {
	cfg := h.cfg
	switch kind {
	case memcore.ErrUnauthenticated:
		cfg.APIKey = "sk-forgemem-live-test-invalid"
	case memcore.ErrInvalidRequest:
		cfg.Model, cfg.EmbeddingModel, cfg.AllowUnknownModels = "gpt-forgemem-no-such-model", "text-embedding-forgemem-none", true
	default:
		return nil, fmt.Errorf("the live API cannot be made to fail as %v on demand: %w", kind, errors.ErrUnsupported)
	}
	return openai.New(cfg)
}

func (h *liveHarness) AsNative(err error) bool {
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	return errors.As(err, &apiErr) || errors.As(err, &reqErr)
}

type liveLLM struct{ *liveHarness }

func (h liveLLM) NewFailingProvider(_ context.Context, kind error) (memcore.LLMProvider, error) {
	return h.failing(kind)
}
func (h liveLLM) Capabilities() llmtest.Capabilities { return llmtest.Capabilities{} }

type liveEmbed struct{ *liveHarness }

func (h liveEmbed) NewFailingEmbedder(_ context.Context, kind error) (memcore.Embedder, error) {
	return h.failing(kind)
}
func (h liveEmbed) Capabilities() embedtest.Capabilities {
	return embedtest.Capabilities{
		MaxBatch:         liveBatch,
		Nondeterministic: "OpenAI's embeddings vary slightly from call to call",
	}
}

func TestLiveLLMConformance(t *testing.T) {
	cfg := liveConfig(t)
	llmtest.Run(t, func(_ context.Context, t *testing.T) (llmtest.Harness, error) {
		return liveLLM{&liveHarness{cfg: cfg}}, nil
	}, llmtest.Config{Concurrency: 3})
}

func TestLiveEmbedConformance(t *testing.T) {
	cfg := liveConfig(t)
	embedtest.Run(t, func(_ context.Context, t *testing.T) (embedtest.Harness, error) {
		return liveEmbed{&liveHarness{cfg: cfg}}, nil
	}, embedtest.Config{Concurrency: 3})
}

// TestLiveDimensions checks that the API honours "dimensions".
func TestLiveDimensions(t *testing.T) {
	cfg := liveConfig(t)
	cfg.Dimensions = 64
	c, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	vecs, err := c.Embed(ctx, []string{"tabs, not spaces"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 1 || len(vecs[0]) != 64 {
		t.Errorf("got %d vectors of length %d; want 1 of 64", len(vecs), len(vecs[0]))
	}
}
