package memcapture

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

// Every bad option value, and every missing constructor argument, is an
// error wrapping ErrInvalidConfig whose message names the setting, the
// value given and the values allowed; several are reported together.
func TestBadConfigIsNamed(t *testing.T) {
	llm, store := newLLM(t), memcore.NewMemStore()
	const prefix = "memcapture: invalid capture config: "
	minInt := strconv.Itoa(math.MinInt)
	pipelines := []struct {
		name       string
		classifier memcore.LLMProvider
		store      memcore.MemoryStore
		opts       []Option
		want       string
	}{
		{"window 0", llm, store, []Option{WithWindowTokens(0)}, "WithWindowTokens is 0, want at least 1"},
		{"window MinInt", llm, store, []Option{WithWindowTokens(math.MinInt)}, "WithWindowTokens is " + minInt + ", want at least 1"},
		{"existing -1", llm, store, []Option{WithExistingTokens(-1)}, "WithExistingTokens is -1, want at least 0"},
		{"timeout 0", llm, store, []Option{WithPassTimeout(0)}, "WithPassTimeout is 0s, want more than 0"},
		{"timeout negative", llm, store, []Option{WithPassTimeout(-time.Second)}, "WithPassTimeout is -1s, want more than 0"},
		{"retry attempts negative", llm, store, []Option{WithRetryPolicy(memcore.RetryPolicy{MaxAttempts: -1})},
			"WithRetryPolicy MaxAttempts is -1, want at least 0"},
		{"retry every field negative", llm, store, []Option{WithRetryPolicy(memcore.RetryPolicy{MaxAttempts: -1, BaseDelay: -1, MaxDelay: -time.Second})},
			"WithRetryPolicy MaxAttempts is -1, want at least 0; WithRetryPolicy BaseDelay is -1ns, want at least 0; WithRetryPolicy MaxDelay is -1s, want at least 0"},
		{"content 0", llm, store, []Option{WithMaxContentBytes(0)}, "WithMaxContentBytes is 0, want at least 1"},
		{"memories 0", llm, store, []Option{WithMaxMemoriesPerPass(0)}, "WithMaxMemoriesPerPass is 0, want at least 1"},
		{"compactions 0", llm, store, []Option{WithMaxPendingCompactions(0)}, "WithMaxPendingCompactions is 0, want at least 1"},
		{"reply tokens 0", llm, store, []Option{WithReplyTokens(0)}, "WithReplyTokens is 0, want at least 1"},
		{"nil clock", llm, store, []Option{WithClock(nil)}, "WithClock is nil, want a clock function"},
		{"nil embedder", llm, store, []Option{WithEmbedder(nil)}, "WithEmbedder is nil, want a memcore.Embedder"},
		{"nil classifier", nil, store, nil, "NewPipeline's classifier is nil, want a memcore.LLMProvider"},
		{"nil store", llm, nil, nil, "NewPipeline's store is nil, want a memcore.MemoryStore"},
		{"all reported", nil, store, []Option{WithWindowTokens(0), WithLogger(zerolog.Nop()), WithReplyTokens(-3)},
			"NewPipeline's classifier is nil, want a memcore.LLMProvider; WithWindowTokens is 0, want at least 1; WithReplyTokens is -3, want at least 1"},
	}
	for _, tt := range pipelines {
		t.Run("NewPipeline/"+tt.name, func(t *testing.T) {
			p, err := NewPipeline(tt.classifier, "", tt.store, nil, tt.opts...)
			if !errors.Is(err, ErrInvalidConfig) || p != nil {
				t.Fatalf("NewPipeline = %v, %v; want an error wrapping ErrInvalidConfig", p, err)
			}
			if err.Error() != prefix+tt.want {
				t.Errorf("error %q\nwant  %q", err, prefix+tt.want)
			}
		})
	}

	p := newPipeline(t, llm, store, nil)
	observers := []struct {
		name     string
		pipeline *Pipeline
		opts     []ObserverOption
		want     string
	}{
		{"cadence 0", p, []ObserverOption{WithCadence(0)}, "WithCadence is 0, want 1–10"},
		{"cadence -1", p, []ObserverOption{WithCadence(-1)}, "WithCadence is -1, want 1–10"},
		{"cadence 11", p, []ObserverOption{WithCadence(11)}, "WithCadence is 11, want 1–10"},
		{"cadence MaxInt", p, []ObserverOption{WithCadence(math.MaxInt)}, "WithCadence is " + strconv.Itoa(math.MaxInt) + ", want 1–10"},
		{"nil pipeline", nil, nil, "NewObserver's pipeline is nil, want a *Pipeline"},
	}
	for _, tt := range observers {
		t.Run("NewObserver/"+tt.name, func(t *testing.T) {
			o, err := NewObserver(tt.pipeline, tt.opts...)
			if !errors.Is(err, ErrInvalidConfig) || o != nil {
				t.Fatalf("NewObserver = %v, %v; want an error wrapping ErrInvalidConfig", o, err)
			}
			if err.Error() != prefix+tt.want {
				t.Errorf("error %q\nwant  %q", err, prefix+tt.want)
			}
		})
	}
}

// The edges of every range are accepted.
func TestConfigEdgesAccepted(t *testing.T) {
	llm, store := newLLM(t), memcore.NewMemStore()
	if _, err := NewPipeline(llm, "", store, nil,
		WithExistingTokens(0), WithWindowTokens(1), WithMaxContentBytes(1), WithMaxMemoriesPerPass(1),
		WithMaxPendingCompactions(1), WithReplyTokens(1), WithPassTimeout(time.Nanosecond),
		WithRetryPolicy(memcore.RetryPolicy{}), nil); err != nil {
		t.Errorf("NewPipeline with the lowest values allowed: %v", err)
	}
	p := newPipeline(t, llm, store, nil)
	for _, n := range []int{1, MaxCadence} {
		if _, err := NewObserver(p, WithCadence(n), nil); err != nil {
			t.Errorf("WithCadence(%d): %v", n, err)
		}
	}
}

// No option panics, whatever it is given: each option constructor is called
// with extreme values, and the constructor either accepts the option or
// refuses it with ErrInvalidConfig naming the option and the allowed values.
func TestOptionsNeverPanic(t *testing.T) {
	ints := []int{math.MinInt, -1, 0, 1, math.MaxInt}
	durations := []time.Duration{math.MinInt64, -1, 0, 1, math.MaxInt64}
	named := map[string][]Option{}
	for _, n := range ints {
		named["WithWindowTokens"] = append(named["WithWindowTokens"], WithWindowTokens(n))
		named["WithExistingTokens"] = append(named["WithExistingTokens"], WithExistingTokens(n))
		named["WithMaxContentBytes"] = append(named["WithMaxContentBytes"], WithMaxContentBytes(n))
		named["WithMaxMemoriesPerPass"] = append(named["WithMaxMemoriesPerPass"], WithMaxMemoriesPerPass(n))
		named["WithMaxPendingCompactions"] = append(named["WithMaxPendingCompactions"], WithMaxPendingCompactions(n))
		named["WithReplyTokens"] = append(named["WithReplyTokens"], WithReplyTokens(n))
		named["WithRetryPolicy"] = append(named["WithRetryPolicy"], WithRetryPolicy(memcore.RetryPolicy{MaxAttempts: n}))
	}
	for _, d := range durations {
		named["WithPassTimeout"] = append(named["WithPassTimeout"], WithPassTimeout(d))
		named["WithRetryPolicy"] = append(named["WithRetryPolicy"], WithRetryPolicy(memcore.RetryPolicy{BaseDelay: d, MaxDelay: d}))
	}
	named["WithClock"] = []Option{WithClock(nil), WithClock(time.Now)}
	named["WithEmbedder"] = []Option{WithEmbedder(nil), WithEmbedder(newEmbedder(t))}
	named["WithLogger"] = []Option{WithLogger(zerolog.Logger{}), WithLogger(zerolog.Nop())}

	llm, store := newLLM(t), memcore.NewMemStore()
	check := func(t *testing.T, name string, err error) {
		t.Helper()
		if err != nil && (!errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), name+" ") || !strings.Contains(err.Error(), ", want ")) {
			t.Errorf("%s: error %q does not wrap ErrInvalidConfig and name the option and its range", name, err)
		}
	}
	for name, opts := range named {
		for i, opt := range opts {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s #%d panicked: %v", name, i, r)
					}
				}()
				_, err := NewPipeline(llm, "", store, nil, opt)
				check(t, name, err)
			}()
		}
	}
	p := newPipeline(t, llm, store, nil)
	for _, n := range ints {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("WithCadence(%d) panicked: %v", n, r)
				}
			}()
			_, err := NewObserver(p, WithCadence(n))
			check(t, "WithCadence", err)
		}()
	}
}
