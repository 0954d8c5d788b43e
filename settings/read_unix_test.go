//go:build unix

package settings_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore/atomicfile"
	"github.com/forgemem/forgemem/settings"
)

// A FIFO in the settings file's place is refused at once, never waited on.
func TestFIFOIsRefused(t *testing.T) {
	f := newFixture(t)
	mkdir(t, filepath.Dir(f.repoFile()))
	if err := syscall.Mkfifo(f.repoFile(), 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := settings.Load(f.options(nil, nil))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, atomicfile.ErrNotRegular) || !errors.Is(err, settings.ErrUnreadableFile) {
			t.Errorf("Load = %v; want ErrNotRegular", err)
		}
	case <-time.After(time.Minute): // a generous bound: Load blocked on the FIFO
		// Open the FIFO for writing so that a blocked reader returns.
		if w, err := os.OpenFile(f.repoFile(), os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("Load waited on a FIFO")
	}
}
