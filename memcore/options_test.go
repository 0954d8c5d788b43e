package memcore

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// An option out of range is an error from NewFileStore that wraps
// ErrInvalidConfig and names every bad option with its value and range;
// nothing is created on disk.
func TestNewFileStoreRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"parallelism 0", []Option{WithParallelism(0)},
			"memcore: invalid config: WithParallelism is 0, want at least 1"},
		{"parallelism negative", []Option{WithParallelism(-1)},
			"memcore: invalid config: WithParallelism is -1, want at least 1"},
		{"parallelism MinInt", []Option{WithParallelism(math.MinInt)},
			"memcore: invalid config: WithParallelism is " + strconv.Itoa(math.MinInt) + ", want at least 1"},
		{"every bad option is named", []Option{WithParallelism(0), WithLogger(zerolog.Nop()), WithParallelism(-2)},
			"memcore: invalid config: WithParallelism is 0, want at least 1; WithParallelism is -2, want at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			repo, user := filepath.Join(root, "repo"), filepath.Join(root, "user")
			s, err := NewFileStore(repo, user, tt.opts...)
			if !errors.Is(err, ErrInvalidConfig) || s != nil {
				t.Fatalf("NewFileStore = %v, %v; want an error wrapping ErrInvalidConfig", s, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error %q, want %q", err, tt.want)
			}
			if _, err := os.Stat(repo); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused NewFileStore created %s", repo)
			}
		})
	}
}

// No option panics, whatever it is given: every option constructor is
// called with extreme values, and NewFileStore either accepts the result
// (and the store works) or refuses it with ErrInvalidConfig.
func TestOptionsNeverPanic(t *testing.T) {
	ints := []int{math.MinInt, -1, 0, 1, 2, math.MaxInt}
	var opts []Option
	for _, n := range ints {
		opts = append(opts, WithParallelism(n))
	}
	opts = append(opts, WithLogger(zerolog.Logger{}), WithLogger(zerolog.Nop()), nil)
	ts := newTestStore(t)
	ts.mustWrite(t, memory(ScopeRepo, 0, "listed"))
	for i, opt := range opts {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("option %d panicked: %v", i, r)
				}
			}()
			s, err := NewFileStore(ts.repo, ts.user, opt)
			if err != nil {
				if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "WithParallelism is ") || !strings.Contains(err.Error(), "want at least 1") {
					t.Errorf("option %d: error %v does not wrap ErrInvalidConfig with the allowed range", i, err)
				}
				return
			}
			if ms, err := s.List(context.Background()); err != nil || len(ms) != 1 {
				t.Errorf("option %d: List = %d memories, %v; want 1", i, len(ms), err)
			}
		}()
	}
}
