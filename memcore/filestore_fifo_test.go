//go:build unix

package memcore

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// A FIFO named like a memory is never opened for reading (which would wait
// for a writer forever): Read refuses it and List goes on without it —
// also when it takes a listed file's place between the listing and the
// read, the race the folder scan's own check cannot close.
func TestFileStoreNeverWaitsOnAFIFO(t *testing.T) {
	ctx := context.Background()
	ts := newTestStore(t)
	kept := memory(ScopeRepo, 0, "a regular memory file")
	ts.mustWrite(t, kept)
	fifoID := NewMemoryID()
	fifo := filepath.Join(ts.repo, fifoID+".md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}

	if _, err := ts.Read(ctx, fifoID); !errors.Is(err, ErrMalformed) {
		t.Errorf("Read of a FIFO = %v, want an error wrapping ErrMalformed", err)
	}
	if got := ids(ts.mustList(t)); !slices.Equal(got, []string{kept.Meta.ID}) {
		t.Errorf("List = %v, want only %s", got, kept.Meta.ID)
	}
	// The race: load is handed the FIFO's name as if the scan had listed a
	// regular file there.
	if _, _, err := ts.load(ScopeRepo, fifoID+".md", 0, false); !errors.Is(err, ErrMalformed) {
		t.Errorf("load of a FIFO = %v, want an error wrapping ErrMalformed", err)
	}
}
