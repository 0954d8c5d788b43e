package workspace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// ReadConversation reads a conversation in JSON Lines: one message per
// line, {"role": "user", "content": "…"}, oldest first, with an optional
// "at": when the message was written (RFC 3339), which capture records as
// the time of a memory's evidence. Roles are user, assistant, system and
// tool (system and tool messages are kept; capture and retrieval drop
// them). Blank lines are skipped and other fields are ignored. A line that is not such an object is an error naming the line
// and wrapping [ErrBadConversation].
func ReadConversation(r io.Reader) ([]memcore.Message, error) {
	br := bufio.NewReader(r)
	var msgs []memcore.Message
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("reading the conversation: %w", err)
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			m, perr := parseMessage(trimmed)
			if perr != nil {
				return nil, fmt.Errorf("%w: line %d: %v; want one {\"role\": \"user\", \"content\": \"…\"} object per line", ErrBadConversation, n, perr)
			}
			msgs = append(msgs, m)
		}
		if errors.Is(err, io.EOF) {
			return msgs, nil
		}
	}
}

func parseMessage(line []byte) (memcore.Message, error) {
	var wire struct {
		Role    *string    `json:"role"`
		Content *string    `json:"content"`
		At      *time.Time `json:"at"`
	}
	if err := json.Unmarshal(line, &wire); err != nil {
		return memcore.Message{}, err
	}
	if wire.Role == nil {
		return memcore.Message{}, errors.New(`no "role"`)
	}
	if wire.Content == nil {
		return memcore.Message{}, errors.New(`no "content"`)
	}
	role := memcore.Role(*wire.Role)
	switch role {
	case memcore.RoleUser, memcore.RoleAssistant, memcore.RoleSystem, memcore.RoleTool:
	default:
		return memcore.Message{}, fmt.Errorf("role %q is not one of user, assistant, system, tool", *wire.Role)
	}
	m := memcore.Message{Role: role, Content: *wire.Content}
	if wire.At != nil {
		m.At = wire.At.UTC()
	}
	return m, nil
}
