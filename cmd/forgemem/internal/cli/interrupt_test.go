package cli_test

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
)

// stuckStdin is a pipe the test holds open and never writes to: reading
// it blocks, as reading `sleep 30 | forgemem recall` does. reading is
// closed at the first read.
type stuckStdin struct {
	r       *os.File
	once    sync.Once
	reading chan struct{}
}

func newStuckStdin(t *testing.T) *stuckStdin {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The end of the input ends the read the command left behind.
	t.Cleanup(func() {
		w.Close()
		r.Close()
	})
	return &stuckStdin{r: r, reading: make(chan struct{})}
}

func (s *stuckStdin) Read(p []byte) (int, error) {
	s.once.Do(func() { close(s.reading) })
	return s.r.Read(p)
}

// The commands that read a conversation or a dataset stop when they are
// interrupted (Ctrl-C, SIGTERM: the context ends) while their input gives
// nothing, with the interruption's message and exit code, rather than
// waiting for input that may never come.
func TestReadingStopsWhenInterrupted(t *testing.T) {
	f := newFixture(t)
	f.seed()
	for _, args := range [][]string{
		{"recall"},
		{"recall", "-"},
		{"recall", "--json"},
		{"capture", "-"},
		{"eval", "--dataset", "-"},
	} {
		name := strings.Join(args, " ")
		want := "forgemem " + args[0] + ": interrupted\n"
		t.Run(name, func(t *testing.T) {
			// A generous bound, so that a command stuck in its read fails
			// the test rather than hanging it.
			bound, stop := context.WithTimeout(context.Background(), time.Minute)
			defer stop()
			in := newStuckStdin(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan result, 1)
			go func() { done <- f.runReading(ctx, f.repo, in, args...) }()
			select {
			case <-in.reading:
			case r := <-done:
				t.Fatalf("returned before reading stdin: exit %d, stderr %q", r.code, r.stderr)
			case <-bound.Done():
				t.Fatal("stdin was never read")
			}
			cancel() // while the command waits in its read
			select {
			case r := <-done:
				if r.code != cli.ExitFailure || r.stderr != want || r.stdout != "" {
					t.Errorf("interrupted while reading: exit %d, stdout %q, stderr %q; want %d and %q", r.code, r.stdout, r.stderr, cli.ExitFailure, want)
				}
			case <-bound.Done():
				t.Fatal("still reading a minute after the interrupt")
			}
		})
		t.Run(name+" interrupted before", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			r := f.runReading(ctx, f.repo, newStuckStdin(t), args...)
			if r.code != cli.ExitFailure || r.stderr != want || r.stdout != "" {
				t.Errorf("interrupted before reading: exit %d, stdout %q, stderr %q; want %d and %q", r.code, r.stdout, r.stderr, cli.ExitFailure, want)
			}
		})
	}
}

// A conversation piped in is read to its end, as one given as a string
// is.
func TestRecallReadsAPipe(t *testing.T) {
	f := newFixture(t)
	f.seed()
	ask := conversation("We need to change how user updates lock rows.")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	wg.Go(func() {
		defer w.Close()
		if _, err := io.WriteString(w, ask); err != nil {
			t.Error(err)
		}
	})
	piped := f.runReading(context.Background(), f.repo, r, "recall")
	wg.Wait()
	given := f.runIn(context.Background(), f.repo, ask, "recall")
	if piped.code != cli.ExitOK || piped.stdout == "" || f.normalize(piped.stdout) != f.normalize(given.stdout) {
		t.Errorf("recall of a pipe: exit %d, stderr %q, stdout differs from the same conversation's:\n%s", piped.code, piped.stderr, piped.stdout)
	}
}
