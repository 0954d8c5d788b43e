package memcore

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/rs/zerolog"
)

// A field out of range is an error from Validate and from NewFileStore that
// wraps ErrInvalidConfig and names every bad field with its value and
// range; NewFileStore then creates nothing on disk.
func TestFileStoreConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  FileStoreConfig
		want string // "" for a valid config
	}{
		{"zero value", FileStoreConfig{}, ""},
		{"defaults", DefaultFileStoreConfig(), ""},
		{"parallelism 1", FileStoreConfig{Parallelism: 1}, ""},
		{"defer create", FileStoreConfig{DeferCreate: true}, ""},
		{"parallelism MaxInt", FileStoreConfig{Parallelism: math.MaxInt}, ""},
		{"parallelism negative", FileStoreConfig{Parallelism: -1},
			"memcore: invalid config: Parallelism is -1, want at least 1 (0 means runtime.GOMAXPROCS(0))"},
		{"parallelism MinInt", FileStoreConfig{Parallelism: math.MinInt},
			"memcore: invalid config: Parallelism is " + strconv.Itoa(math.MinInt) + ", want at least 1 (0 means runtime.GOMAXPROCS(0))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			root := t.TempDir()
			repo, user := filepath.Join(root, "repo"), filepath.Join(root, "user")
			s, newErr := NewFileStore(repo, user, tt.cfg)
			if tt.want == "" {
				if err != nil || newErr != nil {
					t.Fatalf("Validate = %v, NewFileStore = %v; want both nil", err, newErr)
				}
				if _, err := s.List(context.Background()); err != nil {
					t.Errorf("List: %v", err)
				}
				return
			}
			for _, e := range []error{err, newErr} {
				var ce *ConfigError
				if !errors.Is(e, ErrInvalidConfig) || !errors.As(e, &ce) {
					t.Fatalf("error %v is not a *ConfigError matching ErrInvalidConfig", e)
				}
				if e.Error() != tt.want {
					t.Errorf("error %q, want %q", e, tt.want)
				}
			}
			if s != nil {
				t.Errorf("NewFileStore returned a store with its error")
			}
			if _, err := os.Stat(repo); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused NewFileStore created %s", repo)
			}
		})
	}
}

// NewFileStore names every mistake at once: the folders and the fields.
func TestNewFileStoreListsEveryMistake(t *testing.T) {
	_, err := NewFileStore("", "", FileStoreConfig{Parallelism: -2})
	want := `memcore: invalid config: NewFileStore's folders is "" and "", want at least one folder (an empty one turns its scope off); ` +
		"Parallelism is -2, want at least 1 (0 means runtime.GOMAXPROCS(0))"
	if !errors.Is(err, ErrInvalidConfig) || err.Error() != want {
		t.Errorf("NewFileStore = %v\nwant %s", err, want)
	}
}

// A zero field means its default.
func TestFileStoreConfigZeroIsDefault(t *testing.T) {
	if got, want := (FileStoreConfig{}).withDefaults(), DefaultFileStoreConfig(); got.Parallelism != want.Parallelism {
		t.Errorf("FileStoreConfig{} with defaults: Parallelism %d, want %d", got.Parallelism, want.Parallelism)
	}
	if got := DefaultFileStoreConfig().Parallelism; got != runtime.GOMAXPROCS(0) {
		t.Errorf("default Parallelism = %d, want GOMAXPROCS %d", got, runtime.GOMAXPROCS(0))
	}
}

// The zero Logger logs nothing, and a Logger given is used.
func TestFileStoreConfigLogger(t *testing.T) {
	for _, tt := range []struct {
		name    string
		log     func(*bytes.Buffer) zerolog.Logger
		wantLog bool
	}{
		{"zero value logs nothing", func(*bytes.Buffer) zerolog.Logger { return zerolog.Logger{} }, false},
		{"given logger", func(b *bytes.Buffer) zerolog.Logger { return zerolog.New(b) }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestStore(t)
			if err := os.WriteFile(filepath.Join(ts.repo, idA+".md"), []byte("not a memory"), 0o600); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			s, err := NewFileStore(ts.repo, ts.user, FileStoreConfig{Logger: tt.log(&buf)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.List(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := buf.Len() > 0; got != tt.wantLog {
				t.Errorf("logged %t (%q), want %t", got, buf.String(), tt.wantLog)
			}
		})
	}
}
