package storetest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/forgemem/forgemem/conformance/internal/conform"
)

func TestOptionsOutOfRange(t *testing.T) {
	tests := []struct {
		name string
		opt  Option
		want conform.Problems // the whole problems: option, value, allowed values
	}{
		{"one writer", WithConcurrency(1, 25), conform.Problems{"WithConcurrency writers is 1, want 2–1000"}},
		{"too many writers", WithConcurrency(1001, 25), conform.Problems{"WithConcurrency writers is 1001, want 2–1000"}},
		{"no memories per writer", WithConcurrency(8, 0), conform.Problems{"WithConcurrency perWriter is 0, want 1–1000"}},
		{"too many memories per writer", WithConcurrency(8, 1001), conform.Problems{"WithConcurrency perWriter is 1001, want 1–1000"}},
		{"both out of range", WithConcurrency(math.MinInt, math.MaxInt), conform.Problems{
			fmt.Sprintf("WithConcurrency writers is %d, want 2–1000", math.MinInt),
			fmt.Sprintf("WithConcurrency perWriter is %d, want 1–1000", math.MaxInt)}},
		{"empty body", WithLargeBody(0), conform.Problems{"WithLargeBody is 0, want 1–67108864 (64 MiB)"}},
		{"negative body", WithLargeBody(-1), conform.Problems{"WithLargeBody is -1, want 1–67108864 (64 MiB)"}},
		{"body above 64 MiB", WithLargeBody(64<<20 + 1), conform.Problems{"WithLargeBody is 67108865, want 1–67108864 (64 MiB)"}},
	}
	def := config{writers: 8, perWriter: 25, bodySize: 1 << 20}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := def
			tt.opt(&c)
			if !slices.Equal(c.bad, tt.want) {
				t.Errorf("problems = %q, want %q", c.bad, tt.want)
			}
			if c.writers != def.writers || c.perWriter != def.perWriter || c.bodySize != def.bodySize {
				t.Errorf("an option out of range changed the config to %+v; want the defaults %+v", c, def)
			}
		})
	}
}

func TestOptionsInRange(t *testing.T) {
	var c config
	WithConcurrency(2, 1)(&c)
	WithLargeBody(64 << 20)(&c)
	if len(c.bad) != 0 || c.writers != 2 || c.perWriter != 1 || c.bodySize != 64<<20 {
		t.Errorf("config = %+v, want writers 2, perWriter 1, bodySize 64 MiB and no problems", c)
	}
}
