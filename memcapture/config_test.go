package memcapture

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
	"github.com/rs/zerolog"
)

// Every field out of range, and every missing constructor argument, is a
// *memcore.ConfigError matching ErrInvalidConfig whose message names the
// field, the value given and the values allowed; several are reported
// together.
func TestBadConfigIsNamed(t *testing.T) {
	llm, store := newLLM(t, fake.LLMConfig{}), memcore.NewMemStore()
	const prefix = "memcapture: invalid config: "
	minInt := strconv.Itoa(math.MinInt)
	pipelines := []struct {
		name       string
		classifier memcore.LLMProvider
		store      memcore.MemoryStore
		cfg        Config
		want       string
	}{
		{"cadence -1", llm, store, Config{Cadence: -1}, "Cadence is -1, want 1–10 (0 means 1)"},
		{"cadence 11", llm, store, Config{Cadence: 11}, "Cadence is 11, want 1–10 (0 means 1)"},
		{"cadence MaxInt", llm, store, Config{Cadence: math.MaxInt}, "Cadence is " + strconv.Itoa(math.MaxInt) + ", want 1–10 (0 means 1)"},
		{"window -1", llm, store, Config{WindowTokens: -1}, "WindowTokens is -1, want at least 1 (0 means 8000)"},
		{"window MinInt", llm, store, Config{WindowTokens: math.MinInt}, "WindowTokens is " + minInt + ", want at least 1 (0 means 8000)"},
		{"timeout negative", llm, store, Config{PassTimeout: -time.Second}, "PassTimeout is -1s, want more than 0 (0 means 1m0s)"},
		{"retry attempts negative", llm, store, Config{Retry: memcore.RetryPolicy{MaxAttempts: -1}},
			"Retry.MaxAttempts is -1, want at least 0 (0 means memcore's default)"},
		{"retry every field negative", llm, store, Config{Retry: memcore.RetryPolicy{MaxAttempts: -1, BaseDelay: -1, MaxDelay: -time.Second}},
			"Retry.MaxAttempts is -1, want at least 0 (0 means memcore's default); Retry.BaseDelay is -1ns, want at least 0 (0 means memcore's default); " +
				"Retry.MaxDelay is -1s, want at least 0 (0 means memcore's default)"},
		{"content -1", llm, store, Config{MaxContentBytes: -1}, "MaxContentBytes is -1, want at least 1 (0 means 4096)"},
		{"memories -1", llm, store, Config{MaxMemoriesPerPass: -1}, "MaxMemoriesPerPass is -1, want at least 1 (0 means 20)"},
		{"compactions -1", llm, store, Config{MaxPendingCompactions: -1}, "MaxPendingCompactions is -1, want at least 1 (0 means 1024)"},
		{"reply tokens -1", llm, store, Config{ReplyTokens: -1}, "ReplyTokens is -1, want at least 1 (0 means 2048)"},
		{"nil classifier", nil, store, Config{}, "NewPipeline's classifier is nil, want a memcore.LLMProvider"},
		{"nil store", llm, nil, Config{}, "NewPipeline's store is nil, want a memcore.MemoryStore"},
		{"all reported", nil, store, Config{WindowTokens: -5, Logger: zerolog.Nop(), ReplyTokens: -3},
			"NewPipeline's classifier is nil, want a memcore.LLMProvider; WindowTokens is -5, want at least 1 (0 means 8000); ReplyTokens is -3, want at least 1 (0 means 2048)"},
	}
	for _, tt := range pipelines {
		t.Run("NewPipeline/"+tt.name, func(t *testing.T) {
			p, err := NewPipeline(tt.classifier, tt.store, tt.cfg)
			var ce *memcore.ConfigError
			if !errors.Is(err, memcore.ErrInvalidConfig) || !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) || p != nil {
				t.Fatalf("NewPipeline = %v, %v; want a *memcore.ConfigError matching memcore.ErrInvalidConfig", p, err)
			}
			if err.Error() != prefix+tt.want {
				t.Errorf("error %q\nwant  %q", err, prefix+tt.want)
			}
		})
	}

	o, err := NewObserver(nil)
	if !errors.Is(err, memcore.ErrInvalidConfig) || o != nil {
		t.Fatalf("NewObserver(nil) = %v, %v; want an error matching memcore.ErrInvalidConfig", o, err)
	}
	if want := prefix + "NewObserver's pipeline is nil, want a *Pipeline"; err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
}

// Validate checks the same fields as NewPipeline, without its arguments.
func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{}, DefaultConfig(), {ExistingTokens: -1}} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: Validate = %v, want nil", c, err)
		}
	}
	err := Config{Cadence: 11, ReplyTokens: -1}.Validate()
	want := "memcapture: invalid config: Cadence is 11, want 1–10 (0 means 1); ReplyTokens is -1, want at least 1 (0 means 2048)"
	if !errors.Is(err, memcore.ErrInvalidConfig) || err.Error() != want {
		t.Errorf("Validate = %v\nwant %s", err, want)
	}
}

// A zero field means its default: Config{} resolves to what DefaultConfig
// says, and a negative ExistingTokens lists none.
func TestConfigZeroIsDefault(t *testing.T) {
	zero, def := Config{}.resolve(), DefaultConfig().resolve()
	if fmt.Sprint(zero.clock == nil, def.clock == nil) != "false false" {
		t.Fatal("no clock after resolve")
	}
	zero.clock, def.clock = nil, nil
	if fmt.Sprintf("%+v", zero) != fmt.Sprintf("%+v", def) {
		t.Errorf("Config{} resolves to\n%+v\nDefaultConfig() to\n%+v", zero, def)
	}
	if def.existingTokens != DefaultExistingTokens || def.cadence != DefaultCadence || def.windowTokens != DefaultWindowTokens {
		t.Errorf("DefaultConfig() resolves to %+v", def)
	}
	if got := (Config{ExistingTokens: -1}).resolve().existingTokens; got != 0 {
		t.Errorf("ExistingTokens -1 resolves to a budget of %d, want none", got)
	}
}

// The edges of every range are accepted.
func TestConfigEdgesAccepted(t *testing.T) {
	llm, store := newLLM(t, fake.LLMConfig{}), memcore.NewMemStore()
	cfg := Config{ExistingTokens: math.MinInt, WindowTokens: 1, MaxContentBytes: 1, MaxMemoriesPerPass: 1,
		MaxPendingCompactions: 1, ReplyTokens: 1, PassTimeout: time.Nanosecond, Cadence: MaxCadence}
	p, err := NewPipeline(llm, store, cfg)
	if err != nil {
		t.Fatalf("NewPipeline with the lowest values allowed: %v", err)
	}
	if _, err := NewObserver(p); err != nil {
		t.Errorf("NewObserver: %v", err)
	}
	if _, err := NewPipeline(llm, store, Config{Cadence: 1}); err != nil {
		t.Errorf("Cadence 1: %v", err)
	}
	_ = p.Close(context.Background())
}

// No field panics, whatever it holds: NewPipeline either accepts the
// config or refuses it with ErrInvalidConfig.
func TestConfigNeverPanics(t *testing.T) {
	ints := []int{math.MinInt, -1, 0, 1, math.MaxInt}
	durations := []time.Duration{math.MinInt64, -1, 0, 1, math.MaxInt64}
	llm, store := newLLM(t, fake.LLMConfig{}), memcore.NewMemStore()
	for _, n := range ints {
		for _, d := range durations {
			cfg := Config{Cadence: n, WindowTokens: n, ExistingTokens: n, MaxContentBytes: n, MaxMemoriesPerPass: n,
				MaxPendingCompactions: n, ReplyTokens: n, PassTimeout: d,
				Retry: memcore.RetryPolicy{MaxAttempts: n, BaseDelay: d, MaxDelay: d}}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("NewPipeline(%+v) panicked: %v", cfg, r)
					}
				}()
				p, err := NewPipeline(llm, store, cfg)
				if err != nil && !errors.Is(err, memcore.ErrInvalidConfig) {
					t.Errorf("NewPipeline(%+v): %v does not match ErrInvalidConfig", cfg, err)
				}
				if p != nil {
					_, _ = NewObserver(p)
					_ = p.Close(context.Background())
				}
			}()
		}
	}
}
