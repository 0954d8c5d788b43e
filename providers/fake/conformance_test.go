package fake_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/conformance/embedtest"
	"github.com/forgemem/forgemem/conformance/llmtest"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// playModel is the reply function of the fake LLM under the suite: the
// suite's reference model.
func playModel(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	text, err := llmtest.Respond(req)
	if err != nil {
		return nil, err
	}
	return &memcore.CompletionResponse{Text: text}, nil
}

func asAPIError(err error) bool {
	var apiErr *fake.APIError
	return errors.As(err, &apiErr)
}

// llmHarness makes fake LLMs with its options plus the reference model.
type llmHarness struct {
	opts []fake.LLMOption
}

func (h llmHarness) newLLM(more ...fake.LLMOption) (memcore.LLMProvider, error) {
	opts := append([]fake.LLMOption{fake.WithReplyFunc(playModel)}, h.opts...)
	l, err := fake.NewLLM(append(opts, more...)...)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (h llmHarness) NewProvider(context.Context) (memcore.LLMProvider, error) {
	return h.newLLM()
}

func (h llmHarness) NewFailingProvider(_ context.Context, kind error) (memcore.LLMProvider, error) {
	return h.newLLM(fake.WithFailNext(1, kind))
}

func (h llmHarness) NewSlowProvider(context.Context) (memcore.LLMProvider, error) {
	return h.newLLM(fake.WithLatency(time.Hour))
}

func (llmHarness) AsNative(err error) bool            { return asAPIError(err) }
func (llmHarness) Capabilities() llmtest.Capabilities { return llmtest.Capabilities{} }
func (llmHarness) Close()                             {}

func (h llmHarness) maker() llmtest.HarnessMaker {
	return func(context.Context, *testing.T) (llmtest.Harness, error) { return h, nil }
}

var (
	_ llmtest.SlowHarness        = llmHarness{}
	_ llmtest.NativeErrorHarness = llmHarness{}
)

func TestLLMConformance(t *testing.T) {
	configs := []struct {
		name string
		opts []fake.LLMOption
	}{
		{"Default", nil},
		{"WithLatency", []fake.LLMOption{fake.WithLatency(time.Millisecond)}},
		{"WithModel", []fake.LLMOption{fake.WithModel("fake-large")}},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			llmtest.Run(t, llmHarness{opts: c.opts}.maker())
		})
	}
}

// embedHarnessConfig is the configuration of the fake embedders of an
// embedHarness.
type embedHarnessConfig struct {
	dim, maxBatch int
	opts          []fake.EmbedderOption
}

func (c embedHarnessConfig) newHarness(context.Context, *testing.T) (embedtest.Harness, error) {
	return &embedHarness{cfg: c}, nil
}

// embedHarness makes fake embedders and counts the calls of all of them.
type embedHarness struct {
	cfg embedHarnessConfig

	mu        sync.Mutex
	embedders []*fake.Embedder
}

func (h *embedHarness) newEmbedder(more ...fake.EmbedderOption) (memcore.Embedder, error) {
	opts := append([]fake.EmbedderOption{fake.WithDimension(h.cfg.dim), fake.WithMaxBatch(h.cfg.maxBatch)}, h.cfg.opts...)
	e, err := fake.NewEmbedder(append(opts, more...)...)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.embedders = append(h.embedders, e)
	return e, nil
}

func (h *embedHarness) NewEmbedder(context.Context) (memcore.Embedder, error) {
	return h.newEmbedder()
}

func (h *embedHarness) NewFailingEmbedder(_ context.Context, kind error) (memcore.Embedder, error) {
	return h.newEmbedder(fake.WithFailNext(1, kind))
}

func (h *embedHarness) NewSlowEmbedder(context.Context) (memcore.Embedder, error) {
	return h.newEmbedder(fake.WithLatency(time.Hour))
}

func (h *embedHarness) Calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, e := range h.embedders {
		n += e.Calls()
	}
	return n
}

func (h *embedHarness) Capabilities() embedtest.Capabilities {
	return embedtest.Capabilities{MaxBatch: h.cfg.maxBatch, Dimension: h.cfg.dim}
}

func (*embedHarness) AsNative(err error) bool { return asAPIError(err) }
func (*embedHarness) Close()                  {}

var (
	_ embedtest.CallCounter        = (*embedHarness)(nil)
	_ embedtest.SlowHarness        = (*embedHarness)(nil)
	_ embedtest.NativeErrorHarness = (*embedHarness)(nil)
)

func TestEmbedderConformance(t *testing.T) {
	configs := []struct {
		name string
		cfg  embedHarnessConfig
	}{
		{"Default", embedHarnessConfig{dim: fake.DefaultDimension}},
		{"Dimension64MaxBatch3", embedHarnessConfig{dim: 64, maxBatch: 3}},
		{"Dimension1024MaxBatch16", embedHarnessConfig{dim: 1024, maxBatch: 16}},
		{"WithLatency", embedHarnessConfig{dim: 128, maxBatch: 8,
			opts: []fake.EmbedderOption{fake.WithLatency(time.Millisecond)}}},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			embedtest.Run(t, c.cfg.newHarness)
		})
	}
}
