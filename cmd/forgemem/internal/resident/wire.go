package resident

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Version is the wire format's version: a server answers only requests of
// its own version (a binary of another version has another key anyway).
const Version = 1

// Revision numbers the changes of the wire format that keep its Version,
// so that a peer of an older binary still speaks it. A server records its
// revision in its place ([Place.Revision]), for a client to know what a
// request means to it before it asks:
//
//   - 0 (a record that names none, or no record): every request counts as
//     use of the server, a ping too.
//   - 1: a ping (OpPing) does not count as use: it leaves the server's idle
//     time running.
const Revision = 1

// MaxFrame bounds a frame: a request carries the conversation since the
// last compaction, a response the injection block.
const MaxFrame = 64 << 20

// ErrFrame: bytes that are not a frame of this format (too large, cut
// short, not the JSON of a request or response).
var ErrFrame = errors.New("resident: not a frame of the recall server's format")

// The operations of a Request.
const (
	// OpRecall asks for the memories of a conversation.
	OpRecall = "recall"
	// OpPing asks whether the server answers, and how it is. It does not
	// count as use: the server's idle time runs on, so that a server that
	// is only looked at (forgemem recall-server --status) still leaves. A
	// server of Revision 0 counts it as use: see [Place.PingKeepsAlive].
	OpPing = "ping"
	// OpStop asks the server to leave once it has answered.
	OpStop = "stop"
)

// Request is what a hook asks.
type Request struct {
	Version int    `json:"v"`
	Op      string `json:"op"`
	// Key is the key the hook computed (see Key); a server answers only
	// its own.
	Key string `json:"key"`
	// Window is the conversation (OpRecall).
	Window []Message `json:"window,omitempty"`
	// BudgetMillis is how long the hook waits for the answer; the server
	// gives up when it is over.
	BudgetMillis int64 `json:"budget_ms,omitempty"`
}

// Message is one message of a Request's window.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// The statuses of a Response.
const (
	// StatusOK: the recall ran; Injection may be empty (nothing relevant).
	StatusOK = "ok"
	// StatusPartial: memories were found, but a provider call failed
	// (Message says which); Injection holds what was found.
	StatusPartial = "partial"
	// StatusDisabled: memory.enabled is false here.
	StatusDisabled = "disabled"
	// StatusFailed: the recall failed; Message says why.
	StatusFailed = "failed"
	// StatusRefused: the server does not answer this request (another
	// key or version, an unknown operation): the hook recalls itself.
	StatusRefused = "refused"
)

// Response is the server's answer.
type Response struct {
	Version int    `json:"v"`
	Status  string `json:"status"`
	// Message is the error's text, for a status other than ok.
	Message string `json:"message,omitempty"`
	// Injection is the block to add to the prompt's context.
	Injection string `json:"injection,omitempty"`
	// Memories are the recalled memories, most relevant first.
	Memories []Recalled `json:"memories,omitempty"`
	// Omitted counts the memories left out to fit the budget.
	Omitted int `json:"omitted,omitempty"`
	// Held counts the memories left out because they wait for the user's
	// approval (memretrieve's Result.HeldDropped).
	Held int `json:"held,omitempty"`
	// Skipped and VectorSkipped are the turn's reasons (memretrieve's
	// SkipReason names), "" when none.
	Skipped       string `json:"skipped,omitempty"`
	VectorSkipped string `json:"vector_skipped,omitempty"`
	// Unreadable is about the memory files the recall could not read
	// (OpRecall), nil when every file read: the hook tells the user.
	Unreadable *Unreadable `json:"unreadable,omitempty"`
	// PID is the server's process id (OpPing, OpStop).
	PID int `json:"pid,omitempty"`
	// Answered counts the recalls the server answered since it started
	// (OpPing).
	Answered uint64 `json:"answered,omitempty"`
}

// Unreadable is what a Response says of the memory files its recall could
// not read — a merge conflict, a file too large, one that is not a valid
// memory file — without their content.
type Unreadable struct {
	// Count counts them.
	Count int `json:"count"`
	// Path is the first of them by path, and Kind what is wrong with it
	// (a kind of forgemem validate's problems, such as "merge-conflict").
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Digest names the set of their paths and of what is wrong with each:
	// it changes when either does.
	Digest string `json:"digest"`
}

// Recalled is one memory of a Response.
type Recalled struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
}

// WriteFrame writes v as one frame.
func WriteFrame(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(data) > MaxFrame {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrFrame, len(data), MaxFrame)
	}
	buf := make([]byte, 4+len(data))
	binary.BigEndian.PutUint32(buf, uint32(len(data)))
	copy(buf[4:], data)
	_, err = w.Write(buf)
	return err
}

// ReadFrame reads one frame into v; a frame over MaxFrame is refused
// without reading it.
func ReadFrame(r io.Reader, v any) error {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return fmt.Errorf("%w: %w", ErrFrame, err)
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > MaxFrame {
		return fmt.Errorf("%w: a frame of %d bytes, more than %d", ErrFrame, n, MaxFrame)
	}
	// Read as the bytes come, rather than allocated from the length.
	data, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrFrame, err)
	}
	if len(data) != int(n) {
		return fmt.Errorf("%w: %d bytes of a frame of %d", ErrFrame, len(data), n)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %w", ErrFrame, err)
	}
	return nil
}
