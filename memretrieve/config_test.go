package memretrieve

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		bad    []string // the fields reported, in order
	}{
		{"default", func(*Config) {}, nil},
		{"identity", func(c *Config) { c.Mode = ModeIdentity }, nil},
		{"bounds low", func(c *Config) {
			c.HypothesisCount, c.TopK, c.HopDepth, c.MaxMemories, c.MinScore = 1, 1, 0, 1, -1
			c.InjectionTokenBudget, c.WindowTokenBudget, c.Timeout = 1, 1, time.Nanosecond
			c.QueryTokenLimit, c.LexicalWeight, c.FusionK = 1, 0, 1
		}, nil},
		{"bounds high", func(c *Config) {
			c.HypothesisCount, c.TopK, c.HopDepth, c.MaxMemories, c.MinScore = 10, 100, 3, 1000, 1
			c.WindowTokenBudget = 1_000_000
			c.QueryTokenLimit, c.LexicalWeight, c.FusionK = 1_000_000, 10, 1000
		}, nil},
		// Each field alone out of range: TestBadSettingsAreErrors.
		{"min score NaN", func(c *Config) { c.MinScore = math.NaN() }, []string{"MinScore"}},
		{"lexical weight NaN", func(c *Config) { c.LexicalWeight = math.NaN() }, []string{"LexicalWeight"}},
		{"zero value", func(c *Config) { *c = Config{} }, []string{
			"Mode", "HypothesisCount", "TopK", "MaxMemories", "InjectionTokenBudget", "WindowTokenBudget", "Timeout",
			"QueryTokenLimit", "FusionK",
		}},
		{"several", func(c *Config) { c.TopK, c.HopDepth = 0, 9 }, []string{"TopK", "HopDepth"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.change(&cfg)
			err := cfg.Validate()
			_, nerr := NewEngine(memcore.NewMemStore(), newEmbedder(t), newLLM(t), cfg)
			if tt.bad == nil {
				if err != nil || nerr != nil {
					t.Fatalf("Validate = %v, NewEngine = %v; want both nil", err, nerr)
				}
				return
			}
			for _, err := range []error{err, nerr} {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("error %v does not match ErrInvalidConfig", err)
				}
				var ce *ConfigError
				if !errors.As(err, &ce) {
					t.Fatalf("error %v is not a *ConfigError", err)
				}
				var got []string
				for _, f := range ce.Fields {
					got = append(got, f.Field)
					if f.Want == "" {
						t.Errorf("field %s: no accepted range given", f.Field)
					}
					if !strings.Contains(err.Error(), f.Field) {
						t.Errorf("message %q does not name %s", err, f.Field)
					}
				}
				if !slices.Equal(got, tt.bad) {
					t.Errorf("bad fields = %v, want %v", got, tt.bad)
				}
				if !strings.Contains(err.Error(), "DefaultConfig()") {
					t.Errorf("message %q does not suggest DefaultConfig()", err)
				}
			}
		})
	}
}

func TestNewEngineNilStore(t *testing.T) {
	_, err := NewEngine(nil, newEmbedder(t), newLLM(t), DefaultConfig())
	if !errors.Is(err, ErrNoStore) {
		t.Fatalf("err = %v, want ErrNoStore", err)
	}
}

func TestDefaultConfig(t *testing.T) {
	want := Config{
		Mode:                 ModeLLM,
		HypothesisCount:      5,
		TopK:                 10,
		HopDepth:             1,
		MaxMemories:          30,
		MinScore:             0,
		InjectionTokenBudget: 2000,
		WindowTokenBudget:    4000,
		Timeout:              2 * time.Second,
		QueryTokenLimit:      512,
		LexicalWeight:        1,
		FusionK:              60,
		Stale:                StaleLabel,
	}
	if c := DefaultConfig(); c != want {
		t.Fatalf("DefaultConfig() = %+v, want the documented defaults %+v", c, want)
	}
}
