package memretrieve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

// TestOptionKinds checks which constructor each option can be passed to:
// an EngineOption alone does not implement IndexOption, so passing it to
// NewIndex does not compile.
func TestOptionKinds(t *testing.T) {
	engineOpt := reflect.TypeFor[EngineOption]()
	indexOpt := reflect.TypeFor[IndexOption]()
	if engineOpt.Implements(indexOpt) {
		t.Fatal("EngineOption implements IndexOption: NewIndex would accept every engine option")
	}
	if indexOpt.Implements(engineOpt) {
		t.Fatal("IndexOption implements EngineOption")
	}
	tests := []struct {
		name       string
		ctor       any
		engine, ix bool
	}{
		{"WithLogger", WithLogger, true, false},
		{"WithCacheDir", WithCacheDir, true, false},
		{"WithEmbedBatch", WithEmbedBatch, true, false},
		{"WithTurnCacheSize", WithTurnCacheSize, true, false},
		{"WithRetryDelay", WithRetryDelay, true, false},
		{"WithParallelism", WithParallelism, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := reflect.TypeOf(tt.ctor).Out(0)
			if got := out.Implements(engineOpt); got != tt.engine {
				t.Errorf("%s returns %v: an EngineOption is %v, want %v", tt.name, out, got, tt.engine)
			}
			if got := out.Implements(indexOpt); got != tt.ix {
				t.Errorf("%s returns %v: an IndexOption is %v, want %v", tt.name, out, got, tt.ix)
			}
		})
	}
}

// badSetting is one Config field or option given a value out of range.
type badSetting struct {
	name   string
	cfg    func(*Config) // changes a Config field, or
	engine EngineOption  // is an option for NewEngine, and
	index  IndexOption   // for NewIndex too, when it applies there
	want   FieldError
	// says is what the message must contain: the field or option, its
	// value and its allowed range.
	says string
}

func badSettings() []badSetting {
	cfgField := func(name string, change func(*Config), field string, value any, want, says string) badSetting {
		return badSetting{name: name, cfg: change, want: FieldError{Field: field, Value: value, Want: want}, says: says}
	}
	engineOpt := func(name string, opt EngineOption, field string, value any, want, says string) badSetting {
		return badSetting{name: name, engine: opt, want: FieldError{Field: field, Value: value, Want: want}, says: says}
	}
	sharedOpt := func(name string, opt Option, field string, value any, want, says string) badSetting {
		return badSetting{name: name, engine: opt, index: opt, want: FieldError{Field: field, Value: value, Want: want}, says: says}
	}
	return []badSetting{
		cfgField("Mode empty", func(c *Config) { c.Mode = "" }, "Mode", HypothesisMode(""), `"llm" or "identity"`, `Mode is "", want "llm" or "identity"`),
		cfgField("Mode unknown", func(c *Config) { c.Mode = "hyde" }, "Mode", HypothesisMode("hyde"), `"llm" or "identity"`, `Mode is "hyde", want "llm" or "identity"`),
		cfgField("HypothesisCount 0", func(c *Config) { c.HypothesisCount = 0 }, "HypothesisCount", 0, "1–10", "HypothesisCount is 0, want 1–10"),
		cfgField("HypothesisCount 11", func(c *Config) { c.HypothesisCount = 11 }, "HypothesisCount", 11, "1–10", "HypothesisCount is 11, want 1–10"),
		cfgField("TopK MinInt", func(c *Config) { c.TopK = math.MinInt }, "TopK", math.MinInt, "1–100", fmt.Sprintf("TopK is %d, want 1–100", math.MinInt)),
		cfgField("TopK 101", func(c *Config) { c.TopK = 101 }, "TopK", 101, "1–100", "TopK is 101, want 1–100"),
		cfgField("HopDepth -1", func(c *Config) { c.HopDepth = -1 }, "HopDepth", -1, "0–3", "HopDepth is -1, want 0–3"),
		cfgField("HopDepth 4", func(c *Config) { c.HopDepth = 4 }, "HopDepth", 4, "0–3", "HopDepth is 4, want 0–3"),
		cfgField("MaxMemories 0", func(c *Config) { c.MaxMemories = 0 }, "MaxMemories", 0, "1–1000", "MaxMemories is 0, want 1–1000"),
		cfgField("MaxMemories 1001", func(c *Config) { c.MaxMemories = 1001 }, "MaxMemories", 1001, "1–1000", "MaxMemories is 1001, want 1–1000"),
		cfgField("MinScore -1.5", func(c *Config) { c.MinScore = -1.5 }, "MinScore", -1.5, "-1–1", "MinScore is -1.5, want -1–1"),
		cfgField("MinScore +Inf", func(c *Config) { c.MinScore = math.Inf(1) }, "MinScore", math.Inf(1), "-1–1", "MinScore is +Inf, want -1–1"),
		cfgField("InjectionTokenBudget 0", func(c *Config) { c.InjectionTokenBudget = 0 }, "InjectionTokenBudget", 0, "at least 1", "InjectionTokenBudget is 0, want at least 1"),
		cfgField("WindowTokenBudget 0", func(c *Config) { c.WindowTokenBudget = 0 }, "WindowTokenBudget", 0, "1–1000000", "WindowTokenBudget is 0, want 1–1000000"),
		cfgField("WindowTokenBudget 1000001", func(c *Config) { c.WindowTokenBudget = 1_000_001 }, "WindowTokenBudget", 1_000_001, "1–1000000", "WindowTokenBudget is 1000001, want 1–1000000"),
		cfgField("Timeout 0", func(c *Config) { c.Timeout = 0 }, "Timeout", time.Duration(0), "more than 0", "Timeout is 0s, want more than 0"),
		cfgField("Timeout MinInt64", func(c *Config) { c.Timeout = math.MinInt64 }, "Timeout", time.Duration(math.MinInt64), "more than 0", fmt.Sprintf("Timeout is %v, want more than 0", time.Duration(math.MinInt64))),
		cfgField("QueryTokenLimit 0", func(c *Config) { c.QueryTokenLimit = 0 }, "QueryTokenLimit", 0, "1–1000000", "QueryTokenLimit is 0, want 1–1000000"),
		cfgField("QueryTokenLimit 1000001", func(c *Config) { c.QueryTokenLimit = 1_000_001 }, "QueryTokenLimit", 1_000_001, "1–1000000", "QueryTokenLimit is 1000001, want 1–1000000"),
		cfgField("LexicalWeight -0.5", func(c *Config) { c.LexicalWeight = -0.5 }, "LexicalWeight", -0.5, "0–10", "LexicalWeight is -0.5, want 0–10"),
		cfgField("LexicalWeight 11", func(c *Config) { c.LexicalWeight = 11 }, "LexicalWeight", 11.0, "0–10", "LexicalWeight is 11, want 0–10"),
		cfgField("FusionK 0", func(c *Config) { c.FusionK = 0 }, "FusionK", 0, "1–1000", "FusionK is 0, want 1–1000"),
		cfgField("FusionK 1001", func(c *Config) { c.FusionK = 1001 }, "FusionK", 1001, "1–1000", "FusionK is 1001, want 1–1000"),

		engineOpt("WithEmbedBatch 0", WithEmbedBatch(0), "WithEmbedBatch", 0, "at least 1", "WithEmbedBatch is 0, want at least 1"),
		engineOpt("WithEmbedBatch -1", WithEmbedBatch(-1), "WithEmbedBatch", -1, "at least 1", "WithEmbedBatch is -1, want at least 1"),
		engineOpt("WithEmbedBatch MinInt", WithEmbedBatch(math.MinInt), "WithEmbedBatch", math.MinInt, "at least 1", fmt.Sprintf("WithEmbedBatch is %d, want at least 1", math.MinInt)),
		engineOpt("WithTurnCacheSize -1", WithTurnCacheSize(-1), "WithTurnCacheSize", -1, "at least 0", "WithTurnCacheSize is -1, want at least 0"),
		engineOpt("WithTurnCacheSize MinInt", WithTurnCacheSize(math.MinInt), "WithTurnCacheSize", math.MinInt, "at least 0", fmt.Sprintf("WithTurnCacheSize is %d, want at least 0", math.MinInt)),
		engineOpt("WithRetryDelay 0", WithRetryDelay(0), "WithRetryDelay", time.Duration(0), "more than 0", "WithRetryDelay is 0s, want more than 0"),
		engineOpt("WithRetryDelay -1ns", WithRetryDelay(-1), "WithRetryDelay", time.Duration(-1), "more than 0", "WithRetryDelay is -1ns, want more than 0"),
		engineOpt("WithRetryDelay MinInt64", WithRetryDelay(math.MinInt64), "WithRetryDelay", time.Duration(math.MinInt64), "more than 0", fmt.Sprintf("WithRetryDelay is %v, want more than 0", time.Duration(math.MinInt64))),
		sharedOpt("WithParallelism 0", WithParallelism(0), "WithParallelism", 0, "at least 1", "WithParallelism is 0, want at least 1"),
		sharedOpt("WithParallelism -1", WithParallelism(-1), "WithParallelism", -1, "at least 1", "WithParallelism is -1, want at least 1"),
		sharedOpt("WithParallelism MinInt", WithParallelism(math.MinInt), "WithParallelism", math.MinInt, "at least 1", fmt.Sprintf("WithParallelism is %d, want at least 1", math.MinInt)),
	}
}

// checkInvalid asserts that err reports exactly the settings want, in
// order, as a *ConfigError wrapping ErrInvalidConfig whose message says
// each of says.
func checkInvalid(t *testing.T, err error, want []FieldError, says []string) {
	t.Helper()
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("error %v does not wrap ErrInvalidConfig", err)
	}
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *ConfigError", err)
	}
	if !slices.EqualFunc(ce.Fields, want, func(a, b FieldError) bool {
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
	vectors := [][]float32{{1, 0}, {0, 1}}
	for _, tt := range badSettings() {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			var opts []EngineOption
			if tt.cfg != nil {
				tt.cfg(&cfg)
				checkInvalid(t, cfg.Validate(), []FieldError{tt.want}, []string{tt.says})
			} else {
				opts = append(opts, tt.engine)
			}
			e, err := NewEngine(store, emb, newLLM(t), cfg, opts...)
			if e != nil {
				t.Errorf("NewEngine returned an engine with the error")
			}
			checkInvalid(t, err, []FieldError{tt.want}, []string{tt.says})
			// The hint to start from DefaultConfig is for Config fields.
			if hint := strings.Contains(err.Error(), "DefaultConfig()"); hint != (tt.cfg != nil) {
				t.Errorf("message %q: suggests DefaultConfig() = %v, want %v", err, hint, tt.cfg != nil)
			}
			if tt.index == nil {
				return
			}
			ix, err := NewIndex([]string{"a", "b"}, vectors, tt.index)
			if ix != nil {
				t.Errorf("NewIndex returned an index with the error")
			}
			checkInvalid(t, err, []FieldError{tt.want}, []string{tt.says})
		})
	}
}

// TestBadSettingsReportedTogether: one error lists every bad Config field
// and every bad option, Config fields first, options in the order given.
func TestBadSettingsReportedTogether(t *testing.T) {
	cfg := DefaultConfig()
	var opts []EngineOption
	var want []FieldError
	var says []string
	var indexOpts []IndexOption
	var indexWant []FieldError
	for _, s := range badSettings() {
		if s.cfg != nil {
			s.cfg(&cfg) // a later change of the same field wins
			continue
		}
		opts = append(opts, s.engine)
		want = append(want, s.want)
		says = append(says, s.says)
		if s.index != nil {
			indexOpts = append(indexOpts, s.index)
			indexWant = append(indexWant, s.want)
		}
	}
	cfgWant := []FieldError(cfg.check())
	if len(cfgWant) != 12 {
		t.Fatalf("the table leaves %d Config fields bad, want all 12 that have a range", len(cfgWant))
	}
	_, err := NewEngine(memcore.NewMemStore(), newEmbedder(t), newLLM(t), cfg, opts...)
	checkInvalid(t, err, append(cfgWant, want...), says)

	_, err = NewIndex(nil, nil, indexOpts...)
	checkInvalid(t, err, indexWant, nil)
}

// TestOptionsNeverPanic calls every option constructor with extreme values,
// passes each option to the constructors that take it, and uses what they
// return: nothing may panic. Values out of range are errors; the others
// must work.
func TestOptionsNeverPanic(t *testing.T) {
	type option struct {
		name string
		make func() EngineOption
	}
	var opts []option
	for _, n := range []int{0, -1, 1, math.MinInt, math.MaxInt} {
		opts = append(opts,
			option{fmt.Sprintf("WithEmbedBatch(%d)", n), func() EngineOption { return WithEmbedBatch(n) }},
			option{fmt.Sprintf("WithTurnCacheSize(%d)", n), func() EngineOption { return WithTurnCacheSize(n) }},
			option{fmt.Sprintf("WithParallelism(%d)", n), func() EngineOption { return WithParallelism(n) }})
	}
	for _, d := range []time.Duration{0, -1, 1, math.MinInt64, math.MaxInt64} {
		opts = append(opts, option{fmt.Sprintf("WithRetryDelay(%v)", d), func() EngineOption { return WithRetryDelay(d) }})
	}
	dir := t.TempDir()
	opts = append(opts,
		option{"WithLogger(zero Logger)", func() EngineOption { return WithLogger(zerolog.Logger{}) }},
		option{"WithLogger(Nop)", func() EngineOption { return WithLogger(zerolog.Nop()) }},
		option{`WithCacheDir("")`, func() EngineOption { return WithCacheDir("") }},
		option{`WithCacheDir("\x00")`, func() EngineOption { return WithCacheDir("\x00") }},
		option{"WithCacheDir(temporary folder)", func() EngineOption { return WithCacheDir(dir) }},
		option{"nil", func() EngineOption { return nil }})

	store := memcore.NewMemStore()
	write(t, store, threeMemories()...)
	for _, tt := range opts {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panicked: %v", p)
				}
			}()
			opt := tt.make()
			e, err := NewEngine(store, newEmbedder(t), nil, identityConfig(), opt)
			if err != nil {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("NewEngine = %v, want nil or an error wrapping ErrInvalidConfig", err)
				}
			} else {
				e.Start(context.Background())
				res, err := e.Retrieve(context.Background(), "t", userWindow(locking.Content))
				if err != nil || len(res.Memories) == 0 {
					t.Errorf("Retrieve = %+v, %v; want memories", res, err)
				}
				if err := e.Close(context.Background()); err != nil {
					t.Errorf("Close = %v", err)
				}
			}
			iopt, ok := opt.(IndexOption)
			if !ok {
				return
			}
			ix, err := NewIndex([]string{"a", "b"}, [][]float32{{1, 0}, {0, 1}}, iopt)
			if err != nil {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("NewIndex = %v, want nil or an error wrapping ErrInvalidConfig", err)
				}
				return
			}
			if m, err := ix.Search([]float32{0, 1}, 1); err != nil || len(m) != 1 || m[0].ID != "b" {
				t.Errorf("Search = %+v, %v; want b", m, err)
			}
		})
	}
}

// TestExtremeValidOptionsAreAccepted: the largest values are in range.
func TestExtremeValidOptionsAreAccepted(t *testing.T) {
	_, err := NewEngine(memcore.NewMemStore(), newEmbedder(t), newLLM(t), DefaultConfig(),
		WithEmbedBatch(math.MaxInt), WithTurnCacheSize(math.MaxInt), WithTurnCacheSize(0),
		WithParallelism(math.MaxInt), WithRetryDelay(math.MaxInt64))
	if err != nil {
		t.Fatalf("NewEngine = %v, want nil", err)
	}
	if _, err := NewIndex(nil, nil, WithParallelism(math.MaxInt)); err != nil {
		t.Fatalf("NewIndex = %v, want nil", err)
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
