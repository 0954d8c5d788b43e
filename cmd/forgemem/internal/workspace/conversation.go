package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/jsonlines"
	"github.com/forgemem/forgemem/memcore"
)

// ReadConversation reads a conversation in JSON Lines: one message per
// line, {"role": "user", "content": "…"}, oldest first, with an optional
// "at": when the message was written (RFC 3339), which capture records as
// the time of a memory's evidence. Roles are user, assistant, system and
// tool (system and tool messages are kept; capture and retrieval drop
// them). A byte order mark at the start is skipped, as are blank lines;
// other fields are ignored. A line that is not such an object is an error
// wrapping [ErrBadConversation] that names the line, what is wrong and
// what is expected, in the terms of the file rather than of Go; a file
// whose first line is one of a Claude Code transcript is an error wrapping
// [ErrClaudeCodeTranscript] too, and one that is not exactly one JSON
// value, jsonlines.ErrNotOneValue.
//
// What is read is bounded, as capture and recall use only a conversation's
// newest part: a line longer than [MaxMessageBytes] is an error wrapping
// [ErrBadConversation] (and jsonlines.ErrLineTooLong), and of a
// conversation longer than [MaxConversationBytes] only the newest messages
// that fit are kept.
func ReadConversation(r io.Reader) ([]memcore.Message, error) {
	return readConversation(r, MaxMessageBytes, MaxConversationBytes)
}

// readConversation is ReadConversation with lines of at most maxLine bytes
// and the newest messages whose contents fit in maxKept bytes kept.
func readConversation(r io.Reader, maxLine, maxKept int) ([]memcore.Message, error) {
	lines := jsonlines.NewLimitedReader(r, maxLine)
	var msgs []memcore.Message
	kept := 0 // the bytes of the messages' contents
	for {
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			return msgs, nil
		}
		if errors.Is(err, jsonlines.ErrLineTooLong) {
			return nil, fmt.Errorf("%w: %w; %s", ErrBadConversation, err, wantMessage)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the conversation: %w", err)
		}
		m, perr := parseMessage(line)
		if perr != nil && len(msgs) == 0 && isTranscriptLine(line.Text) {
			return nil, transcriptError{}
		}
		if perr != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrBadConversation, line.N, perr)
		}
		msgs = append(msgs, m)
		kept += len(m.Content)
		for kept > maxKept && len(msgs) > 1 {
			kept -= len(msgs[0].Content)
			msgs[0] = memcore.Message{}
			msgs = msgs[1:]
		}
	}
}

// MaxMessageBytes bounds one line of a conversation [ReadConversation]
// reads: a message longer than that is no conversation's.
const MaxMessageBytes = 16 << 20

// MaxConversationBytes bounds the messages [ReadConversation] keeps: the
// newest whose contents fit in this many bytes (the newest one whatever
// its size).
const MaxConversationBytes = 64 << 20

// wantMessage is what a line of a conversation should be.
const wantMessage = `want one {"role": "user", "content": "…"} object per line`

// roles lists the roles a message may have, for errors.
const roles = "user, assistant, system or tool"

// exampleTime is an RFC 3339 time, for errors.
const exampleTime = "2026-11-26T10:00:00Z"

// parseMessage reads one line of a conversation. Its errors say what is
// wrong and what is expected, without the line number.
func parseMessage(l jsonlines.Line) (memcore.Message, error) {
	line, err := l.Value()
	if err != nil {
		return memcore.Message{}, fmt.Errorf("%w; %s", err, wantMessage)
	}
	if kind := jsonlines.Kind(line); kind != "an object" {
		return memcore.Message{}, fmt.Errorf("want a JSON object with role and content, got %s", kind)
	}
	// The fields as they are, to say what is wrong with one in the file's
	// terms; their names match as encoding/json matches a struct's, in any
	// case ("Role").
	var wire struct {
		Role    json.RawMessage `json:"role"`
		Content json.RawMessage `json:"content"`
		At      json.RawMessage `json:"at"`
	}
	if err := json.Unmarshal(line, &wire); err != nil {
		return memcore.Message{}, fmt.Errorf("not valid JSON: %v; %s", err, wantMessage) // Value found none
	}
	var role, content string
	switch {
	case jsonlines.Absent(wire.Role):
		return memcore.Message{}, fmt.Errorf(`no "role"; %s`, wantMessage)
	case json.Unmarshal(wire.Role, &role) != nil:
		return memcore.Message{}, fmt.Errorf("role: want a string (%s), got %s", roles, jsonlines.Kind(wire.Role))
	case jsonlines.Absent(wire.Content):
		return memcore.Message{}, fmt.Errorf(`no "content"; %s`, wantMessage)
	case json.Unmarshal(wire.Content, &content) != nil:
		return memcore.Message{}, fmt.Errorf("content: want a string, got %s", jsonlines.Kind(wire.Content))
	}
	switch memcore.Role(role) {
	case memcore.RoleUser, memcore.RoleAssistant, memcore.RoleSystem, memcore.RoleTool:
	default:
		return memcore.Message{}, fmt.Errorf("role %q is not one of %s", jsonlines.Clip(role), roles)
	}
	m := memcore.Message{Role: memcore.Role(role), Content: content}
	if !jsonlines.Absent(wire.At) {
		var at string
		if json.Unmarshal(wire.At, &at) != nil {
			return memcore.Message{}, fmt.Errorf("at: want an RFC 3339 time such as %s, got %s", exampleTime, jsonlines.Kind(wire.At))
		}
		var t time.Time // read as encoding/json reads a time, strictly
		if json.Unmarshal(wire.At, &t) != nil {
			return memcore.Message{}, fmt.Errorf("at: want an RFC 3339 time such as %s, got %q", exampleTime, jsonlines.Clip(at))
		}
		m.At = t.UTC()
	}
	return m, nil
}

// transcriptError is the error of a conversation that is a Claude Code
// transcript: it wraps [ErrClaudeCodeTranscript] and, as the error of
// every conversation that cannot be read, [ErrBadConversation].
type transcriptError struct{}

func (transcriptError) Error() string {
	return `a Claude Code transcript, not one {"role", "content"} object per line`
}

func (transcriptError) Unwrap() []error { return []error{ErrClaudeCodeTranscript, ErrBadConversation} }

// isTranscriptLine reports whether line is a line of a Claude Code
// transcript: an object with a "type" and no "role", with one of the
// fields such a line has ("sessionId", "uuid", "leafUuid", "messageId",
// "message").
func isTranscriptLine(line []byte) bool {
	var l struct {
		Role      json.RawMessage `json:"role"`
		Type      string          `json:"type"`
		SessionID json.RawMessage `json:"sessionId"`
		UUID      json.RawMessage `json:"uuid"`
		LeafUUID  json.RawMessage `json:"leafUuid"`
		MessageID json.RawMessage `json:"messageId"`
		Message   json.RawMessage `json:"message"`
	}
	if json.Unmarshal(line, &l) != nil || !jsonlines.Absent(l.Role) || l.Type == "" {
		return false
	}
	for _, f := range []json.RawMessage{l.SessionID, l.UUID, l.LeafUUID, l.MessageID, l.Message} {
		if !jsonlines.Absent(f) {
			return true
		}
	}
	return false
}
