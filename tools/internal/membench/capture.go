package membench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// measureCapture measures what capture costs the agent — OnTurnComplete
// with a 200-message window while the classifier is stuck — and the
// classifier prompt of one pass over a store of cfg.Memories memories.
func measureCapture(ctx context.Context, cfg Config, r *Report) error {
	window := conversation(200, 1)
	if err := measureTurnHandOff(ctx, window, r); err != nil {
		return err
	}
	return measureClassifierPrompt(ctx, cfg, window, r)
}

// measureTurnHandOff measures OnTurnComplete with window while the
// classifier is stuck.
func measureTurnHandOff(ctx context.Context, window []memcore.Message, r *Report) error {
	stuck := make(chan struct{})
	blocked, err := fake.NewLLM(fake.LLMConfig{ReplyFunc: func(ctx context.Context, _ memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		select {
		case <-stuck:
		case <-ctx.Done():
		}
		return nil, errors.New("membench: the classifier is stuck on purpose")
	}})
	if err != nil {
		return err
	}
	p, err := memcapture.NewPipeline(blocked, memcore.NewMemStore(), memcapture.Config{})
	if err != nil {
		return err
	}
	obs, err := memcapture.NewObserver(p)
	if err != nil {
		return err
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			obs.OnTurnComplete(window, "membench")
		}
	})
	close(stuck)
	closeCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := p.Close(closeCtx); err != nil {
		return fmt.Errorf("closing the stuck pipeline: %w", err)
	}
	r.CaptureTurnNs = float64(res.NsPerOp())
	r.CaptureTurnAllocs = res.AllocsPerOp()
	return nil
}

// measureClassifierPrompt runs one pass over window and a store of
// cfg.Memories memories, and measures the classifier's request: the list
// of existing memories against its budget, and the whole prompt.
func measureClassifierPrompt(ctx context.Context, cfg Config, window []memcore.Message, r *Report) error {
	store := memcore.NewMemStore()
	rng := newRand(3)
	var ids []string
	for i := range cfg.Memories {
		m := memory(rng, i, ids)
		if err := store.Write(ctx, m); err != nil {
			return err
		}
		ids = append(ids, m.Meta.ID)
	}
	classifier, err := fake.NewLLM(fake.LLMConfig{Replies: []string{`{"memories": []}`}})
	if err != nil {
		return err
	}
	p, err := memcapture.NewPipeline(classifier, store, memcapture.Config{})
	if err != nil {
		return err
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	p.Enqueue(memcapture.TriggerEvent{Kind: memcore.TriggerCompaction, Messages: window, SessionID: "membench"})
	closeCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := p.Close(closeCtx); err != nil {
		return fmt.Errorf("the capture pass: %w", err)
	}
	reqs := classifier.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != 1 {
		return fmt.Errorf("the capture pass made %d classifier calls, want 1", len(reqs))
	}
	req := reqs[0]
	var list strings.Builder
	for _, line := range strings.Split(req.Messages[0].Content, "\n") {
		if strings.HasPrefix(line, "- [mem_") {
			list.WriteString(line + "\n")
			r.CaptureListedMemories++
		}
	}
	if r.CaptureListedMemories == 0 {
		return fmt.Errorf("the classifier prompt lists no existing memories; cannot measure the list")
	}
	r.CapturePromptTokens = memcore.EstimateTokens(list.String())
	r.CapturePromptBudgetTokens = memcapture.DefaultExistingTokens
	r.CaptureWholePromptTokens = memcore.EstimateTokens(req.System) + memcore.WindowTokens(req.Messages)
	return nil
}
