//go:build unix

package main_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// SIGTERM stops `forgemem recall` reading a FIFO whose writer is open and
// sends nothing more: it exits at once, saying it was interrupted, rather
// than when the writer goes away (which it never does here).
func TestRecallStopsReadingAFIFOOnSIGTERM(t *testing.T) {
	w := newWorld(t)
	repo := w.repo("shop")
	fifo := mkfifo(t, filepath.Join(t.TempDir(), "conversation.jsonl"))
	// A bound on every wait for the process, so that a recall stuck in its
	// read fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), stuckAfter)
	defer cancel()

	cmd := exec.Command(binary, "recall", fifo)
	cmd.Dir = repo
	cmd.Env = []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=sk-test-e2e-key"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	defer func() {
		_ = cmd.Process.Kill() // an error once it has exited
		<-exited
	}()

	// Opening the FIFO for writing returns once recall has opened it for
	// reading, which it does after setting up its signal handling: from
	// then on it is in its read, and stays there, since the writer sends
	// half a line and stays open.
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
		}
		opened <- f
	}()
	var writer *os.File
	select {
	case writer = <-opened:
	case <-exited:
		unblock(fifo, opened)
		t.Fatalf("recall exited before opening the FIFO: %v, stderr %q", waitErr, stderr.String())
	case <-ctx.Done():
		unblock(fifo, opened)
		t.Fatalf("recall did not open the FIFO in %s", stuckAfter)
	}
	if writer == nil {
		return
	}
	defer writer.Close()
	if _, err := io.WriteString(writer, `{"role": "user", "content": "how do we`); err != nil {
		t.Fatal(err)
	}

	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		var exit *exec.ExitError
		code := 0
		if errors.As(waitErr, &exit) {
			code = exit.ExitCode() // -1 when the signal killed it
		}
		if want := "forgemem recall: interrupted\n"; code != 1 || stdout.Len() != 0 || stderr.String() != want {
			t.Errorf("after SIGTERM: exit %d, stdout %q, stderr %q; want 1 and %q", code, stdout.String(), stderr.String(), want)
		}
		t.Logf("recall exited %v after SIGTERM", time.Since(signalled))
	case <-ctx.Done():
		t.Fatalf("recall still reading the FIFO %s after SIGTERM", stuckAfter)
	}
}

// unblock ends the test's open of fifo for writing, when recall never
// opened it for reading, by opening it for reading itself.
func unblock(fifo string, opened <-chan *os.File) {
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		defer r.Close()
	}
	if f := <-opened; f != nil {
		f.Close()
	}
}
