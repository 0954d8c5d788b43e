package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/spool"
	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/settings"
)

// Captures queued by agent hooks wait in the spool of the place's memory
// folder — the repository's (.forge/memory/.spool/) inside a repository,
// else the user's — until a worker runs their passes (package spool).

// SpoolDir returns the memory folder whose spool holds this place's
// queued captures: the repository's when the repository scope is on, else
// the user's.
func (w *Workspace) SpoolDir() string {
	if d := w.store.Dir(memcore.ScopeRepo); d != "" {
		return d
	}
	return w.store.Dir(memcore.ScopeUser)
}

// queueEmpty reports whether this place's capture queue can be read and
// holds no entry.
func (w *Workspace) queueEmpty() bool {
	sp, err := w.Spool()
	if err != nil {
		return false
	}
	items, err := sp.List()
	return err == nil && len(items) == 0
}

// Spool opens this place's capture queue, whose entries are signed with
// the user's capture key (see [Workspace.captureKey]).
func (w *Workspace) Spool() (*spool.Spool, error) {
	key, err := w.captureKey()
	if err != nil {
		return nil, err
	}
	return spool.Open(w.SpoolDir(), key)
}

// captureKey returns the user's capture key, which signs the entries the
// user's hooks queue so that a worker runs no entry a repository committed
// into its queue (spool.LoadKey). It is kept in the user's memory folder,
// whatever the queue, made on first use, and read once per workspace (a
// hook opens the queue to add its entry, then to look for a worker).
func (w *Workspace) captureKey() (spool.Key, error) { return w.loadKey(true) }

// existingKey is captureKey, except in a workspace opened with
// Options.DeferCreate, where it makes nothing: no key yet (nor, perhaps,
// a user's folder to keep it in) is an error wrapping fs.ErrNotExist.
// For what reads with the key and has nothing to read without one.
func (w *Workspace) existingKey() (spool.Key, error) { return w.loadKey(!w.opts.DeferCreate) }

// loadKey returns the user's capture key, read once per workspace, made
// when create says so and there is none; without create, no key yet is an
// error wrapping fs.ErrNotExist, not kept (a later call may make the key).
func (w *Workspace) loadKey(create bool) (spool.Key, error) {
	w.keyMu.Lock()
	defer w.keyMu.Unlock()
	if w.keyDone {
		return w.key, w.keyErr
	}
	var key spool.Key
	var err error
	switch dir := w.store.Dir(memcore.ScopeUser); {
	case dir == "":
		err = errors.New("captures cannot be queued or run: there is no home folder to keep the user's capture key in; set HOME or pass --user-dir")
	case create:
		key, err = spool.LoadKey(dir)
	default:
		if key, err = spool.ReadKey(dir); errors.Is(err, fs.ErrNotExist) {
			return key, err
		}
	}
	w.key, w.keyErr, w.keyDone = key, err, true
	return key, err
}

// QueueCapture queues a capture trigger for the worker and returns the
// entry's name. The spool redacts the messages before it writes them. It
// fails with [ErrDisabled] when memory.enabled is false here, with
// [ErrNeedsModel] when no model is configured for capture (see
// [Workspace.CaptureOff]: nothing would ever run the entry), with
// [ErrInvalidInput] for an entry with no message, and with an error
// wrapping spool.ErrFull when the queue is full (the entry is dropped and
// counted; [Workspace.Pending] reports it).
func (w *Workspace) QueueCapture(e spool.Entry) (string, error) {
	if !w.settings.Enabled {
		return "", fmt.Errorf("%w: %s; nothing is captured", ErrDisabled, w.settings.RetrievalOff())
	}
	if len(e.Messages) == 0 {
		return "", invalidf("the conversation to capture has no user or assistant text")
	}
	if err := w.CaptureOff(); err != nil {
		return "", err
	}
	sp, err := w.Spool()
	if err != nil {
		return "", err
	}
	name, err := sp.Add(e)
	if err == nil {
		sp.ClearNotice() // captures are on: a notice that they are off is said again if they go off
	}
	return name, err
}

// NoticeOnce reports whether notice — why agent hooks queue no captures
// here — has not been said yet in this place's capture queue, and records
// it there (spool.Spool.NoticeOnce), so that a hook says it once, not at
// every turn. When the queue cannot be opened it is true: said every time
// rather than never.
func (w *Workspace) NoticeOnce(notice string) bool {
	sp, err := w.Spool()
	if err != nil {
		return true
	}
	return sp.NoticeOnce(notice)
}

// Tell reports whether set — what a hook tells a session, such as the
// digest of the memory files recall could not read — differs from what
// this place's capture queue recorded as last told to session, and records
// it (spool.Spool.Tell). When the queue cannot be opened it is true: told
// every time rather than never. A hook with nothing to tell calls
// TellNothing.
func (w *Workspace) Tell(session, set string) bool {
	if set == "" {
		tellNothing(w.SpoolDir(), w.store.Dir(memcore.ScopeUser), session)
		return false
	}
	sp, err := w.Spool()
	if err != nil {
		return true
	}
	return sp.Tell(session, set)
}

// TellNothing records that a hook has nothing to tell session in the place
// of s — the memory files all read again — so that what it tells next is
// told (spool.Spool.Tell with ""), without opening the memory folders: it
// reads the record of the place's capture queue, and writes it only when
// the session was told something. It makes nothing: no queue, no capture
// key; with none there is nothing to forget.
func TellNothing(s *settings.Settings, session string) {
	repo, user := s.Paths.RepoDir, s.Paths.UserDir
	for _, d := range []*string{&repo, &user} {
		if *d != "" {
			if abs, err := filepath.Abs(*d); err == nil {
				*d = abs
			}
		}
	}
	dir := repo
	if dir == "" {
		dir = user
	}
	tellNothing(dir, user, session)
}

// tellNothing is TellNothing for the queue of the memory folder dir and
// the capture key of the user's memory folder userDir.
func tellNothing(dir, userDir, session string) {
	if dir == "" || userDir == "" {
		return
	}
	key, err := spool.ReadKey(userDir)
	if err != nil {
		return
	}
	if sp, err := spool.OpenExisting(dir, key); err == nil && sp != nil {
		sp.Tell(session, "")
	}
}

// CaptureReady says whether queued captures can be processed here: nil,
// or why not — [ErrDisabled], [ErrNeedsModel] (the fake provider has no
// classifier), [ErrProviderSetup].
func (w *Workspace) CaptureReady() error {
	if !w.settings.Enabled {
		return fmt.Errorf("%w: %s; nothing is captured", ErrDisabled, w.settings.RetrievalOff())
	}
	models, err := w.Models()
	if err != nil {
		return err
	}
	_, _, err = models.NeedClassifier()
	return err
}

// CaptureOff says why agent hooks queue no captures here, or nil: no model
// is configured for capture (the fake provider has no classifier), so an
// entry would wait for good. The error wraps [ErrNeedsModel] and says what
// to set. A provider that is configured but cannot be made yet (an API
// key not exported: [ErrProviderSetup]) does not turn queueing off: the
// entries wait for the fix, within the queue's bounds.
func (w *Workspace) CaptureOff() error {
	if err := w.CaptureReady(); errors.Is(err, ErrNeedsModel) {
		return fmt.Errorf("agent hooks queue no captures: %w", err)
	}
	return nil
}

// WorkerOptions configure [Workspace.RunWorker].
type WorkerOptions struct {
	// Idle is how long the worker waits for a new entry once the queue is
	// empty before it exits; 0 exits at once.
	Idle time.Duration
	// OnEntry, when set, is told of each entry after its pass.
	OnEntry func(WorkerEntry)
}

// WorkerEntry is what happened to one queued capture.
type WorkerEntry struct {
	Name string          `json:"name"`
	Kind memcore.Trigger `json:"kind"`
	// Covered counts the older turns of the session the pass stood for,
	// removed with it.
	Covered int `json:"covered"`
	// Written counts the memories the pass wrote.
	Written int `json:"written"`
	// Err is why the pass failed; the entry then stays queued, unless
	// SetAside says otherwise.
	Err string `json:"error,omitempty"`
	// SetAside is true when the entry could not be read — not one this
	// user's hooks queued (a repository committed it), or not an entry at
	// all — and was renamed <name>.bad, out of the queue: no worker runs
	// it. Err says why.
	SetAside bool `json:"set_aside,omitempty"`
}

// WorkerResult is what a worker did.
type WorkerResult struct {
	// Busy is true when another worker held the queue: this one did
	// nothing.
	Busy bool `json:"busy"`
	// Entries are the passes run, in order.
	Entries []WorkerEntry `json:"entries"`
	// Written counts the memories written; Failed the passes that failed,
	// whose entries wait for the next worker; SetAside the entries that
	// could not be read, set aside out of the queue (WorkerEntry.SetAside).
	Written  int `json:"written"`
	Failed   int `json:"failed"`
	SetAside int `json:"set_aside"`
}

// RunWorker runs the passes of the queued captures, one at a time, with
// one capture pipeline (the settings' provider and classifier model), and
// returns when the queue has been empty for opts.Idle, when every entry
// left has failed in this run, or when ctx ends. It holds the queue's lock
// meanwhile; if another worker holds it, it returns at once with Busy set.
//
// Compaction triggers go first, oldest first; of the turn triggers of one
// session only the newest is run, and the older ones, which its window
// holds, are removed with it. An entry is removed only once its pass has
// finished (memcapture's Pipeline.Flush), so a worker killed mid-pass
// leaves it for the next; a pass that failed (the provider down, refusing
// the key, answering nonsense) leaves it too, with the failure recorded,
// and it is retried by the next worker. Re-running a pass whose memories
// were written before a crash writes nothing again: capture skips what the
// store already says.
//
// It fails with [ErrDisabled], [ErrNeedsModel] or [ErrProviderSetup] when
// captures cannot be processed here (see [Workspace.CaptureReady]); the
// entries then wait.
func (w *Workspace) RunWorker(ctx context.Context, opts WorkerOptions) (*WorkerResult, error) {
	if err := w.CaptureReady(); err != nil {
		// Without a model, an empty queue with nothing to wait for is no
		// failure: nothing was left undone.
		if errors.Is(err, ErrNeedsModel) && opts.Idle <= 0 && w.queueEmpty() {
			return &WorkerResult{Entries: []WorkerEntry{}}, nil
		}
		return nil, err
	}
	sp, err := w.Spool()
	if err != nil {
		return nil, err
	}
	unlock, err := sp.TryLock()
	if errors.Is(err, spool.ErrLocked) {
		return &WorkerResult{Busy: true, Entries: []WorkerEntry{}}, nil
	}
	if err != nil {
		return nil, err
	}
	r := &workerRun{w: w, sp: sp, opts: opts, unlock: unlock, locked: true,
		res: &WorkerResult{Entries: []WorkerEntry{}}, failed: map[string]bool{}}
	defer r.release()
	watcher, werr := sp.Watch() // before the first List: no entry is missed
	if werr != nil {
		w.opts.Logger.Warn().Err(werr).Msg("forgemem worker: cannot watch the queue; new entries are seen only when idle ends")
	}
	defer watcher.Close()
	r.watcher = watcher

	p, err := w.newPipeline(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = p.Close(cctx)
	}()
	return r.loop(ctx, p)
}

// workerRun is one run of RunWorker: the queue, its lock, and what the run
// did so far.
type workerRun struct {
	w       *Workspace
	sp      *spool.Spool
	opts    WorkerOptions
	watcher *spool.Watcher
	unlock  func()
	locked  bool
	res     *WorkerResult
	// failed holds the entries whose pass failed in this run: not taken
	// again by it.
	failed map[string]bool
}

// release releases the queue's lock if the run holds it.
func (r *workerRun) release() {
	if r.locked {
		r.unlock()
		r.locked = false
	}
}

// skip reports whether the run passes over it: its pass failed in this
// run.
func (r *workerRun) skip(it spool.Item) bool { return r.failed[it.Name] }

// loop runs the queue's entries, next first, until the queue stays empty
// past the idle time (see idle) or ctx ends.
func (r *workerRun) loop(ctx context.Context, p *memcapture.Pipeline) (*WorkerResult, error) {
	var idleUntil time.Time
	for ctx.Err() == nil {
		items, err := r.sp.List()
		if err != nil {
			return r.res, err
		}
		next, covered, ok := spool.Next(items, r.skip)
		if !ok {
			if idleUntil.IsZero() {
				idleUntil = time.Now().Add(r.opts.Idle)
			}
			more, err := r.idle(ctx, idleUntil)
			if err != nil || !more {
				return r.res, err
			}
			continue
		}
		idleUntil = time.Time{}
		ent := r.w.runEntry(ctx, r.sp, p, next, covered)
		if ctx.Err() != nil {
			break // the pass was cut short: the entry stays
		}
		r.record(next, ent)
	}
	return r.res, ctx.Err()
}

// idle waits, while the idle time lasts, for a new entry. When it ends
// with none, the run leaves: it releases the lock, then looks once more,
// so that an entry queued by a hook that saw the lock held is not
// stranded, and takes the lock again for it. more reports whether the
// run goes on.
func (r *workerRun) idle(ctx context.Context, until time.Time) (more bool, err error) {
	if r.opts.Idle > 0 && time.Now().Before(until) && r.watcher.Wait(ctx, until) {
		return true, nil
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	r.release()
	items, err := r.sp.List()
	if err != nil {
		return false, err
	}
	if _, _, pending := spool.Next(items, r.skip); !pending {
		return false, nil
	}
	if r.unlock, err = r.sp.TryLock(); err != nil {
		if errors.Is(err, spool.ErrLocked) {
			return false, nil // the hook's worker has it
		}
		return false, err
	}
	r.locked = true
	return true, nil
}

// record adds the outcome of the pass over it to the run's result.
func (r *workerRun) record(it spool.Item, ent WorkerEntry) {
	switch {
	case ent.SetAside:
		r.failed[it.Name] = true
		r.res.SetAside++
	case ent.Err != "":
		r.failed[it.Name] = true
		r.res.Failed++
	}
	r.res.Written += ent.Written
	r.res.Entries = append(r.res.Entries, ent)
	if r.opts.OnEntry != nil {
		r.opts.OnEntry(ent)
	}
}

// runEntry runs the pass of one entry and removes it, with the turns it
// covers, once the pass has finished; a failed pass is recorded in the
// entry instead.
func (w *Workspace) runEntry(ctx context.Context, sp *spool.Spool, p *memcapture.Pipeline, it spool.Item, covered []spool.Item) WorkerEntry {
	ent := WorkerEntry{Name: it.Name, Kind: it.Kind, Covered: len(covered)}
	log := w.opts.Logger.With().Str("entry", it.Name).Logger()
	e, err := sp.Read(it.Name)
	switch {
	case errors.Is(err, fs.ErrNotExist): // removed meanwhile
		return ent
	case err != nil:
		ent.Err = err.Error()
		if serr := sp.SetAside(it.Name); serr != nil {
			log.Warn().Err(err).AnErr("set_aside", serr).Msg("forgemem worker: unreadable entry, and it could not be set aside")
			ent.Err += "; it could not be set aside: " + serr.Error()
			return ent
		}
		log.Warn().Err(err).Msg("forgemem worker: unreadable entry set aside")
		ent.SetAside = true
		return ent
	}
	before := p.Stats()
	p.Enqueue(memcapture.TriggerEvent{Kind: e.Kind, Messages: e.Window(), SessionID: e.SessionID})
	if err := p.Flush(ctx); err != nil {
		ent.Err = err.Error()
		return ent
	}
	after := p.Stats()
	ent.Written = int(after.MemoriesWritten - before.MemoriesWritten)
	if reason := passFailure(before, after); reason != "" {
		// One pass runs at a time, and each failure it counts is recorded
		// as the pipeline's latest: this pass's, its message redacted.
		if f := after.LastFailure; f.Err != nil {
			reason += ": " + f.Err.Error()
		}
		ent.Err = reason
		e.Attempts++
		e.LastError = reason
		if err := sp.Update(it.Name, e); err != nil {
			log.Warn().Err(err).Msg("forgemem worker: cannot record the failure in the entry")
		}
		log.Warn().Str("reason", reason).Int("attempts", e.Attempts).Msg("forgemem worker: pass failed; the entry waits for the next worker")
		return ent
	}
	for _, c := range covered {
		if err := sp.Remove(c.Name); err != nil {
			log.Warn().Err(err).Msg("forgemem worker: cannot remove a covered entry")
		}
	}
	if err := sp.Remove(it.Name); err != nil {
		log.Warn().Err(err).Msg("forgemem worker: cannot remove the entry")
	}
	log.Info().Str("kind", string(e.Kind)).Int("written", ent.Written).Int("covered", len(covered)).Msg("forgemem worker: pass done")
	return ent
}

// passFailure says why the pass between two snapshots of the pipeline's
// counters failed, or "" when it finished without failing.
func passFailure(before, after memcapture.Stats) string {
	switch {
	case after.LLMErrors > before.LLMErrors:
		return "the classifier call failed"
	case after.ParseFailures > before.ParseFailures:
		return "the classifier's reply was unreadable twice"
	case after.StoreErrors > before.StoreErrors:
		return "the memory folders could not be read or written"
	case after.Panics > before.Panics:
		return "the pass panicked"
	}
	return ""
}

// captureConfig is the settings' capture configuration with what every
// capture pipeline of the workspace adds: the classifier model, the
// embedder that ranks the existing memories for it, the logger, the clock,
// and the memories it must not be shown (see held.go).
func (w *Workspace) captureConfig(model string, emb memcore.Embedder) memcapture.Config {
	c := w.settings.CaptureConfig()
	c.ClassifierModel, c.Embedder = model, emb
	c.Logger, c.Clock = w.opts.Logger, w.opts.Now // a nil clock: time.Now
	c.HoldCheck = repoHold{w}
	return c
}

// newPipeline makes a capture pipeline with the settings' classifier,
// started on ctx.
func (w *Workspace) newPipeline(ctx context.Context) (*memcapture.Pipeline, error) {
	models, err := w.Models()
	if err != nil {
		return nil, err
	}
	llm, model, err := models.NeedClassifier()
	if err != nil {
		return nil, err
	}
	p, err := memcapture.NewPipeline(llm, w.captureStore(), w.captureConfig(model, models.Embedder))
	if err != nil {
		return nil, fmt.Errorf("making the capture pipeline: %w", err)
	}
	if err := p.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting the capture pipeline: %w", err)
	}
	return p, nil
}

// PendingCaptures describes the captures waiting in this place's queue.
type PendingCaptures struct {
	// Count is the number of entries waiting.
	Count int
	// Reason says why they wait, "" when none does.
	Reason string
	// WorkerPID is the process id of the worker running them, 0 when none
	// runs.
	WorkerPID int
	// Dropped says how many captures a full queue dropped, and when the
	// last one was.
	Dropped spool.Dropped
	// SetAside counts the entries a worker could not read and set aside
	// as <name>.bad (at most 20 are kept), which no worker runs: not
	// queued by this user's hooks (a repository committed them), or not
	// entries at all.
	SetAside int
}

// Pending counts the queued captures and says why they wait: memory is
// off here, no classifier is configured, a worker is running them, a pass
// failed, or no worker is running; and how many a full queue dropped.
func (w *Workspace) Pending() (PendingCaptures, error) {
	var pc PendingCaptures
	dir := w.SpoolDir()
	if dir == "" {
		return pc, nil
	}
	// Without the user's key (no home folder, or none made yet), no entry
	// reads as the user's: the count stands, and no pass's failure is
	// quoted.
	key, _ := w.existingKey()
	sp, err := spool.OpenExisting(dir, key)
	if err != nil || sp == nil {
		return pc, err
	}
	items, err := sp.List()
	if err != nil {
		return pc, err
	}
	pc.Count = len(items)
	if pc.Dropped, err = sp.Dropped(); err != nil {
		return pc, err
	}
	if pc.SetAside, err = sp.SetAsideCount(); err != nil {
		return pc, err
	}
	pid, held, err := sp.Holder()
	if err != nil {
		return pc, err
	}
	if held {
		pc.WorkerPID = pid
	}
	if pc.Count > 0 {
		pc.Reason = w.pendingReason(sp, items, pid, held)
	}
	return pc, nil
}

// pendingReason says why the entries items of sp wait.
func (w *Workspace) pendingReason(sp *spool.Spool, items []spool.Item, pid int, held bool) string {
	if err := w.CaptureReady(); err != nil {
		return err.Error()
	}
	if held {
		return fmt.Sprintf("a capture worker (process %d) is running them", pid)
	}
	for _, it := range items {
		if e, err := sp.Read(it.Name); err == nil && e.LastError != "" {
			return fmt.Sprintf("a pass failed %s (%s); the next agent turn starts a worker that retries, or run forgemem worker",
				times(e.Attempts), e.LastError)
		}
	}
	return "no capture worker is running; the next agent turn starts one, or run forgemem worker"
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}
