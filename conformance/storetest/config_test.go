package storetest_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/forgemem/forgemem/conformance/internal/conform"
	"github.com/forgemem/forgemem/conformance/storetest"
	"github.com/forgemem/forgemem/memcore"
)

// A Config field out of range must make Run fail at once, naming every bad
// field and the values it accepts, and run no rule. Run takes a
// *testing.T, so TestBadConfigStopsTheSuite runs it in a subprocess — this
// test binary, running TestHelperRunWithConfig with configEnv naming a
// config — and reads what it reported.

const configEnv = "FORGEMEM_STORETEST_CONFIG"

// configs are the configs TestHelperRunWithConfig passes to Run.
var configs = map[string]storetest.Config{
	"one":   {LargeBody: 1024, Writers: 1, PerWriter: 25},
	"every": {Writers: 1001, PerWriter: -1, LargeBody: -1},
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
	storetest.Run(t, func(context.Context, *testing.T) (storetest.Harness, error) {
		t.Error("the suite asked for a harness although its config was out of range")
		return memHarness{memcore.NewMemStore()}, nil
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
		{"one", []string{"storetest: invalid config: Writers is 1, want 2–1000 (0 means 8); the suite did not run"}},
		{"every", []string{"storetest: invalid config: " +
			"Writers is 1001, want 2–1000 (0 means 8); " +
			"PerWriter is -1, want 1–1000 (0 means 25); " +
			"LargeBody is -1, want 1–67108864, 64 MiB (0 means 524288, 512 KiB); the suite did not run"}},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			t.Parallel()
			conform.CheckFailsAtOnce(t, "TestHelperRunWithConfig", tt.want, configEnv+"="+tt.set)
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  storetest.Config
		want string // the whole message; "" for a valid config
	}{
		{"zero value", storetest.Config{}, ""},
		{"defaults", storetest.DefaultConfig(), ""},
		{"smallest", storetest.Config{Writers: 2, PerWriter: 1, LargeBody: 1}, ""},
		{"largest", storetest.Config{Writers: 1000, PerWriter: 1000, LargeBody: 64 << 20}, ""},
		{"one writer", storetest.Config{Writers: 1}, "storetest: invalid config: Writers is 1, want 2–1000 (0 means 8)"},
		{"too many writers", storetest.Config{Writers: 1001}, "storetest: invalid config: Writers is 1001, want 2–1000 (0 means 8)"},
		{"too many memories per writer", storetest.Config{PerWriter: 1001}, "storetest: invalid config: PerWriter is 1001, want 1–1000 (0 means 25)"},
		{"body above 64 MiB", storetest.Config{LargeBody: 64<<20 + 1},
			"storetest: invalid config: LargeBody is 67108865, want 1–67108864, 64 MiB (0 means 524288, 512 KiB)"},
		{"every field", storetest.Config{Writers: math.MinInt, PerWriter: math.MaxInt, LargeBody: -1}, fmt.Sprintf(
			"storetest: invalid config: Writers is %d, want 2–1000 (0 means 8); PerWriter is %d, want 1–1000 (0 means 25); "+
				"LargeBody is -1, want 1–67108864, 64 MiB (0 means 524288, 512 KiB)", math.MinInt, math.MaxInt)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Errorf("Validate = %v, want nil", err)
				}
				return
			}
			var ce *memcore.ConfigError
			if !errors.Is(err, memcore.ErrInvalidConfig) || !errors.As(err, &ce) {
				t.Fatalf("Validate = %v, want a *memcore.ConfigError matching memcore.ErrInvalidConfig", err)
			}
			if err.Error() != tt.want {
				t.Errorf("Validate =\n%s\nwant\n%s", err, tt.want)
			}
		})
	}
}
