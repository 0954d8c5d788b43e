package storetest_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/forgemem/forgemem/conformance/internal/conform"
	"github.com/forgemem/forgemem/conformance/storetest"
	"github.com/forgemem/forgemem/memcore"
)

// An option out of range must make Run fail at once, naming the option
// and the values it accepts, and run no rule. Run takes a *testing.T, so
// TestOptionsOutOfRangeStopTheSuite runs it in a subprocess — this test
// binary, running TestHelperRunWithOptions with optionsEnv naming a set of
// options — and reads what it reported.

const optionsEnv = "FORGEMEM_STORETEST_OPTIONS"

// optionSets are the options TestHelperRunWithOptions passes to Run.
var optionSets = map[string][]storetest.Option{
	"one":   {storetest.WithLargeBody(1024), storetest.WithConcurrency(1, 25)},
	"every": {storetest.WithConcurrency(1001, 0), nil, storetest.WithLargeBody(0)},
}

// TestHelperRunWithOptions runs the suite with the options named by
// optionsEnv. It does nothing in a normal test run.
func TestHelperRunWithOptions(t *testing.T) {
	name := os.Getenv(optionsEnv)
	if name == "" {
		t.Skip("runs only as the subprocess of TestOptionsOutOfRangeStopTheSuite")
	}
	opts, ok := optionSets[name]
	if !ok {
		t.Fatalf("no option set named %q", name)
	}
	storetest.Run(t, func(context.Context, *testing.T) (storetest.Harness, error) {
		t.Error("the suite asked for a harness although an option was out of range")
		return memHarness{memcore.NewMemStore()}, nil
	}, opts...)
}

func TestOptionsOutOfRangeStopTheSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary once per case")
	}
	tests := []struct {
		set  string
		want []string
	}{
		{"one", []string{"storetest: options out of range, the suite did not run: WithConcurrency writers is 1, want 2–1000"}},
		{"every", []string{"storetest: options out of range, the suite did not run: " +
			"WithConcurrency writers is 1001, want 2–1000; " +
			"WithConcurrency perWriter is 0, want 1–1000; " +
			"WithLargeBody is 0, want 1–67108864 (64 MiB)"}},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			t.Parallel()
			conform.CheckFailsAtOnce(t, "TestHelperRunWithOptions", tt.want, optionsEnv+"="+tt.set)
		})
	}
}

// TestOptionsNeverPanic makes every option with extreme values.
func TestOptionsNeverPanic(t *testing.T) {
	ints := []int{math.MinInt, -1, 0, 1, 2, 1000, 1001, 64 << 20, 64<<20 + 1, math.MaxInt}
	try := func(name string, make func() storetest.Option) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s panicked: %v", name, r)
			}
		}()
		if make() == nil {
			t.Errorf("%s returned a nil Option", name)
		}
	}
	for _, n := range ints {
		for _, m := range ints {
			try(fmt.Sprintf("WithConcurrency(%d, %d)", n, m), func() storetest.Option { return storetest.WithConcurrency(n, m) })
		}
		try(fmt.Sprintf("WithLargeBody(%d)", n), func() storetest.Option { return storetest.WithLargeBody(n) })
	}
}
