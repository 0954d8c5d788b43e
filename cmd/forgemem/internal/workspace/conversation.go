package workspace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

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
// what is expected, in the terms of the file rather than of Go.
func ReadConversation(r io.Reader) ([]memcore.Message, error) {
	br := bufio.NewReader(r)
	var msgs []memcore.Message
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("reading the conversation: %w", err)
		}
		if n == 1 {
			// A byte order mark, which some editors write at the start of
			// a UTF-8 file, is not part of the first message.
			line = bytes.TrimPrefix(line, []byte(byteOrderMark))
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			// The column of the line's first character that is not space,
			// less one: where the columns an error names count from.
			indent := utf8.RuneCount(line[:len(line)-len(bytes.TrimLeftFunc(line, unicode.IsSpace))])
			m, perr := parseMessage(trimmed, indent)
			if perr != nil {
				return nil, fmt.Errorf("%w: line %d: %v", ErrBadConversation, n, perr)
			}
			msgs = append(msgs, m)
		}
		if errors.Is(err, io.EOF) {
			return msgs, nil
		}
	}
}

// byteOrderMark is U+FEFF in UTF-8.
const byteOrderMark = "\ufeff"

// wantMessage is what a line of a conversation should be.
const wantMessage = `want one {"role": "user", "content": "…"} object per line`

// roles lists the roles a message may have, for errors.
const roles = "user, assistant, system or tool"

// exampleTime is an RFC 3339 time, for errors.
const exampleTime = "2026-11-26T10:00:00Z"

// parseMessage reads one line of a conversation, not blank, indent
// characters into the line the file holds. Its errors say what is wrong and
// what is expected, without the line number.
func parseMessage(line []byte, indent int) (memcore.Message, error) {
	if err := checkJSON(line, indent); err != nil {
		return memcore.Message{}, err
	}
	if kind := jsonKind(line); kind != "an object" {
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
		return memcore.Message{}, fmt.Errorf("not valid JSON: %v; %s", err, wantMessage) // checkJSON found none
	}
	var role, content string
	switch {
	case absent(wire.Role):
		return memcore.Message{}, fmt.Errorf(`no "role"; %s`, wantMessage)
	case json.Unmarshal(wire.Role, &role) != nil:
		return memcore.Message{}, fmt.Errorf("role: want a string (%s), got %s", roles, jsonKind(wire.Role))
	case absent(wire.Content):
		return memcore.Message{}, fmt.Errorf(`no "content"; %s`, wantMessage)
	case json.Unmarshal(wire.Content, &content) != nil:
		return memcore.Message{}, fmt.Errorf("content: want a string, got %s", jsonKind(wire.Content))
	}
	switch memcore.Role(role) {
	case memcore.RoleUser, memcore.RoleAssistant, memcore.RoleSystem, memcore.RoleTool:
	default:
		return memcore.Message{}, fmt.Errorf("role %q is not one of %s", clipValue(role), roles)
	}
	m := memcore.Message{Role: memcore.Role(role), Content: content}
	if !absent(wire.At) {
		var at string
		if json.Unmarshal(wire.At, &at) != nil {
			return memcore.Message{}, fmt.Errorf("at: want an RFC 3339 time such as %s, got %s", exampleTime, jsonKind(wire.At))
		}
		var t time.Time // read as encoding/json reads a time, strictly
		if json.Unmarshal(wire.At, &t) != nil {
			return memcore.Message{}, fmt.Errorf("at: want an RFC 3339 time such as %s, got %q", exampleTime, clipValue(at))
		}
		m.At = t.UTC()
	}
	return m, nil
}

// checkJSON reports a line that is not one JSON value, saying where.
func checkJSON(line []byte, indent int) error {
	if json.Valid(line) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	var v json.RawMessage
	err := dec.Decode(&v)
	var syn *json.SyntaxError
	switch {
	case err == nil:
		return fmt.Errorf("more than one JSON value on the line; %s", wantMessage)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("not valid JSON: the line ends inside a value; %s", wantMessage)
	case errors.As(err, &syn) && syn.Offset > 0 && syn.Offset <= int64(len(line)):
		at := line[syn.Offset-1:]
		r, _ := utf8.DecodeRune(at)
		col := indent + utf8.RuneCount(line[:syn.Offset-1]) + 1
		return fmt.Errorf("not valid JSON: unexpected %s at column %d; %s", strconv.Quote(string(r)), col, wantMessage)
	}
	return fmt.Errorf("not valid JSON: %v; %s", err, wantMessage)
}

// jsonKind names the kind of a valid JSON value as a person would: "an
// object", "an array", "a string", "a number", "true", "false" or "null".
func jsonKind(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	}
	return "a number"
}

// absent reports whether a field is missing or null.
func absent(v json.RawMessage) bool {
	return len(v) == 0 || string(v) == "null"
}

// maxValueShown bounds a value an error quotes, in runes.
const maxValueShown = 64

// clipValue is s cut to maxValueShown runes, followed by "…" when it was
// cut.
func clipValue(s string) string { return clip(s, maxValueShown+1) }
