package memcapture

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// BenchmarkOnTurnComplete measures the agent's cost of one turn with a
// 200-message window while the pipeline is busy with a classifier call
// that never returns (so only the hand-off is measured).
func BenchmarkOnTurnComplete(b *testing.B) {
	llm, entered, _ := blockingLLM(b, nothing)
	p, err := NewPipeline(llm, memcore.NewMemStore(), Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := p.Start(ctx); err != nil {
		b.Fatal(err)
	}
	obs, err := NewObserver(p)
	if err != nil {
		b.Fatal(err)
	}
	window := make([]memcore.Message, 200)
	for i := range window {
		window[i] = memcore.Message{Role: memcore.RoleUser, Content: fmt.Sprintf("message %d: %s", i, strings.Repeat("text ", 40))}
		if i%2 == 1 {
			window[i].Role = memcore.RoleAssistant
		}
	}
	obs.OnTurnComplete(window, "s")
	<-entered

	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		obs.OnTurnComplete(window, "s")
	}
	b.StopTimer()
	if s := p.Stats(); s.Coalesced == 0 {
		b.Fatal("no trigger was coalesced")
	}
}

// BenchmarkOnTurnCompleteNotDue measures turns at cadence 10: nine calls of
// ten only count the turn, the tenth hands the window over (so B/op is a
// tenth of a copy).
func BenchmarkOnTurnCompleteNotDue(b *testing.B) {
	p, err := NewPipeline(newLLM(b, fake.LLMConfig{}), memcore.NewMemStore(), Config{Cadence: MaxCadence})
	if err != nil {
		b.Fatal(err)
	}
	obs, err := NewObserver(p)
	if err != nil {
		b.Fatal(err)
	}
	window := make([]memcore.Message, 200)
	b.ReportAllocs()
	for b.Loop() {
		obs.OnTurnComplete(window, "s")
	}
}

// BenchmarkPass10kMemories measures one capture pass over a store of
// 10,000 memories (MemStore) and reports the estimated tokens of the
// prompt's existing-memories list and of the whole prompt against their
// budgets. A pass that chooses the list (pin=new: the first of a window
// step) is measured apart from one that finds it pinned (pin=kept).
func BenchmarkPass10kMemories(b *testing.B) {
	for _, bc := range []struct {
		withEmbedder, repin bool
	}{{false, true}, {false, false}, {true, true}, {true, false}} {
		name := "newest-first"
		if bc.withEmbedder {
			name = "ranked-by-embedder"
		}
		if bc.repin {
			name += "/pin=new"
		} else {
			name += "/pin=kept"
		}
		withEmbedder := bc.withEmbedder
		b.Run(name, func(b *testing.B) {
			store := memcore.NewMemStore()
			ctx := context.Background()
			for i := range 10_000 {
				m := &memcore.MemoryFile{Meta: memcore.MemoryMeta{
					ID: memcore.NewMemoryID(), CreatedAt: t0.Add(time.Duration(i) * time.Second), Version: 1,
					Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions,
				}, Content: fmt.Sprintf("Convention %d: module %d keeps its generated code under gen/%d and regenerates it with make gen.", i, i%97, i%13)}
				if i%2 == 1 {
					m.Meta.Scope, m.Meta.Category = memcore.ScopeUser, memcore.CategoryCodingPreferences
				}
				if err := store.Write(ctx, m); err != nil {
					b.Fatal(err)
				}
			}
			llm := newLLM(b, always(nothing))
			var cfg Config
			if withEmbedder {
				cfg.Embedder = newEmbedder(b, fake.EmbedderConfig{})
			}
			p, err := NewPipeline(llm, store, cfg)
			if err != nil {
				b.Fatal(err)
			}
			window := win("Where does module 42 keep its generated code?", "Under gen/3; run make gen after changing the templates.")
			for i := range 40 {
				window = append(window, win(fmt.Sprintf("question %d about the build", i), "answer "+strings.Repeat("words ", 30))...)
			}
			ev := TriggerEvent{Kind: memcore.TriggerCadence, Messages: window}
			p.process(ctx, ev) // warm the vector cache, as a running process would be
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				p.haveLast = false // classify the same window every time
				if bc.repin {
					p.pins = nil // choose the list again, as at a window step
				}
				p.process(ctx, ev)
			}
			b.StopTimer()
			reqs := llm.Requests()
			last := reqs[len(reqs)-1]
			var listed []string
			for _, l := range strings.Split(existingSection(last), "\n") {
				if strings.HasPrefix(l, "- [") {
					listed = append(listed, l)
				}
			}
			list := memcore.EstimateTokens(strings.Join(listed, "\n") + "\n")
			if list > DefaultExistingTokens {
				b.Fatalf("existing-memories list costs %d tokens, budget %d", list, DefaultExistingTokens)
			}
			b.ReportMetric(float64(list), "list-tokens")
			b.ReportMetric(float64(DefaultExistingTokens), "list-budget")
			b.ReportMetric(float64(len(listed)), "listed")
			b.ReportMetric(float64(memcore.EstimateTokens(last.System)+memcore.EstimateTokens(userText(last))), "prompt-tokens")
		})
	}
}
