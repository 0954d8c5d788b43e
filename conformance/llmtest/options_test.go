package llmtest_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/forgemem/forgemem/conformance/internal/conform"
	"github.com/forgemem/forgemem/conformance/llmtest"
)

// An option out of range must make Run fail at once, naming the option
// and the values it accepts, and run no case. Run takes a *testing.T, so
// TestOptionsOutOfRangeStopTheSuite runs it in a subprocess — this test
// binary, running TestHelperRunWithOptions with optionsEnv naming a set of
// options — and reads what it reported.

const optionsEnv = "FORGEMEM_LLMTEST_OPTIONS"

// optionSets are the options TestHelperRunWithOptions passes to Run.
var optionSets = map[string][]llmtest.Option{
	"one":   {llmtest.WithCallTimeout(time.Second), llmtest.WithConcurrency(1)},
	"every": {llmtest.WithCallTimeout(0), nil, llmtest.WithCancelGrace(25 * time.Hour), llmtest.WithConcurrency(1001)},
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
	llmtest.Run(t, func(context.Context, *testing.T) (llmtest.Harness, error) {
		t.Error("the suite asked for a harness although an option was out of range")
		return &testHarness{}, nil
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
		{"one", []string{"llmtest: options out of range, the suite did not run: WithConcurrency is 1, want 2–1000"}},
		{"every", []string{"llmtest: options out of range, the suite did not run: " +
			"WithCallTimeout is 0s, want more than 0 and at most 24h0m0s; " +
			"WithCancelGrace is 25h0m0s, want more than 0 and at most 24h0m0s; " +
			"WithConcurrency is 1001, want 2–1000"}},
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
	try := func(name string, make func() llmtest.Option) {
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
	for _, d := range []time.Duration{math.MinInt64, -1, 0, 1, conform.MaxDuration + 1, math.MaxInt64} {
		try(fmt.Sprintf("WithCallTimeout(%v)", d), func() llmtest.Option { return llmtest.WithCallTimeout(d) })
		try(fmt.Sprintf("WithCancelGrace(%v)", d), func() llmtest.Option { return llmtest.WithCancelGrace(d) })
	}
	for _, n := range []int{math.MinInt, -1, 0, 1, 2, 1001, math.MaxInt} {
		try(fmt.Sprintf("WithConcurrency(%d)", n), func() llmtest.Option { return llmtest.WithConcurrency(n) })
	}
}
