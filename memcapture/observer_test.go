package memcapture

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// blockingLLM is a fake LLM whose calls signal entered and then wait until
// release is closed (or their context ends) before answering text.
func blockingLLM(t testing.TB, text string) (llm *fake.LLM, entered chan struct{}, release chan struct{}) {
	entered, release = make(chan struct{}, 100), make(chan struct{})
	llm = newLLM(t, fake.LLMConfig{ReplyFunc: func(ctx context.Context, _ memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		entered <- struct{}{}
		select {
		case <-release:
			return &memcore.CompletionResponse{Text: text}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}})
	return llm, entered, release
}

func TestStuckClassifierDoesNotBlockTurns(t *testing.T) {
	llm, entered, release := blockingLLM(t, nothing)
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
	obs := must(NewObserver(p))

	obs.OnTurnComplete(win("turn first"), "s1")
	<-entered // the classifier is now stuck inside the first pass

	const workers, perWorker = 4, 2500
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWorker {
					obs.OnTurnComplete(win(fmt.Sprintf("turn %d-%d", w, i)), "s1")
				}
			}()
		}
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a bound that only a hang can reach
		t.Fatal("OnTurnComplete blocked while the classifier was stuck")
	}

	s := p.Stats()
	if s.Triggers != 1+workers*perWorker {
		t.Errorf("Triggers = %d, want %d", s.Triggers, 1+workers*perWorker)
	}
	// The first trigger was taken by the stuck pass; of the rest, all but
	// the latest were replaced by a newer one.
	if s.Coalesced != workers*perWorker-1 {
		t.Errorf("Coalesced = %d, want %d", s.Coalesced, workers*perWorker-1)
	}
	if s.Passes != 0 || llm.Calls() != 1 {
		t.Errorf("Passes = %d, calls = %d while stuck; want 0 and 1", s.Passes, llm.Calls())
	}

	close(release)
	passes(t, p, 2)
	if n := llm.Calls(); n != 2 {
		t.Errorf("classifier calls = %d, want 2 (the stuck one and the latest window)", n)
	}
}

func TestCadence(t *testing.T) {
	for _, cadence := range []int{1, 3, 10} {
		t.Run(fmt.Sprint(cadence), func(t *testing.T) {
			llm := newLLM(t, always(nothing))
			p := newPipeline(t, llm, memcore.NewMemStore(), Config{Cadence: cadence})
			obs := must(NewObserver(p))
			const turns = 30
			for i := 1; i <= turns; i++ {
				obs.OnTurnComplete(win(fmt.Sprintf("turn %d", i)), "s")
			}
			want := uint64(turns / cadence)
			if s := p.Stats(); s.Triggers != want || s.Coalesced != want-1 {
				t.Fatalf("after %d turns: Triggers = %d, Coalesced = %d; want %d and %d", turns, s.Triggers, s.Coalesced, want, want-1)
			}
			// The waiting trigger is the last turn that was due.
			must(0, p.Start(context.Background()))
			passes(t, p, 1)
			last := turns - turns%cadence
			if got := userText(llm.Requests()[0]); !strings.Contains(got, fmt.Sprintf("turn %d\n", last)) {
				t.Errorf("classified window does not hold turn %d:\n%s", last, got)
			}
		})
	}
}

func TestCompactionIgnoresCadence(t *testing.T) {
	p := newPipeline(t, newLLM(t, always(nothing)), memcore.NewMemStore(), Config{Cadence: 10})
	obs := must(NewObserver(p))
	obs.OnTurnComplete(win("a"), "s")
	obs.OnCompaction(win("arc"), "s")
	obs.OnCompaction(win("arc 2"), "s")
	if s := p.Stats(); s.Triggers != 2 {
		t.Errorf("Triggers = %d, want 2 (the compactions; the turn is not due)", s.Triggers)
	}
}

func TestObserverCopiesTheWindow(t *testing.T) {
	llm := newLLM(t, always(nothing))
	p := newPipeline(t, llm, memcore.NewMemStore(), Config{})
	obs := must(NewObserver(p))
	msgs := win("original text")
	obs.OnTurnComplete(msgs, "s")
	msgs[0].Content = "changed by the agent afterwards"
	must(0, p.Start(context.Background()))
	passes(t, p, 1)
	if got := userText(llm.Requests()[0]); !strings.Contains(got, "original text") || strings.Contains(got, "changed") {
		t.Errorf("the pipeline saw the agent's later change:\n%s", got)
	}
}
