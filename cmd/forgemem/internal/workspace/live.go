package workspace

import (
	"context"
	"encoding/binary"
	"errors"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/live"
	"github.com/forgemem/forgemem/memcore"
)

// errClosed: the workspace was closed.
var errClosed = errors.New("workspace: closed")

// openLive keeps the memory folders in memory when Options.LiveDir asks.
func (w *Workspace) openLive() {
	if w.opts.LiveDir == "" {
		w.liveErr = errors.New("workspace: Options.LiveDir is not set")
		return
	}
	f, err := live.Open(w.store, w.opts.LiveDir, w.opts.Logger)
	if err != nil {
		w.opts.Logger.Info().Err(err).Msg("workspace: the memory folders are read before each recall")
		w.liveErr = err
		return
	}
	w.live = f
}

// Live returns nil when the retrieval engines' memories are kept in
// memory, exact by the system's file events (Options.LiveDir), or why not:
// it was not asked, the system cannot, or a watched folder went away
// (live.ErrLost; the folders are then read before each recall and search,
// as without it).
func (w *Workspace) Live() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live != nil {
		return nil
	}
	return w.liveErr
}

// Changed gets a value when a memory file changed since the folders were
// last brought up to date; nil (never) without Options.LiveDir.
func (w *Workspace) Changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live == nil {
		return nil
	}
	return w.live.Changed()
}

// Shrinking reports whether the memory file changes waiting (see Changed)
// are all files going away, as when the folder is being removed; false
// without Options.LiveDir.
func (w *Workspace) Shrinking() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.live != nil && w.live.Shrinking()
}

// engineStore is the store a new retrieval engine lists: the live view of
// the folders, or the FileStore.
func (w *Workspace) engineStore() memcore.MemoryStore {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live != nil {
		return w.live
	}
	return w.store
}

// freshness returns the state of the memory folders an engine's index is
// compared with: with the live view, its generation after a Sync (exact,
// and reading only what changed); without, the folders' fingerprint. When
// the live view is lost, the engines made over it are dropped and the
// folders are read from then on. ok is false when the state is unknown.
func (w *Workspace) freshness(ctx context.Context) (st folderState, ok bool) {
	w.mu.Lock()
	f := w.live
	w.mu.Unlock()
	if f == nil {
		return w.folderState()
	}
	gen, err := f.Sync(ctx)
	switch {
	case err == nil:
		copy(st[:], "live")
		binary.LittleEndian.PutUint64(st[8:], gen)
		return st, true
	case ctx.Err() != nil:
		return st, false
	}
	w.dropLive(f, err)
	return w.folderState()
}

// dropLive stops using the live view f, which failed with err, and the
// engines made over it.
func (w *Workspace) dropLive(f *live.Folders, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live != f {
		return // dropped already
	}
	w.opts.Logger.Warn().Err(err).Msg("workspace: the memory folders can no longer be watched; they are read before each recall")
	_ = f.Close()
	w.live, w.liveErr = nil, err
	for name, e := range w.engines {
		_ = e.Close(context.Background())
		delete(w.engines, name)
		delete(w.built, name)
	}
}
