package memcapture

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// flushAsync runs Flush on its own goroutine and returns once Flush has
// started waiting; the channel gets its result.
func flushAsync(t *testing.T, p *Pipeline, ctx context.Context) <-chan error {
	t.Helper()
	waiting := make(chan struct{}, 1)
	testHookFlushWaits = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}
	t.Cleanup(func() { testHookFlushWaits = nil })
	done := make(chan error, 1)
	go func() { done <- p.Flush(ctx) }()
	select {
	case <-waiting:
	case err := <-done:
		t.Fatalf("Flush returned at once: %v", err)
	}
	return done
}

// pending reports whether a Flush has not returned yet, without waiting.
func pending(done <-chan error) bool {
	select {
	case err := <-done:
		panic("Flush returned early: " + errString(err))
	default:
		return true
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

func TestFlushWithNothingQueuedReturnsAtOnce(t *testing.T) {
	p := startPipeline(t, newLLM(t, always(nothing)), memcore.NewMemStore(), Config{})
	if err := p.Flush(context.Background()); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// Flush returns only once the pass of every trigger enqueued before it has
// finished: a stuck classifier keeps it waiting, its answer releases it, and
// the memory is written by then.
func TestFlushWaitsForThePassesEnqueuedBeforeIt(t *testing.T) {
	tests := []struct {
		name    string
		enqueue []TriggerEvent
		// passes is the number of passes finished when Flush returns.
		passes uint64
	}{
		{"one turn", []TriggerEvent{{Kind: memcore.TriggerCadence, Messages: win("tabs please")}}, 1},
		{"a compaction and a turn", []TriggerEvent{
			{Kind: memcore.TriggerCadence, Messages: win("turn")},
			{Kind: memcore.TriggerCompaction, Messages: win("arc")},
		}, 2},
		{"coalesced turns", []TriggerEvent{
			{Kind: memcore.TriggerCadence, Messages: win("turn 1")},
			{Kind: memcore.TriggerCadence, Messages: win("turn 2")},
			{Kind: memcore.TriggerCadence, Messages: win("turn 3")},
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memcore.NewMemStore()
			llm, entered, release := blockingLLM(t, reply(mem{"content": "Prefers tabs.", "scope": "user", "category": "coding-preferences"}))
			p := newPipeline(t, llm, store, Config{})
			for _, ev := range tt.enqueue {
				p.Enqueue(ev)
			}
			done := flushAsync(t, p, context.Background())
			must(0, p.Start(context.Background()))
			<-entered // the first pass is stuck in the classifier
			pending(done)
			close(release)
			if err := <-done; err != nil {
				t.Fatalf("Flush: %v", err)
			}
			s := p.Stats()
			if s.Passes != tt.passes {
				t.Errorf("Passes = %d when Flush returned, want %d", s.Passes, tt.passes)
			}
			if n := len(listAll(t, store)); n != 1 {
				t.Errorf("%d memories stored when Flush returned, want 1", n)
			}
		})
	}
}

// A trigger enqueued after Flush was called is not waited for: Flush
// returns while its pass is stuck.
func TestFlushDoesNotWaitForLaterTriggers(t *testing.T) {
	llm, entered, release := blockingLLM(t, nothing)
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("first")})
	<-entered
	done := flushAsync(t, p, context.Background())
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win("later")})
	pending(done)
	release <- struct{}{} // answers the first pass only
	if err := <-done; err != nil {
		t.Fatalf("Flush: %v", err)
	}
	<-entered // the later pass is now stuck; Flush did not wait for it
	if s := p.Stats(); s.Passes != 1 {
		t.Errorf("Passes = %d, want 1", s.Passes)
	}
	if reqs := llm.Requests(); len(reqs) != 2 || !strings.Contains(userText(reqs[1]), "later") {
		t.Errorf("want the later trigger's pass in flight, got %d requests", len(reqs))
	}
	close(release)
}

// A turn trigger that replaces one Flush waits for is waited for: it
// stands for the older one.
func TestFlushWaitsForTheTurnThatReplacedItsTrigger(t *testing.T) {
	llm, entered, release := blockingLLM(t, nothing)
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win("arc")})
	<-entered
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("turn 1")})
	done := flushAsync(t, p, context.Background())
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("turn 2")})
	release <- struct{}{} // the compaction pass
	<-entered             // the turn pass, with turn 2's window
	pending(done)
	release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatalf("Flush: %v", err)
	}
	reqs := llm.Requests()
	if len(reqs) != 2 || !strings.Contains(userText(reqs[1]), "turn 2") {
		t.Fatalf("want the compaction and turn 2 classified, got %d requests", len(reqs))
	}
	if s := p.Stats(); s.Passes != 2 || s.Coalesced != 1 {
		t.Errorf("Passes = %d, Coalesced = %d; want 2 and 1", s.Passes, s.Coalesced)
	}
}

func TestFlushEnds(t *testing.T) {
	t.Run("when its context ends, leaving the triggers queued", func(t *testing.T) {
		llm, entered, release := blockingLLM(t, nothing)
		p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("stuck")})
		<-entered
		ctx, cancel := context.WithCancel(context.Background())
		done := flushAsync(t, p, ctx)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Flush = %v, want context.Canceled", err)
		}
		close(release)
		if err := p.Flush(context.Background()); err != nil {
			t.Fatalf("Flush after the release: %v", err)
		}
		if s := p.Stats(); s.Passes != 1 || s.LLMErrors != 0 {
			t.Errorf("Passes = %d, LLMErrors = %d; want 1 and 0: the pass was not disturbed", s.Passes, s.LLMErrors)
		}
	})
	t.Run("with ErrClosed when the waited triggers are dropped", func(t *testing.T) {
		p := newPipeline(t, newLLM(t, always(nothing)), memcore.NewMemStore(), Config{})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("never processed")})
		done := flushAsync(t, p, context.Background())
		pending(done) // before Start, Flush waits for it
		must(0, p.Close(context.Background()))
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Fatalf("Flush = %v, want ErrClosed", err)
		}
	})
	t.Run("with nil after Close drained everything", func(t *testing.T) {
		p := startPipeline(t, newLLM(t, always(nothing)), memcore.NewMemStore(), Config{})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win("arc")})
		must(0, p.Close(context.Background()))
		if err := p.Flush(context.Background()); err != nil {
			t.Fatalf("Flush after a draining Close: %v", err)
		}
	})
	t.Run("with ErrClosed when the Start context ended first", func(t *testing.T) {
		llm, entered, _ := blockingLLM(t, nothing)
		p := newPipeline(t, llm, memcore.NewMemStore(), Config{})
		ctx, cancel := context.WithCancel(context.Background())
		must(0, p.Start(ctx))
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("stuck")})
		<-entered
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win("waiting")})
		done := flushAsync(t, p, context.Background())
		cancel()
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Fatalf("Flush = %v, want ErrClosed", err)
		}
	})
}
