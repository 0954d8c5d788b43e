package memcapture

import "github.com/forgemem/forgemem/memcore"

// TriggerKind identifies what caused a capture pass.
type TriggerKind string

// The trigger kinds.
const (
	// TriggerKindTurn follows a completed user turn (every Nth turn, see
	// [WithCadence]). A memory it produces is stored with
	// [memcore.TriggerCadence].
	TriggerKindTurn TriggerKind = "turn"
	// TriggerKindCompaction follows a context compaction that summarised a
	// goal arc. A memory it produces is stored with
	// [memcore.TriggerCompaction].
	TriggerKindCompaction TriggerKind = "compaction"
)

// Valid reports whether k is one of the trigger kinds.
func (k TriggerKind) Valid() bool { return k == TriggerKindTurn || k == TriggerKindCompaction }

// stored is the memcore.Trigger a memory written for k records.
func (k TriggerKind) stored() memcore.Trigger {
	if k == TriggerKindCompaction {
		return memcore.TriggerCompaction
	}
	return memcore.TriggerCadence
}

// ConversationMessage is one message of a conversation window. It is the
// message type of memcore, so a host passes the same slice it sends to its
// model.
type ConversationMessage = memcore.Message

// TriggerEvent asks the pipeline for one capture pass over a conversation
// window.
type TriggerEvent struct {
	// Kind is what caused the pass.
	Kind TriggerKind
	// Messages is the whole conversation window: the messages since the
	// last summarisation (or the whole session if there was none), oldest
	// first. Tool messages and tool blocks may be left in: the pipeline
	// strips them (see [StripToolContent]) before anything reaches the
	// classifier.
	Messages []ConversationMessage
	// SessionID identifies the agent session; it is stored with every memory
	// the pass writes.
	SessionID string
}

// StripToolContent returns the window as the classifier sees it: only user
// and assistant messages, with tool-call and tool-result blocks removed and
// messages left empty dropped. It is [memcore.StripToolContent]; the input
// is not modified.
func StripToolContent(msgs []ConversationMessage) []ConversationMessage {
	return memcore.StripToolContent(msgs)
}
