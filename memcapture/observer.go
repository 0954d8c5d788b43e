package memcapture

import (
	"sync/atomic"

	"github.com/forgemem/forgemem/memcore"
)

// Observer connects an agent loop to a [Pipeline]: the loop calls
// OnTurnComplete after each completed turn and OnCompaction when its context
// compaction summarises a goal arc. Both return at once, whatever the
// pipeline is doing: they copy the message slice (one allocation; the
// strings are shared, as Go strings are immutable) and hand it over under a
// short lock. An Observer is safe for concurrent use.
type Observer struct {
	pipeline *Pipeline
	cadence  uint64
	turns    atomic.Uint64
}

// NewObserver returns an Observer feeding p, at the cadence of p's
// [Config]. A nil p is a *memcore.ConfigError (matching
// [ErrInvalidConfig]).
func NewObserver(p *Pipeline) (*Observer, error) {
	var bad memcore.FieldErrors
	if !bad.Check(p != nil, "NewObserver's pipeline", memcore.Description("nil"), "a *Pipeline") {
		return nil, bad.Err("memcapture", "")
	}
	return &Observer{pipeline: p, cadence: uint64(p.cfg.cadence)}, nil
}

// OnTurnComplete tells the observer that a turn has completed. messages is
// the whole conversation window (all messages since the last summarisation,
// oldest first; tool content may be left in, the pipeline strips it). Every
// Nth call (N is [Config].Cadence) enqueues a turn trigger; a newer turn trigger
// replaces one still waiting (the newest window contains the older one).
func (o *Observer) OnTurnComplete(messages []memcore.Message, sessionID string) {
	if o.turns.Add(1)%o.cadence != 0 {
		return
	}
	o.pipeline.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: messages, SessionID: sessionID})
}

// OnCompaction tells the observer that the agent's context compaction has
// summarised a goal arc; messages is the arc's window. It always enqueues a
// compaction trigger, whatever the turn count; compaction triggers are
// processed before turn triggers and are not coalesced.
func (o *Observer) OnCompaction(messages []memcore.Message, sessionID string) {
	o.pipeline.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: messages, SessionID: sessionID})
}
