package llmtest_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/forgemem/forgemem/conformance/internal/conform"
	"github.com/forgemem/forgemem/conformance/llmtest"
	"github.com/forgemem/forgemem/memcore"
)

// A Config field out of range must make Run fail at once, naming every bad
// field and the values it accepts, and run no case. Run takes a
// *testing.T, so TestBadConfigStopsTheSuite runs it in a subprocess — this
// test binary, running TestHelperRunWithConfig with configEnv naming a
// config — and reads what it reported.

const configEnv = "FORGEMEM_LLMTEST_CONFIG"

// configs are the configs TestHelperRunWithConfig passes to Run.
var configs = map[string]llmtest.Config{
	"one":   {CallTimeout: time.Second, Concurrency: 1},
	"every": {CallTimeout: -1, CancelGrace: 25 * time.Hour, Concurrency: 1001},
}

// TestHelperRunWithConfig runs the suite with the config named by
// configEnv. It does nothing in a normal test run.
func TestHelperRunWithConfig(t *testing.T) {
	name := os.Getenv(configEnv)
	if name == "" {
		t.Skip("runs only as the subprocess of TestBadConfigStopsTheSuite")
	}
	cfg, ok := configs[name]
	if !ok {
		t.Fatalf("no config named %q", name)
	}
	llmtest.Run(t, func(context.Context, *testing.T) (llmtest.Harness, error) {
		t.Error("the suite asked for a harness although its config was out of range")
		return &testHarness{}, nil
	}, cfg)
}

func TestBadConfigStopsTheSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary once per case")
	}
	tests := []struct {
		set  string
		want []string
	}{
		{"one", []string{"llmtest: invalid config: Concurrency is 1, want 2–1000 (0 means 8); the suite did not run"}},
		{"every", []string{"llmtest: invalid config: " +
			"CallTimeout is -1ns, want more than 0 and at most 24h0m0s (0 means 1m0s); " +
			"CancelGrace is 25h0m0s, want more than 0 and at most 24h0m0s (0 means 5s); " +
			"Concurrency is 1001, want 2–1000 (0 means 8); the suite did not run"}},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			t.Parallel()
			conform.CheckFailsAtOnce(t, "TestHelperRunWithConfig", tt.want, configEnv+"="+tt.set)
		})
	}
}

// Validate's error is a *memcore.ConfigError matching
// memcore.ErrInvalidConfig; the defaults and the zero value are valid.
func TestConfigValidate(t *testing.T) {
	for _, cfg := range []llmtest.Config{{}, llmtest.DefaultConfig()} {
		if err := cfg.Validate(); err != nil {
			t.Errorf("%+v: Validate = %v, want nil", cfg, err)
		}
	}
	err := llmtest.Config{Concurrency: -1}.Validate()
	var ce *memcore.ConfigError
	if !errors.Is(err, memcore.ErrInvalidConfig) || !errors.As(err, &ce) || len(ce.Fields) != 1 || ce.Fields[0].Field != "Concurrency" {
		t.Errorf("Validate = %v, want a *memcore.ConfigError naming Concurrency and matching memcore.ErrInvalidConfig", err)
	}
	if got, want := llmtest.DefaultConfig(), (llmtest.Config{CallTimeout: time.Minute, CancelGrace: 5 * time.Second, Concurrency: 8}); got != want {
		t.Errorf("DefaultConfig() = %+v, want %+v", got, want)
	}
}
