//go:build linux

package live

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/forgemem/forgemem/memcore"
	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"
)

// Folders is a memcore.MemoryStore over the folders of a memcore.FileStore
// whose List is served from memory and kept exact by file events (see the
// package documentation). Write, Read and ListByScope go to the FileStore.
// Its methods are safe for concurrent use.
type Folders struct {
	store      *memcore.FileStore // writes and reads by id
	dirs       [2]string          // the scope folders, by scopeIndex; "" when off
	barrierDir string
	prefix     string // of this Folders' barrier files: prefix + sequence number
	log        zerolog.Logger
	w          *fsnotify.Watcher
	changed    chan struct{} // gets a value when an event marks a file dirty
	done       chan struct{} // closed when the event loop ends

	syncMu sync.Mutex    // one Sync at a time
	issued atomic.Uint64 // the last barrier's sequence number

	mu    sync.Mutex
	files [2]map[string]*memcore.MemoryFile // by id: what List serves
	dirty [2]map[string]struct{}            // ids whose file changed since they were read
	// resync is set when events were lost: the next Sync reads the
	// folders in full.
	resync bool
	// grew is set when a file event other than a memory file going away
	// came in since the last Sync took the dirty files (see Shrinking).
	grew bool
	lost error  // set for good once a watched folder went away
	gen  uint64 // counts the Syncs that changed what List serves
	// list is List's answer, kept sorted as files change; nil when it
	// must be made again. dups counts the ids of both scopes.
	list []*memcore.MemoryFile
	dups int
	// skipped holds, by scope index and id, the memory files List does
	// not serve because FileStore.List skips them (see Skipped).
	skipped [2]map[string]memcore.Problem
	// reached is the last barrier whose event was read; wake is closed
	// and replaced whenever reached or lost changes.
	reached uint64
	wake    chan struct{}
}

// Open starts watching the scope folders of store, and barrierDir, a
// folder private to the user (mode 0700, outside any repository) where
// Sync creates its barrier files, then reads every memory file. Close it
// when done. It fails with an error wrapping [ErrUnsupported] where the
// system cannot watch the folders (too many watches, no inotify).
func Open(store *memcore.FileStore, barrierDir string, log zerolog.Logger) (*Folders, error) {
	var salt [6]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return nil, err
	}
	f := &Folders{
		store:      store,
		barrierDir: filepath.Clean(barrierDir),
		prefix:     fmt.Sprintf("%d-%s-", os.Getpid(), hex.EncodeToString(salt[:])),
		log:        log,
		changed:    make(chan struct{}, 1),
		done:       make(chan struct{}),
		wake:       make(chan struct{}),
		resync:     true,
	}
	for i, sc := range memcore.Scopes() {
		f.dirs[i] = store.Dir(sc)
		f.dirty[i] = map[string]struct{}{}
		f.skipped[i] = map[string]memcore.Problem{}
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	f.w = w
	for _, d := range append([]string{f.barrierDir}, f.dirs[:]...) {
		if d == "" {
			continue
		}
		if err := w.Add(d); err != nil {
			_ = w.Close()
			return nil, fmt.Errorf("%w: watching %s: %w", ErrUnsupported, d, err)
		}
	}
	go f.loop()
	if _, err := f.apply(context.Background()); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// Close stops watching. List keeps serving what the last Sync read.
func (f *Folders) Close() error {
	err := f.w.Close()
	<-f.done
	return err
}

// Changed gets a value, without blocking the watcher, whenever an event
// names a memory file since the last Sync, events were lost, or the view
// was lost: a long-lived process may Sync (and rebuild what it derives
// from List) before it is asked, or learn that Sync now fails.
func (f *Folders) Changed() <-chan struct{} { return f.changed }

// Shrinking reports whether the changes waiting for the next Sync are all
// memory files going away: as when the folder is being removed (rm -r) or
// memories purged. A watcher that lost events says no: what changed is
// unknown.
func (f *Folders) Shrinking() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.grew && !f.resync && f.lost == nil && len(f.dirty[0])+len(f.dirty[1]) > 0
}

// Sync brings List up to date with every write that finished before Sync
// was called: it waits for its barrier's event, then reads again the
// files whose events came in (or both folders in full, when events were
// lost). It returns a generation number that changes exactly when what
// List serves changed. It fails with an error wrapping [ErrLost] once a
// watched folder went away, and with ctx's error when ctx ends first.
func (f *Folders) Sync(ctx context.Context) (uint64, error) {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	if err := f.barrier(ctx); err != nil {
		return 0, err
	}
	return f.apply(ctx)
}

// barrier creates a new barrier file and waits until its event was read.
func (f *Folders) barrier(ctx context.Context) error {
	seq := f.issued.Add(1)
	path := filepath.Join(f.barrierDir, f.prefix+strconv.FormatUint(seq, 10))
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		f.loseIf(err)
		return fmt.Errorf("%w: the barrier file: %w", ErrLost, err)
	}
	_ = file.Close()
	defer os.Remove(path)
	return f.await(ctx, seq)
}

// await waits until barrier seq's event was read, the view was lost, or
// ctx ended.
func (f *Folders) await(ctx context.Context, seq uint64) error {
	for {
		f.mu.Lock()
		reached, lost, wake := f.reached, f.lost, f.wake
		f.mu.Unlock()
		switch {
		case lost != nil:
			return lost
		case reached >= seq:
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// loseIf records a barrier folder that went away as lost.
func (f *Folders) loseIf(err error) {
	if errors.Is(err, os.ErrNotExist) {
		f.lose(fmt.Errorf("%w: %s", ErrLost, f.barrierDir))
	}
}

// apply reads again the dirty files, or everything after lost events,
// and returns the generation of what List serves.
func (f *Folders) apply(ctx context.Context) (uint64, error) {
	f.mu.Lock()
	if f.lost != nil {
		f.mu.Unlock()
		return 0, f.lost
	}
	resync := f.resync
	f.resync, f.grew = false, false
	var dirty [2]map[string]struct{}
	for i := range f.dirty {
		dirty[i], f.dirty[i] = f.dirty[i], map[string]struct{}{}
	}
	f.mu.Unlock()
	if resync {
		return f.readAll(ctx)
	}
	return f.readDirty(ctx, dirty)
}

// readAll reads both folders through a new FileStore, whose parse cache
// is empty, as a new process would.
func (f *Folders) readAll(ctx context.Context) (uint64, error) {
	fresh, err := memcore.NewFileStore(f.dirs[0], f.dirs[1], memcore.FileStoreConfig{Logger: f.log})
	if err != nil {
		f.markResync()
		return 0, fmt.Errorf("live: reading the memory folders: %w", err)
	}
	var files [2]map[string]*memcore.MemoryFile
	for i, sc := range memcore.Scopes() {
		files[i] = map[string]*memcore.MemoryFile{}
		if f.dirs[i] == "" {
			continue
		}
		// A folder List cannot read is skipped by List: served as empty.
		ms, _ := fresh.ListByScope(ctx, sc)
		if err := ctx.Err(); err != nil {
			f.markResync()
			return 0, err
		}
		for _, m := range ms {
			files[i][m.Meta.ID] = m
		}
	}
	dups := 0
	for id := range files[0] {
		if _, ok := files[1][id]; ok {
			dups++
		}
	}
	var skipped [2]map[string]memcore.Problem
	for i := range skipped {
		skipped[i] = map[string]memcore.Problem{}
	}
	for _, p := range fresh.Skipped() {
		if si, id, ok := f.memoryFile(p.Path); ok {
			skipped[si][id] = p
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files, f.dups, f.skipped = files, dups, skipped
	f.list = nil
	f.gen++
	return f.gen, nil
}

// markResync asks the next Sync to read everything again (this one
// could not).
func (f *Folders) markResync() {
	f.mu.Lock()
	f.resync = true
	f.mu.Unlock()
}

// readDirty reads the files of the dirty ids again.
func (f *Folders) readDirty(ctx context.Context, dirty [2]map[string]struct{}) (uint64, error) {
	type change struct {
		si int
		id string
		m  *memcore.MemoryFile // nil: List serves no memory from the file
		// skip is why List skips the file, nil when it serves it or the
		// file is gone.
		skip error
	}
	var changes []change
	for si, ids := range dirty {
		for id := range ids {
			m, err := f.store.ReadIn(ctx, memcore.Scopes()[si], id)
			if ctxErr := ctx.Err(); ctxErr != nil {
				f.requeue(dirty)
				return 0, ctxErr
			}
			c := change{si: si, id: id, m: m}
			if err != nil {
				c.m = nil // gone, or a file List skips
				// A folder that became unsafe is no file's problem.
				if !errors.Is(err, memcore.ErrNotFound) && !errors.Is(err, memcore.ErrUnsafeFolder) {
					c.skip = err
				}
			}
			changes = append(changes, c)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	changed := false
	for _, c := range changes {
		if c.skip != nil {
			f.skipped[c.si][c.id] = memcore.Problem{Path: filepath.Join(f.dirs[c.si], c.id+".md"), Scope: memcore.Scopes()[c.si], Err: c.skip}
		} else {
			delete(f.skipped[c.si], c.id)
		}
		old, had := f.files[c.si][c.id]
		_, inOther := f.files[1-c.si][c.id]
		switch {
		case c.m == nil && had:
			delete(f.files[c.si], c.id)
			if inOther {
				f.dups--
			}
		case c.m != nil && !(had && sameMemory(old, c.m)):
			f.files[c.si][c.id] = c.m
			if inOther && !had {
				f.dups++
			}
		default:
			continue
		}
		f.replaceInList(old, c.m, inOther)
		changed = true
	}
	if changed {
		f.gen++
	}
	return f.gen, nil
}

// Skipped returns the memory files List does not serve because
// FileStore.List skips them — a merge conflict, a file too large, one that
// is not a valid memory file or cannot be read — as of the last Sync,
// ordered by path. It reads nothing. Only files named <memory id>.md are
// in it, which file events follow: not other .md files, nor a folder that
// cannot be read.
func (f *Folders) Skipped() []memcore.Problem {
	f.mu.Lock()
	var out []memcore.Problem
	for _, ps := range f.skipped {
		for _, p := range ps {
			out = append(out, p)
		}
	}
	f.mu.Unlock()
	slices.SortFunc(out, func(a, b memcore.Problem) int { return cmp.Compare(a.Path, b.Path) })
	return out
}

// memoryFile returns the scope index and the id of path when it is a
// memory file of a watched folder, named <memory id>.md.
func (f *Folders) memoryFile(path string) (si int, id string, ok bool) {
	dir, base := filepath.Split(path)
	id, ok = strings.CutSuffix(base, ".md")
	if !ok || memcore.ValidateID(id) != nil {
		return 0, "", false
	}
	for si, d := range f.dirs {
		if d != "" && filepath.Clean(dir) == d {
			return si, id, true
		}
	}
	return 0, "", false
}

// requeue marks dirty's ids dirty again: a Sync that stopped early did
// not read them.
func (f *Folders) requeue(dirty [2]map[string]struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.grew = true // what they were is not kept: not known to be shrinking
	for si, ids := range dirty {
		for id := range ids {
			f.dirty[si][id] = struct{}{}
		}
	}
}

// loop reads the watcher's events until it is closed.
func (f *Folders) loop() {
	defer close(f.done)
	defer f.lose(fmt.Errorf("%w: the watcher stopped", ErrLost))
	events, errs := f.w.Events, f.w.Errors
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			f.handle(ev)
		case err, ok := <-errs:
			if !ok {
				return
			}
			f.handleError(err)
		}
	}
}

// handle records one event: a barrier reached, a memory file dirty, or a
// watched folder gone.
func (f *Folders) handle(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	if name == f.barrierDir || name == f.dirs[0] || name == f.dirs[1] {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			f.lose(fmt.Errorf("%w: %s", ErrLost, name))
		}
		return
	}
	dir, base := filepath.Dir(name), filepath.Base(name)
	if dir == f.barrierDir {
		if n, ok := strings.CutPrefix(base, f.prefix); ok && ev.Has(fsnotify.Create) {
			if seq, err := strconv.ParseUint(n, 10, 64); err == nil {
				f.reach(seq)
			}
		}
		return
	}
	gone := !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename))
	for si, d := range f.dirs {
		if d != "" && dir == d {
			f.markDirty(si, base, gone)
			return
		}
	}
}

// markDirty marks the memory file named base of scope index si dirty,
// gone when the event was its removal (or its move away); other files are
// not memories List serves.
func (f *Folders) markDirty(si int, base string, gone bool) {
	id, ok := strings.CutSuffix(base, ".md")
	if !ok || memcore.ValidateID(id) != nil {
		return
	}
	f.mu.Lock()
	f.dirty[si][id] = struct{}{}
	f.grew = f.grew || !gone
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// handleError records a watcher error: events may have been lost, so the
// next Sync reads everything again, and barriers waiting now are released
// (their events may be among those lost).
func (f *Folders) handleError(err error) {
	if !errors.Is(err, fsnotify.ErrEventOverflow) {
		f.log.Warn().Err(err).Msg("live: the file watcher failed; the memory folders are read again")
	}
	f.mu.Lock()
	f.resync = true
	f.reached = max(f.reached, f.issued.Load())
	f.broadcast()
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// reach records that barrier seq's event was read.
func (f *Folders) reach(seq uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq > f.reached {
		f.reached = seq
		f.broadcast()
	}
}

// lose records, for good, that the view can no longer be kept exact, and
// says so on Changed: the next Sync fails.
func (f *Folders) lose(err error) {
	f.mu.Lock()
	if f.lost == nil {
		f.lost = err
		f.broadcast()
	}
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// broadcast wakes every barrier waiting; the caller holds f.mu.
func (f *Folders) broadcast() {
	close(f.wake)
	f.wake = make(chan struct{})
}
