package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxDetailBytes caps the part of a failure message that comes from the
// failure itself, which may quote an argument (a schema's complaint
// quotes the value it refused, whatever its size).
const maxDetailBytes = 1000

// toolInfo is what the failures of a tool need to know of it.
type toolInfo struct {
	name   string
	schema *jsonschema.Schema
}

// toolError is a failure as the model reads it; the SDK's typed handler
// makes it a tool result with IsError.
type toolError string

func (e toolError) Error() string { return string(e) }

// errorResult is the tool result of err.
func (t *toolInfo) errorResult(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: t.failure(err)}}}
}

// failure is the message of err, for the model: what went wrong and what
// to do, cut to a bounded size and redacted (a provider's error may quote
// the API key).
func (t *toolInfo) failure(err error) string {
	var amb *workspace.AmbiguousError
	detail := clipMiddle(err.Error(), maxDetailBytes)
	var msg string
	switch {
	case errors.Is(err, errArguments):
		msg = fmt.Sprintf("%s: %s. It takes %s.", t.name, detail, t.usage())
	case errors.Is(err, errBusy):
		msg = fmt.Sprintf("%s: %s: %d tool calls are running and %d waiting. Call it again once your other calls have returned.",
			t.name, detail, maxRunning, maxWaiting)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("%s: the call was cancelled before it finished: %s", t.name, detail)
	case errors.As(err, &amb), errors.Is(err, workspace.ErrInvalidInput), errors.Is(err, workspace.ErrDuplicate):
		msg = fmt.Sprintf("%s: %s", t.name, detail)
	case errors.Is(err, memcore.ErrNotFound):
		msg = fmt.Sprintf("%s: %s. memory_search and memory_list give the ids of the memories.", t.name, trimNotFoundHint(detail))
	default:
		msg = fmt.Sprintf("%s failed: %s", t.name, detail)
	}
	msg, _ = redact.Text(msg)
	return msg
}

// clipMiddle is s cut to about n bytes by dropping its middle, which is
// where a quoted argument sits in a schema's complaint: what was wrong and
// the bound it broke stay.
func clipMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head := clipBytes(s, n/2)
	tail := s[len(s)-n/2:]
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return head + " … " + tail
}

// trimNotFoundHint drops the command-line advice of a not-found error,
// which names commands a model cannot run.
func trimNotFoundHint(msg string) string {
	if i := strings.Index(msg, "; forgemem list"); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// usage describes the tool's arguments from its schema: each name, its
// type or values, and whether it is required.
func (t *toolInfo) usage() string {
	s := t.schema
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	var parts []string
	for _, n := range names {
		opt := "optional"
		if required[n] {
			opt = "required"
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", n, kindOf(s.Properties[n]), opt))
	}
	if len(parts) == 0 {
		return "no arguments"
	}
	return strings.Join(parts, "; ")
}

// kindOf describes a property's values: its type, its enum, its bounds.
func kindOf(p *jsonschema.Schema) string {
	if len(p.Enum) > 0 {
		var vals []string
		for _, e := range p.Enum {
			vals = append(vals, fmt.Sprintf("%q", e))
		}
		return "one of " + strings.Join(vals, ", ")
	}
	kind := p.Type
	switch {
	case p.Minimum != nil && p.Maximum != nil:
		kind += fmt.Sprintf(" %g to %g", *p.Minimum, *p.Maximum)
	case p.Minimum != nil:
		kind += fmt.Sprintf(" from %g", *p.Minimum)
	case p.MaxLength != nil:
		kind += fmt.Sprintf(" of at most %d characters", *p.MaxLength)
	case p.MaxItems != nil:
		kind += fmt.Sprintf(" of at most %d items", *p.MaxItems)
	}
	return kind
}
