//go:build unix

package main_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/creack/pty"
)

// forgemem recall in a real terminal never waits there without a word:
// with nothing given it is a usage error saying what to give; with - it
// says what it reads and how to end it, then reads what is typed up to
// Ctrl-D.
func TestRecallInAPseudoTerminal(t *testing.T) {
	w := newWorld(t)
	repo := w.repo("service")
	start := func(args ...string) (*exec.Cmd, *os.File, *screen) {
		t.Helper()
		cmd := exec.Command(binary, args...)
		cmd.Dir = repo
		cmd.Env = []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=sk-test-e2e-key", "NO_COLOR=1", "TERM=dumb"}
		tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 400})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tty.Close() })
		s := &screen{more: make(chan struct{})}
		go s.watch(tty)
		return cmd, tty, s
	}
	exitCode := func(err error) int {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	}

	cmd, _, s := start("recall")
	s.waitFor(t, "give the conversation to recall for: one message with --message TEXT", 1)
	if code := exitCode(cmd.Wait()); code != 2 {
		t.Errorf("recall on a terminal: exit %d, want 2", code)
	}

	cmd, tty, s := start("recall", "-")
	s.waitFor(t, "reading the conversation from the terminal", 1)
	if _, err := io.WriteString(tty, `{"role": "user", "content": "How do we lock rows?"}`+"\n\x04"); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(cmd.Wait()); code != 0 {
		s.mu.Lock()
		defer s.mu.Unlock()
		t.Errorf("recall - on a terminal: exit %d, want 0:\n%s", code, s.text.String())
	}
}
