package memcapture

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

// Pipeline turns conversation windows into memories on one background
// goroutine: for each trigger it strips tool content, caps the window,
// redacts its secrets, skips it if unchanged, lists the existing memories,
// asks the classifier model what is worth remembering, validates and
// redacts the answer, writes the memories and calls the rebuild callback. At most one classifier call
// is in flight at a time, so the store is written by one goroutine only.
//
// Triggers wait in two places: one slot for the latest turn trigger (a
// newer one replaces it) and a first-in-first-out queue of compaction
// triggers, which are taken first. Enqueue never blocks.
//
// A Pipeline is safe for concurrent use. Make it with [NewPipeline], run it
// with [Pipeline.Start], wait for what was enqueued with [Pipeline.Flush],
// stop it with [Pipeline.Close].
type Pipeline struct {
	classifier memcore.LLMProvider
	store      memcore.MemoryStore
	writer     *memcore.Writer
	cfg        config
	log        zerolog.Logger
	stats      counters

	wake chan struct{}
	done chan struct{}

	mu          sync.Mutex
	turn        queued
	hasTurn     bool
	compactions []queued
	// seq numbers the accepted triggers, 1 for the first; inFlight is the
	// lowest number the pass in flight covers (0: no pass in flight), and
	// droppedFrom the lowest number of a trigger dropped unprocessed when
	// the pipeline stopped (0: none). progress is closed, and replaced,
	// whenever a pass ends or waiting triggers are dropped: Flush waits on
	// it.
	seq         uint64
	inFlight    uint64
	droppedFrom uint64
	progress    chan struct{}
	started     bool
	closed      bool // Close was called: accept nothing more, drain and stop
	stopped     bool // the goroutine has ended
	cancel      context.CancelFunc

	// capWindow, when set (by tests measuring other ways to cap the
	// window), replaces capInSteps.
	capWindow func(msgs []memcore.Message, budget int) []memcore.Message

	// State of the pipeline goroutine only.
	lastWindow [sha256.Size]byte
	haveLast   bool
	vectors    map[vectorKey][]float32
	pins       []*pin // the existing-memories lists pinned (see lists)
	pinClock   uint64 // counts the passes that chose lists, to age pins
	pinSeed    maphash.Seed
}

// NewPipeline returns a Pipeline that asks classifier what to remember and
// writes to store, configured by cfg: the classifier's model, the
// observers' cadence, the rebuild callback, the embedder that ranks the
// existing memories, the logger, the budgets and limits (see [Config]; a
// zero field means its default).
//
// A nil classifier or store, or a field of cfg out of range, is a
// *memcore.ConfigError (matching [ErrInvalidConfig]) that names each of
// them, the value given and the values allowed.
func NewPipeline(classifier memcore.LLMProvider, store memcore.MemoryStore, cfg Config) (*Pipeline, error) {
	var bad memcore.FieldErrors
	bad.Check(classifier != nil, "NewPipeline's classifier", memcore.Description("nil"), "a memcore.LLMProvider")
	bad.Check(store != nil, "NewPipeline's store", memcore.Description("nil"), "a memcore.MemoryStore")
	cfg.check(&bad)
	if err := bad.Err("memcapture", ""); err != nil {
		return nil, err
	}
	c := cfg.resolve()
	writer, err := memcore.NewWriter(store, memcore.WriterConfig{Review: c.review, Logger: c.log})
	if err != nil {
		return nil, err
	}
	return &Pipeline{
		classifier: classifier,
		store:      store,
		writer:     writer,
		cfg:        c,
		log:        c.log,
		wake:       make(chan struct{}, 1),
		done:       make(chan struct{}),
		progress:   make(chan struct{}),
		vectors:    make(map[vectorKey][]float32),
		pinSeed:    maphash.MakeSeed(),
	}, nil
}

// Start launches the pipeline goroutine, which processes the triggers
// enqueued so far and every later one. Cancelling ctx stops it: the pass in
// flight is abandoned and waiting triggers are dropped; use [Pipeline.Close]
// to stop after draining. Starting twice is an error wrapping
// [ErrAlreadyStarted], starting after Close one wrapping [ErrClosed].
func (p *Pipeline) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed || p.stopped:
		return fmt.Errorf("memcapture: start: %w", ErrClosed)
	case p.started:
		return fmt.Errorf("memcapture: start: %w", ErrAlreadyStarted)
	}
	runCtx, cancel := context.WithCancel(ctx)
	p.started, p.cancel = true, cancel
	go p.run(runCtx)
	return nil
}

// Enqueue hands a trigger to the pipeline and returns at once; it never
// blocks and may be called before Start (the trigger waits for it). It
// copies event.Messages, so the caller may reuse the slice.
//
// A turn trigger ([memcore.TriggerCadence]) replaces a turn trigger still
// waiting (counted as coalesced); a compaction trigger
// ([memcore.TriggerCompaction]) joins the compaction queue, which is
// processed first and holds up to [Config].MaxPendingCompactions triggers. A
// trigger of any other kind, one beyond the queue bound, and any trigger
// after Close are dropped, counted and logged.
func (p *Pipeline) Enqueue(event TriggerEvent) {
	if !captured(event.Kind) {
		p.stats.dropped.Add(1)
		p.log.Warn().Str("kind", string(event.Kind)).Msg("memcapture: trigger of unknown kind dropped")
		return
	}
	if len(event.Messages) > 0 {
		msgs := make([]memcore.Message, len(event.Messages))
		copy(msgs, event.Messages)
		event.Messages = msgs
	}
	p.mu.Lock()
	if p.closed || p.stopped {
		p.mu.Unlock()
		p.stats.dropped.Add(1)
		p.log.Debug().Str("kind", string(event.Kind)).Msg("memcapture: trigger after close dropped")
		return
	}
	overflow := false
	if event.Kind == memcore.TriggerCadence {
		p.seq++
		first := p.seq
		if p.hasTurn {
			p.stats.coalesced.Add(1)
			first = p.turn.first // the newer window stands for the older one
		}
		p.turn, p.hasTurn = queued{event, first}, true
	} else if len(p.compactions) >= p.cfg.maxPendingCompactions {
		overflow = true
	} else {
		p.seq++
		p.compactions = append(p.compactions, queued{event, p.seq})
	}
	p.mu.Unlock()
	if overflow {
		p.stats.dropped.Add(1)
		p.log.Warn().Int("pending", p.cfg.maxPendingCompactions).Msg("memcapture: compaction queue full, trigger dropped")
		return
	}
	p.stats.triggers.Add(1)
	p.signal()
}

// Close stops accepting triggers, lets the goroutine process the waiting
// compaction triggers and the latest turn trigger, and waits for it to end.
// If ctx ends first, the pass in flight is cancelled, the triggers still
// waiting are dropped, and Close returns an error wrapping ctx.Err() without
// waiting further. Close before Start drops the waiting triggers. Calling
// Close again waits in the same way.
func (p *Pipeline) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	started := p.started
	var dropped int
	if !started {
		dropped = p.clearLocked()
	}
	p.mu.Unlock()
	if !started {
		p.stats.dropped.Add(uint64(dropped))
		return nil
	}
	p.signal()
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		p.cancel()
		return fmt.Errorf("memcapture: close: %w", ctx.Err())
	}
}

// signal wakes the pipeline goroutine, or leaves a wake-up waiting for it;
// it never blocks.
func (p *Pipeline) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Stats returns a snapshot of the pipeline's counters.
func (p *Pipeline) Stats() Stats { return p.stats.snapshot() }

// clearLocked drops every waiting trigger and returns how many there were.
func (p *Pipeline) clearLocked() int {
	n := len(p.compactions)
	if p.hasTurn {
		n++
	}
	if n > 0 {
		if low, ok := p.lowestLocked(); ok && (p.droppedFrom == 0 || low < p.droppedFrom) {
			p.droppedFrom = low
		}
	}
	p.compactions, p.turn, p.hasTurn = nil, queued{}, false
	p.progressLocked()
	return n
}

// queued is a trigger waiting in the pipeline: the event, and the number
// of the oldest accepted trigger it stands for (a turn trigger stands for
// the older ones it replaced).
type queued struct {
	ev    TriggerEvent
	first uint64
}

// lowestLocked returns the lowest trigger number still waiting or in
// flight; ok is false when there is none.
func (p *Pipeline) lowestLocked() (low uint64, ok bool) {
	consider := func(n uint64) {
		if n != 0 && (!ok || n < low) {
			low, ok = n, true
		}
	}
	consider(p.inFlight)
	if p.hasTurn {
		consider(p.turn.first)
	}
	for _, c := range p.compactions {
		consider(c.first)
	}
	return low, ok
}

// progressLocked wakes the callers of Flush.
func (p *Pipeline) progressLocked() {
	close(p.progress)
	p.progress = make(chan struct{})
}

// Flush waits until every trigger accepted before the call has been
// processed: its pass has finished, whatever the outcome (see [Stats]),
// or, for a turn trigger replaced by a newer one, the newer one's pass
// has. Triggers enqueued after Flush was called are not waited for,
// except a turn trigger that replaces one Flush waits for. It returns nil
// at once when nothing is waiting.
//
// Before Start, Flush waits for Start. If the pipeline stops with such a
// trigger dropped unprocessed (Close before Start, Close or the Start
// context ending first), Flush returns an error wrapping [ErrClosed]; if
// ctx ends first, an error wrapping ctx.Err(), and the triggers stay
// queued. A caller that processes one trigger at a time — Enqueue, then
// Flush — learns the outcome of its pass from the change in Stats.
func (p *Pipeline) Flush(ctx context.Context) error {
	p.mu.Lock()
	target := p.seq
	p.mu.Unlock()
	for {
		p.mu.Lock()
		low, waiting := p.lowestLocked()
		switch {
		case p.droppedFrom != 0 && p.droppedFrom <= target:
			p.mu.Unlock()
			return fmt.Errorf("memcapture: flush: triggers were dropped unprocessed: %w", ErrClosed)
		case !waiting || low > target:
			p.mu.Unlock()
			return nil
		}
		progress := p.progress
		p.mu.Unlock()
		if testHookFlushWaits != nil {
			testHookFlushWaits()
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return fmt.Errorf("memcapture: flush: %w", ctx.Err())
		}
	}
}

// take returns the next trigger, compaction triggers first, and marks it
// in flight. When there is none, it reports whether the pipeline is
// closing.
func (p *Pipeline) take() (ev TriggerEvent, ok, closing bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.compactions) > 0 {
		q := p.compactions[0]
		p.compactions[0] = queued{}
		p.compactions = p.compactions[1:]
		if len(p.compactions) == 0 {
			p.compactions = nil
		}
		p.inFlight = q.first
		return q.ev, true, false
	}
	if p.hasTurn {
		q := p.turn
		p.turn, p.hasTurn = queued{}, false
		p.inFlight = q.first
		return q.ev, true, false
	}
	return TriggerEvent{}, false, p.closed
}

// testHookFlushWaits, when set by a test, is called each time Flush
// starts waiting for progress.
var testHookFlushWaits func()

// passDone marks the pass in flight finished.
func (p *Pipeline) passDone() {
	p.mu.Lock()
	p.inFlight = 0
	p.progressLocked()
	p.mu.Unlock()
}

func (p *Pipeline) run(ctx context.Context) {
	defer close(p.done)
	defer func() {
		p.mu.Lock()
		p.stopped = true
		n := p.clearLocked()
		p.mu.Unlock()
		p.stats.dropped.Add(uint64(n))
		p.cancel()
	}()
	for ctx.Err() == nil {
		ev, ok, closing := p.take()
		if ok {
			p.process(ctx, ev)
			p.passDone()
			continue
		}
		if closing {
			return
		}
		select {
		case <-ctx.Done():
		case <-p.wake:
		}
	}
}

// process runs one capture pass. Whatever happens in it — errors of the
// providers or the store, even a panic — is logged and counted, never
// passed on.
func (p *Pipeline) process(ctx context.Context, ev TriggerEvent) {
	log := p.log.With().Str("trigger", string(ev.Kind)).Str("session", ev.SessionID).Logger()
	defer p.stats.passes.Add(1)
	defer p.recoverPanic(log, "memcapture: capture pass panicked (skipped)")

	window, redactions := p.window(ev.Messages)
	if len(window) == 0 {
		p.stats.skippedEmpty.Add(1)
		log.Debug().Msg("memcapture: window empty after stripping tool content (skipped)")
		return
	}
	sum := windowHash(window)
	if p.haveLast && sum == p.lastWindow {
		p.stats.skippedUnchanged.Add(1)
		log.Debug().Msg("memcapture: window unchanged since the last pass (skipped)")
		return
	}

	p.stats.requestRedactions.Add(uint64(redactions))

	passCtx, cancel := context.WithTimeout(ctx, p.cfg.passTimeout)
	defer cancel()
	existing, err := p.store.List(passCtx)
	if err != nil {
		p.stats.storeErrors.Add(1)
		p.fail(FailureStore, err)
		log.Warn().Err(redactErr(err)).Msg("memcapture: cannot list existing memories (pass skipped)")
		return
	}
	// Retired (forgotten) chains are not offered to the classifier, nor
	// linked to, superseded or counted as duplicates. Versions that wait
	// for review are not offered to it either, as the settled facts they
	// are not; they still count as duplicates (the classifier keeps
	// finding a poisoned text: it is not queued again) and are superseded
	// rather than forked. Nor are those Config.HoldCheck holds.
	all := memcore.NewGraph(existing)
	g := memcore.NewGraph(all.Live())
	heads := p.unheld(memcore.NewGraph(all.Settled()).Heads())
	pinned, since := p.lists(passCtx, ev.SessionID, window, existing, heads, log)
	req := p.request(pinned, window, since)

	elems, err := p.classify(passCtx, req, log)
	switch {
	case errors.Is(err, errUnparseable):
		p.stats.parseFailures.Add(1)
		p.fail(FailureUnreadableReply, err)
		log.Warn().Err(redactErr(err)).Msg("memcapture: classifier reply unreadable twice (pass skipped)")
		return
	case err != nil:
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			// The pass's own deadline, not its caller's: say so, rather than
			// only Go's "context deadline exceeded".
			err = fmt.Errorf("no answer within the pass's time limit (%v): %w", p.cfg.passTimeout, err)
		}
		p.stats.llmErrors.Add(1)
		p.fail(FailureClassifier, err)
		log.Warn().Err(redactErr(err)).Bool("transient", memcore.IsTransient(err)).Msg("memcapture: classifier call failed (pass skipped)")
		return
	}
	p.lastWindow, p.haveLast = sum, true

	memories := p.build(elems, g, window, ev, log)
	if len(memories) == 0 {
		log.Debug().Int("items", len(elems)).Msg("memcapture: nothing to remember")
		return
	}
	writeCtx, cancelWrite := context.WithTimeout(ctx, p.cfg.passTimeout)
	defer cancelWrite()
	if p.write(writeCtx, memories, log) > 0 {
		p.rebuild(log)
	}
}

// write stores the memories in order, through the pipeline's
// memcore.Writer, and returns how many were written. A memory whose
// predecessor (made in the same pass) was not written is re-pointed to
// what that predecessor would have superseded, so no chain dangles. A
// memory that another writer's version, written first, already says is
// a duplicate, not written.
func (p *Pipeline) write(ctx context.Context, memories []*memcore.MemoryFile, log zerolog.Logger) int {
	failed := make(map[string]*memcore.MemoryFile)
	written := 0
	for _, m := range memories {
		for m.Meta.Supersedes != nil {
			f, ok := failed[*m.Meta.Supersedes]
			if !ok {
				break
			}
			m.Meta.Supersedes, m.Meta.Version = f.Meta.Supersedes, f.Meta.Version
		}
		res, err := p.writer.Write(ctx, m)
		p.stats.conflicts.Add(uint64(len(res.Raced)))
		switch {
		case err != nil:
			failed[m.Meta.ID] = m
			p.stats.storeErrors.Add(1)
			p.fail(FailureStore, err)
			log.Warn().Err(redactErr(err)).Str("id", m.Meta.ID).Msg("memcapture: memory write failed")
		case res.Duplicate != nil:
			failed[m.Meta.ID] = m
			p.stats.duplicates.Add(1)
			log.Debug().Str("id", m.Meta.ID).Str("head", res.Duplicate.Meta.ID).Msg("memcapture: memory repeats the version another writer wrote first (skipped)")
		default:
			written++
			p.stats.written.Add(1)
			if res.Held != "" {
				p.stats.held.Add(1)
				log.Info().Str("id", m.Meta.ID).Str("reason", res.Held).Msg("memcapture: memory held for review")
			}
			log.Info().Str("id", m.Meta.ID).Str("scope", string(m.Meta.Scope)).Str("category", string(m.Meta.Category)).
				Int("version", m.Meta.Version).Msg("memcapture: memory written")
		}
	}
	return written
}

// rebuild calls the rebuild callback; a panic in it is logged, not passed on.
func (p *Pipeline) rebuild(log zerolog.Logger) {
	if p.cfg.rebuild == nil {
		return
	}
	p.stats.rebuilds.Add(1)
	defer p.recoverPanic(log, "memcapture: rebuild callback panicked")
	p.cfg.rebuild()
}

// recoverPanic, deferred, stops a panic of the provider, the store or the
// rebuild callback on the pipeline goroutine: it is counted and logged, with
// its stack, as msg.
func (p *Pipeline) recoverPanic(log zerolog.Logger, msg string) {
	if r := recover(); r != nil {
		p.stats.panics.Add(1)
		p.fail(FailurePanic, fmt.Errorf("panic: %v", r))
		log.Error().Str("panic", redactStr(fmt.Sprint(r))).Str("stack", string(debug.Stack())).Msg(msg)
	}
}

// window is what the classifier (and the embedder ranking the existing
// memories) sees of a trigger's messages: tool content stripped, capped to
// the window budget in steps that keep the window's beginning stable from
// one pass to the next (capInSteps), and secrets redacted
// (memcore.RedactWindow), which keeps that beginning stable too. It
// returns the number of secrets replaced.
func (p *Pipeline) window(msgs []memcore.Message) ([]memcore.Message, int) {
	fit := func(m []memcore.Message) []memcore.Message { return capInSteps(m, p.cfg.windowTokens) }
	if p.capWindow != nil {
		fit = func(m []memcore.Message) []memcore.Message { return p.capWindow(m, p.cfg.windowTokens) }
	}
	return memcore.RedactWindow(memcore.StripToolContent(msgs), fit)
}

// windowHash identifies a window's content.
func windowHash(msgs []memcore.Message) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for _, m := range msgs {
		for _, s := range [2]string{string(m.Role), m.Content} {
			binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
			h.Write(n[:])
			h.Write([]byte(s))
		}
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// now is the clock's time as stored: UTC, whole seconds.
func (p *Pipeline) now() time.Time { return p.cfg.clock().UTC().Truncate(time.Second) }

// unheld returns heads without those Config.HoldCheck holds.
func (p *Pipeline) unheld(heads []*memcore.MemoryFile) []*memcore.MemoryFile {
	if p.cfg.holdCheck == nil {
		return heads
	}
	return slices.DeleteFunc(heads, func(h *memcore.MemoryFile) bool { return p.cfg.holdCheck.Hold(h) != "" })
}
