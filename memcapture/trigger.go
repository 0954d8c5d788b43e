package memcapture

import "github.com/forgemem/forgemem/memcore"

// TriggerEvent asks the pipeline for one capture pass over a conversation
// window.
type TriggerEvent struct {
	// Kind is what caused the pass, and what the memories the pass writes
	// record as their trigger: [memcore.TriggerCadence] for a turn at the
	// observer's cadence (see [Config].Cadence), [memcore.TriggerCompaction]
	// for a context compaction that summarised a goal arc. The pipeline
	// drops an event of any other kind, counting it in Stats.Dropped.
	Kind memcore.Trigger
	// Messages is the whole conversation window: the messages since the
	// last summarisation (or the whole session if there was none), oldest
	// first. Tool messages and tool blocks may be left in: the pipeline
	// strips them (see [memcore.StripToolContent]) before anything reaches
	// the classifier.
	Messages []memcore.Message
	// SessionID identifies the agent session; it is stored with every memory
	// the pass writes.
	SessionID string
}

// captured reports whether the pipeline runs passes for triggers of kind k.
func captured(k memcore.Trigger) bool {
	return k == memcore.TriggerCadence || k == memcore.TriggerCompaction
}
