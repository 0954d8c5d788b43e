package memretrieve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		bad    []string // the fields reported, in order
	}{
		{"default", func(*Config) {}, nil},
		{"identity", func(c *Config) { c.Mode = ModeIdentity }, nil},
		{"zero value: every field its default or 0", func(c *Config) { *c = Config{} }, nil},
		{"bounds low", func(c *Config) {
			c.HypothesisCount, c.TopK, c.HopDepth, c.MaxMemories, c.MinScore = 1, 1, 0, 1, -1
			c.InjectionTokenBudget, c.WindowTokenBudget, c.Timeout = 1, 1, time.Nanosecond
			c.QueryTokenLimit, c.LexicalWeight, c.FusionK, c.GateChance = 1, 0, 1, 0.0001
			c.EmbedBatch, c.TurnCacheSize, c.Parallelism, c.RetryDelay = 1, -1, 1, time.Nanosecond
			c.CacheSecret = []byte("sixteen bytes!!!")
		}, nil},
		{"bounds high", func(c *Config) {
			c.HypothesisCount, c.TopK, c.HopDepth, c.MaxMemories, c.MinScore = 10, 100, 3, 1000, 1
			c.InjectionTokenBudget, c.WindowTokenBudget, c.Timeout = math.MaxInt, 1_000_000, math.MaxInt64
			c.QueryTokenLimit, c.LexicalWeight, c.FusionK, c.GateChance = 1_000_000, 10, 1000, 1
			c.EmbedBatch, c.TurnCacheSize, c.Parallelism, c.RetryDelay = 100_000, 100_000, 4096, math.MaxInt64
		}, nil},
		// Each field alone out of range: TestBadSettingsAreErrors.
		{"min score NaN", func(c *Config) { c.MinScore = math.NaN() }, []string{"MinScore"}},
		{"lexical weight NaN", func(c *Config) { c.LexicalWeight = math.NaN() }, []string{"LexicalWeight"}},
		{"gate chance NaN", func(c *Config) { c.GateChance = math.NaN() }, []string{"GateChance"}},
		{"several", func(c *Config) { c.TopK, c.HopDepth, c.Parallelism = -1, 9, -2 }, []string{"TopK", "HopDepth", "Parallelism"}},
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
				ce := configError(t, err)
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
			}
		})
	}
}

// configError asserts that err is a *memcore.ConfigError of memretrieve,
// matching memcore.ErrInvalidConfig, whose message says what to do: start
// from DefaultConfig, and which fields mean what they say at 0.
func configError(t *testing.T, err error) *memcore.ConfigError {
	t.Helper()
	if !errors.Is(err, memcore.ErrInvalidConfig) {
		t.Fatalf("error %v does not match memcore.ErrInvalidConfig", err)
	}
	var ce *memcore.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *memcore.ConfigError", err)
	}
	if ce.Package != "memretrieve" || !strings.HasPrefix(err.Error(), "memretrieve: ") {
		t.Errorf("package %q, message %q; want memretrieve's", ce.Package, err)
	}
	for _, s := range []string{"DefaultConfig()", "HopDepth, MinScore and LexicalWeight mean 0"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q does not say %q", err, s)
		}
	}
	return ce
}

func TestNewEngineNilStore(t *testing.T) {
	_, err := NewEngine(nil, newEmbedder(t), newLLM(t), DefaultConfig())
	if !errors.Is(err, ErrNoStore) || !errors.Is(err, memcore.ErrInvalidConfig) {
		t.Fatalf("err = %v, want ErrNoStore and memcore.ErrInvalidConfig", err)
	}
}

func TestDefaultConfig(t *testing.T) {
	want := Config{
		Mode:                 ModeLLM,
		HypothesisCount:      5,
		TopK:                 10,
		HopDepth:             1,
		MaxMemories:          8,
		MinScore:             0,
		InjectionTokenBudget: 2000,
		WindowTokenBudget:    4000,
		Timeout:              2 * time.Second,
		QueryTokenLimit:      512,
		LexicalWeight:        1,
		FusionK:              60,
		GateChance:           0.05,
		EmbedBatch:           256,
		TurnCacheSize:        64,
		Parallelism:          runtime.GOMAXPROCS(0),
		RetryDelay:           30 * time.Second,
		Stale:                StaleLabel,
	}
	if c := DefaultConfig(); !reflect.DeepEqual(c, want) {
		t.Fatalf("DefaultConfig() = %+v, want the documented defaults %+v", c, want)
	}
}

// TestZeroFieldsMeanTheirDefaults: an engine made from a Config with zero
// fields runs with the defaults of those whose zero has no meaning of its
// own, and keeps the meaningful zeros (HopDepth, MinScore, LexicalWeight).
func TestZeroFieldsMeanTheirDefaults(t *testing.T) {
	e, err := NewEngine(memcore.NewMemStore(), newEmbedder(t), nil, Config{Mode: ModeIdentity})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Mode, want.HopDepth, want.LexicalWeight = ModeIdentity, 0, 0
	if !reflect.DeepEqual(e.cfg, want) {
		t.Errorf("engine config %+v, want %+v", e.cfg, want)
	}
	e, err = NewEngine(memcore.NewMemStore(), newEmbedder(t), newLLM(t), Config{})
	if err != nil || e.cfg.Mode != ModeLLM {
		t.Fatalf("NewEngine(Config{}) = %v; want an engine in the default mode, llm", err)
	}
	if _, err := NewEngine(memcore.NewMemStore(), newEmbedder(t), nil, Config{}); err == nil {
		t.Error("Config{} means ModeLLM, which needs a hypothesis provider: no error")
	}
}

// badSetting is one Config field given a value out of range.
type badSetting struct {
	name   string
	change func(*Config)
	want   memcore.FieldError
	// says is what the message must contain: the field, its value and its
	// allowed range.
	says string
}

func badSettings() []badSetting {
	field := func(name string, change func(*Config), f string, value any, want, says string) badSetting {
		return badSetting{name: name, change: change, want: memcore.FieldError{Field: f, Value: value, Want: want}, says: says}
	}
	const turnCache = "-1–100000 (-1: no per-turn cache)"
	return []badSetting{
		field("Mode unknown", func(c *Config) { c.Mode = "hyde" }, "Mode", HypothesisMode("hyde"), `"llm" or "identity"`, `Mode is "hyde", want "llm" or "identity"`),
		field("HypothesisCount -1", func(c *Config) { c.HypothesisCount = -1 }, "HypothesisCount", -1, "1–10", "HypothesisCount is -1, want 1–10"),
		field("HypothesisCount 11", func(c *Config) { c.HypothesisCount = 11 }, "HypothesisCount", 11, "1–10", "HypothesisCount is 11, want 1–10"),
		field("TopK MinInt", func(c *Config) { c.TopK = math.MinInt }, "TopK", math.MinInt, "1–100", fmt.Sprintf("TopK is %d, want 1–100", math.MinInt)),
		field("TopK 101", func(c *Config) { c.TopK = 101 }, "TopK", 101, "1–100", "TopK is 101, want 1–100"),
		field("HopDepth -1", func(c *Config) { c.HopDepth = -1 }, "HopDepth", -1, "0–3", "HopDepth is -1, want 0–3"),
		field("HopDepth 4", func(c *Config) { c.HopDepth = 4 }, "HopDepth", 4, "0–3", "HopDepth is 4, want 0–3"),
		field("MaxMemories -1", func(c *Config) { c.MaxMemories = -1 }, "MaxMemories", -1, "1–1000", "MaxMemories is -1, want 1–1000"),
		field("MaxMemories 1001", func(c *Config) { c.MaxMemories = 1001 }, "MaxMemories", 1001, "1–1000", "MaxMemories is 1001, want 1–1000"),
		field("MinScore -1.5", func(c *Config) { c.MinScore = -1.5 }, "MinScore", -1.5, "-1–1", "MinScore is -1.5, want -1–1"),
		field("MinScore +Inf", func(c *Config) { c.MinScore = math.Inf(1) }, "MinScore", math.Inf(1), "-1–1", "MinScore is +Inf, want -1–1"),
		field("InjectionTokenBudget -1", func(c *Config) { c.InjectionTokenBudget = -1 }, "InjectionTokenBudget", -1, "at least 1", "InjectionTokenBudget is -1, want at least 1"),
		field("WindowTokenBudget -1", func(c *Config) { c.WindowTokenBudget = -1 }, "WindowTokenBudget", -1, "1–1000000", "WindowTokenBudget is -1, want 1–1000000"),
		field("WindowTokenBudget 1000001", func(c *Config) { c.WindowTokenBudget = 1_000_001 }, "WindowTokenBudget", 1_000_001, "1–1000000", "WindowTokenBudget is 1000001, want 1–1000000"),
		field("Timeout -1ns", func(c *Config) { c.Timeout = -1 }, "Timeout", time.Duration(-1), "more than 0", "Timeout is -1ns, want more than 0"),
		field("Timeout MinInt64", func(c *Config) { c.Timeout = math.MinInt64 }, "Timeout", time.Duration(math.MinInt64), "more than 0", fmt.Sprintf("Timeout is %v, want more than 0", time.Duration(math.MinInt64))),
		field("QueryTokenLimit -1", func(c *Config) { c.QueryTokenLimit = -1 }, "QueryTokenLimit", -1, "1–1000000", "QueryTokenLimit is -1, want 1–1000000"),
		field("QueryTokenLimit 1000001", func(c *Config) { c.QueryTokenLimit = 1_000_001 }, "QueryTokenLimit", 1_000_001, "1–1000000", "QueryTokenLimit is 1000001, want 1–1000000"),
		field("LexicalWeight -0.5", func(c *Config) { c.LexicalWeight = -0.5 }, "LexicalWeight", -0.5, "0–10", "LexicalWeight is -0.5, want 0–10"),
		field("LexicalWeight 11", func(c *Config) { c.LexicalWeight = 11 }, "LexicalWeight", 11.0, "0–10", "LexicalWeight is 11, want 0–10"),
		field("FusionK -1", func(c *Config) { c.FusionK = -1 }, "FusionK", -1, "1–1000", "FusionK is -1, want 1–1000"),
		field("FusionK 1001", func(c *Config) { c.FusionK = 1001 }, "FusionK", 1001, "1–1000", "FusionK is 1001, want 1–1000"),
		field("GateChance -0.1", func(c *Config) { c.GateChance = -0.1 }, "GateChance", -0.1, "0.0001–1 (1: the gate off)", "GateChance is -0.1, want 0.0001–1 (1: the gate off)"),
		field("GateChance 0.00001", func(c *Config) { c.GateChance = 0.00001 }, "GateChance", 0.00001, "0.0001–1 (1: the gate off)", "GateChance is 1e-05, want 0.0001–1"),
		field("GateChance 1.5", func(c *Config) { c.GateChance = 1.5 }, "GateChance", 1.5, "0.0001–1 (1: the gate off)", "GateChance is 1.5, want 0.0001–1"),
		field("CacheSecret of 15 bytes", func(c *Config) { c.CacheSecret = []byte("fifteen bytes!!") }, "CacheSecret",
			memcore.Description("a secret of 15 bytes"), "none or at least 16 bytes", "CacheSecret is a secret of 15 bytes, want none or at least 16 bytes"),
		field("EmbedBatch -1", func(c *Config) { c.EmbedBatch = -1 }, "EmbedBatch", -1, "1–100000", "EmbedBatch is -1, want 1–100000"),
		field("EmbedBatch MinInt", func(c *Config) { c.EmbedBatch = math.MinInt }, "EmbedBatch", math.MinInt, "1–100000", fmt.Sprintf("EmbedBatch is %d, want 1–100000", math.MinInt)),
		field("TurnCacheSize -2", func(c *Config) { c.TurnCacheSize = -2 }, "TurnCacheSize", -2, turnCache, "TurnCacheSize is -2, want -1–100000 (-1: no per-turn cache)"),
		field("TurnCacheSize MaxInt", func(c *Config) { c.TurnCacheSize = math.MaxInt }, "TurnCacheSize", math.MaxInt, turnCache, fmt.Sprintf("TurnCacheSize is %d, want -1–100000", math.MaxInt)),
		field("Parallelism -1", func(c *Config) { c.Parallelism = -1 }, "Parallelism", -1, "1–4096", "Parallelism is -1, want 1–4096"),
		field("Parallelism MaxInt", func(c *Config) { c.Parallelism = math.MaxInt }, "Parallelism", math.MaxInt, "1–4096", fmt.Sprintf("Parallelism is %d, want 1–4096", math.MaxInt)),
		field("RetryDelay -1ns", func(c *Config) { c.RetryDelay = -1 }, "RetryDelay", time.Duration(-1), "more than 0", "RetryDelay is -1ns, want more than 0"),
		field("RetryDelay MinInt64", func(c *Config) { c.RetryDelay = math.MinInt64 }, "RetryDelay", time.Duration(math.MinInt64), "more than 0", fmt.Sprintf("RetryDelay is %v, want more than 0", time.Duration(math.MinInt64))),
	}
}

// checkInvalid asserts that err reports exactly the fields want, in order,
// as memretrieve's *memcore.ConfigError, and that its message says each of
// says.
func checkInvalid(t *testing.T, err error, want []memcore.FieldError, says []string) {
	t.Helper()
	ce := configError(t, err)
	if !slices.EqualFunc(ce.Fields, want, func(a, b memcore.FieldError) bool {
		// reflect.DeepEqual, unlike ==, treats two NaNs as different, and
		// no case uses NaN; it compares the dynamic types of Value.
		return reflect.DeepEqual(a, b)
	}) {
		t.Errorf("fields = %#v, want %#v", ce.Fields, want)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q does not say %q", err, s)
		}
	}
}

func TestBadSettingsAreErrors(t *testing.T) {
	store, emb := memcore.NewMemStore(), newEmbedder(t)
	for _, tt := range badSettings() {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.change(&cfg)
			checkInvalid(t, cfg.Validate(), []memcore.FieldError{tt.want}, []string{tt.says})
			e, err := NewEngine(store, emb, newLLM(t), cfg)
			if e != nil {
				t.Errorf("NewEngine returned an engine with the error")
			}
			checkInvalid(t, err, []memcore.FieldError{tt.want}, []string{tt.says})
		})
	}
}

// TestBadSettingsReportedTogether: one error lists every missing argument
// and every bad Config field, arguments first, fields in their order.
func TestBadSettingsReportedTogether(t *testing.T) {
	cfg := DefaultConfig()
	for _, s := range badSettings() {
		s.change(&cfg) // a later change of the same field wins
	}
	cfgWant := []memcore.FieldError(cfg.check())
	if len(cfgWant) != 18 {
		t.Fatalf("the table leaves %d Config fields bad, want all 18 that have a range", len(cfgWant))
	}
	// The mode is not ModeLLM ("hyde"): no hypothesis provider is asked for.
	_, err := NewEngine(memcore.NewMemStore(), nil, nil, cfg)
	want := append([]memcore.FieldError{
		{Field: argEmbedder, Value: missing{}, Want: "a memcore.Embedder (memory.embedding_model)"},
	}, cfgWant...)
	checkInvalid(t, err, want, []string{"NewEngine's embedder is nil, want a memcore.Embedder"})

	// Missing arguments alone: the message does not speak of Config.
	_, err = NewEngine(memcore.NewMemStore(), nil, nil, DefaultConfig())
	if !errors.Is(err, memcore.ErrInvalidConfig) || strings.Contains(err.Error(), "DefaultConfig") {
		t.Errorf("NewEngine without providers = %v; want memcore.ErrInvalidConfig, no hint about Config", err)
	}
}

// TestSettingsNeverPanic makes engines with extreme values of the host's
// fields and uses them: nothing may panic. Values out of range are errors;
// the others must work.
func TestSettingsNeverPanic(t *testing.T) {
	type setting struct {
		name string
		opt  cfgOpt
	}
	var settings []setting
	for _, n := range []int{0, -1, 1, math.MinInt, math.MaxInt} {
		settings = append(settings,
			setting{fmt.Sprintf("EmbedBatch %d", n), withEmbedBatch(n)},
			setting{fmt.Sprintf("TurnCacheSize %d", n), withTurnCacheSize(n)},
			setting{fmt.Sprintf("Parallelism %d", n), withParallelism(n)})
	}
	for _, d := range []time.Duration{0, -1, 1, math.MinInt64, math.MaxInt64} {
		settings = append(settings, setting{fmt.Sprintf("RetryDelay %v", d), withRetryDelay(d)})
	}
	dir := t.TempDir()
	settings = append(settings,
		setting{"Logger zero", withLogger(zerolog.Logger{})},
		setting{"Logger Nop", withLogger(zerolog.Nop())},
		setting{`CacheDir ""`, withCacheDir("")},
		setting{`CacheDir "\x00"`, withCacheDir("\x00")},
		setting{"CacheDir a temporary folder", withCacheDir(dir)},
		setting{"BuildProgress nil", withBuildProgress(nil)})

	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	for _, tt := range settings {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panicked: %v", p)
				}
			}()
			e, err := NewEngine(store, newEmbedder(t), nil, with(identityConfig(), tt.opt))
			if err != nil {
				if !errors.Is(err, memcore.ErrInvalidConfig) {
					t.Fatalf("NewEngine = %v, want nil or an error matching memcore.ErrInvalidConfig", err)
				}
				return
			}
			e.Start(context.Background())
			res, err := e.Retrieve(context.Background(), "t", userWindow(locking.Content))
			if err != nil || len(res.Memories) == 0 {
				t.Errorf("Retrieve = %+v, %v; want memories", res, err)
			}
			if err := e.Close(context.Background()); err != nil {
				t.Errorf("Close = %v", err)
			}
		})
	}
}

func TestNextRetryDelay(t *testing.T) {
	const maxDuration = time.Duration(math.MaxInt64)
	tests := []struct {
		d, base, want time.Duration
	}{
		{30 * time.Second, 30 * time.Second, time.Minute},
		{4 * time.Minute, 30 * time.Second, 8 * time.Minute},
		{8 * time.Minute, 30 * time.Second, 8 * time.Minute}, // 16 times the base
		{5 * time.Minute, 30 * time.Second, 8 * time.Minute},
		{maxDuration / 16, maxDuration / 16, maxDuration / 16 * 2},
		{maxDuration / 16 * 16, maxDuration / 16, maxDuration / 16 * 16},
		{maxDuration / 8, maxDuration / 8, maxDuration / 8 * 2},
		{maxDuration/2 + 1, maxDuration / 8, maxDuration}, // 16 times the base would overflow
		{maxDuration, maxDuration, maxDuration},
	}
	for _, tt := range tests {
		if got := nextRetryDelay(tt.d, tt.base); got != tt.want {
			t.Errorf("nextRetryDelay(%v, %v) = %v, want %v", tt.d, tt.base, got, tt.want)
		}
	}
}
