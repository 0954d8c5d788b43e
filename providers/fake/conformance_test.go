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

// llmHarness makes fake LLMs of its config, answering as the reference
// model.
type llmHarness struct {
	cfg fake.LLMConfig
}

// newLLM returns a fake LLM of the harness's config changed by change.
func (h llmHarness) newLLM(change func(*fake.LLMConfig)) (memcore.LLMProvider, error) {
	cfg := h.cfg
	cfg.ReplyFunc = playModel
	change(&cfg)
	l, err := fake.NewLLM(cfg)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (h llmHarness) NewProvider(context.Context) (memcore.LLMProvider, error) {
	return h.newLLM(func(*fake.LLMConfig) {})
}

func (h llmHarness) NewFailingProvider(_ context.Context, kind error) (memcore.LLMProvider, error) {
	return h.newLLM(func(c *fake.LLMConfig) { c.FailNext, c.FailWith = 1, kind })
}

func (h llmHarness) NewSlowProvider(context.Context) (memcore.LLMProvider, error) {
	return h.newLLM(func(c *fake.LLMConfig) { c.Latency = time.Hour })
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
		cfg  fake.LLMConfig
	}{
		{"Default", fake.LLMConfig{}},
		{"Latency", fake.LLMConfig{Latency: time.Millisecond}},
		{"Model", fake.LLMConfig{Model: "fake-large"}},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			llmtest.Run(t, llmHarness{cfg: c.cfg}.maker(), llmtest.Config{})
		})
	}
}

// newHarness returns an embedHarness over embedders of cfg.
func newHarness(cfg fake.EmbedderConfig) embedtest.HarnessMaker {
	return func(context.Context, *testing.T) (embedtest.Harness, error) {
		return &embedHarness{cfg: cfg}, nil
	}
}

// embedHarness makes fake embedders of its config and counts the calls of
// all of them.
type embedHarness struct {
	cfg fake.EmbedderConfig

	mu        sync.Mutex
	embedders []*fake.Embedder
}

// newEmbedder returns a fake embedder of the harness's config changed by
// change.
func (h *embedHarness) newEmbedder(change func(*fake.EmbedderConfig)) (memcore.Embedder, error) {
	cfg := h.cfg
	change(&cfg)
	e, err := fake.NewEmbedder(cfg)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.embedders = append(h.embedders, e)
	return e, nil
}

func (h *embedHarness) NewEmbedder(context.Context) (memcore.Embedder, error) {
	return h.newEmbedder(func(*fake.EmbedderConfig) {})
}

func (h *embedHarness) NewFailingEmbedder(_ context.Context, kind error) (memcore.Embedder, error) {
	return h.newEmbedder(func(c *fake.EmbedderConfig) { c.FailNext, c.FailWith = 1, kind })
}

func (h *embedHarness) NewSlowEmbedder(context.Context) (memcore.Embedder, error) {
	return h.newEmbedder(func(c *fake.EmbedderConfig) { c.Latency = time.Hour })
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
	return embedtest.Capabilities{MaxBatch: h.cfg.MaxBatch, Dimension: h.cfg.Dimension}
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
		cfg  fake.EmbedderConfig
	}{
		{"Default", fake.DefaultEmbedderConfig()},
		{"Dimension64MaxBatch3", fake.EmbedderConfig{Dimension: 64, MaxBatch: 3}},
		{"Dimension1024MaxBatch16", fake.EmbedderConfig{Dimension: 1024, MaxBatch: 16}},
		{"Latency", fake.EmbedderConfig{Dimension: 128, MaxBatch: 8, Latency: time.Millisecond}},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			embedtest.Run(t, newHarness(c.cfg), embedtest.Config{})
		})
	}
}
