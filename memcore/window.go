package memcore

import (
	"strings"
	"unicode/utf8"

	"github.com/forgemem/forgemem/memcore/redact"
)

// toolTags are the XML-style blocks that carry tool calls and their results
// inside assistant or user text. Their content never reaches a classifier
// or a retrieval query.
var toolTags = []string{"tool_result", "tool_call", "tool_use", "tool"}

// StripToolContent returns the conversation as capture and retrieval see it:
// only user and assistant messages, with tool-call and tool-result blocks
// (<tool>…</tool>, <tool_call>…</tool_call>, <tool_use>…</tool_use>,
// <tool_result>…</tool_result>, tags matched case-insensitively and allowed
// attributes) removed, and messages left empty dropped. Opening tags are read
// the way an HTML tokenizer reads them: a '>' inside a quoted attribute value
// does not end the tag, and the tag is self-closing only when "/>" ends it
// outside any attribute value (<tool path=/tmp/> opens a block). An unclosed
// block is removed to the end of its message, so tool output is never
// leaked. The input is not modified.
func StripToolContent(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			continue
		}
		text := strings.TrimSpace(stripToolBlocks(m.Content))
		if text == "" {
			continue
		}
		out = append(out, Message{Role: m.Role, Content: text, At: m.At})
	}
	return out
}

// stripToolBlocks removes every tool block from s.
func stripToolBlocks(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	for {
		start, name := findOpenTag(s)
		if start < 0 {
			if b.Len() == 0 {
				return s
			}
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:start])
		end := findCloseTag(s[start:], name)
		if end < 0 {
			return b.String()
		}
		s = s[start+end:]
	}
}

// findOpenTag finds the first opening tool tag in s and returns its offset
// and name, or -1.
func findOpenTag(s string) (int, string) {
	for off := 0; ; {
		i := strings.IndexByte(s[off:], '<')
		if i < 0 {
			return -1, ""
		}
		i += off
		for _, name := range toolTags {
			if isOpenTag(s[i:], name) {
				return i, name
			}
		}
		off = i + 1
	}
}

// isOpenTag reports whether s starts with an opening (or self-closing) tag
// named name, in any case: "<name" followed by '>', '/' or white space.
func isOpenTag(s, name string) bool {
	j := 1 + len(name)
	if j >= len(s) || !strings.EqualFold(s[1:j], name) {
		return false
	}
	switch s[j] {
	case '>', '/', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// findCloseTag returns the offset just past the block opened at s[0], or -1
// if it is never closed. A self-closing tag (<tool … />) ends at its '>'.
// Blocks of the same name nest: the block ends at the closing tag that
// balances its opening one, so a tool result that quotes another tool block
// is removed whole.
func findCloseTag(s, name string) int {
	gt, selfClosing := tagEnd(s, len(name))
	if gt < 0 {
		return -1
	}
	if selfClosing {
		return gt
	}
	depth := 1
	for i := gt; ; {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			return -1
		}
		i += j
		if n := closeTagLen(s[i:], name); n > 0 {
			i += n
			if depth--; depth == 0 {
				return i
			}
			continue
		}
		if isOpenTag(s[i:], name) {
			end, selfClosing := tagEnd(s[i:], len(name))
			if end < 0 {
				return -1
			}
			if !selfClosing {
				depth++
			}
			i += end
			continue
		}
		i++
	}
}

// closeTagLen returns the length of the closing tag of name at the start of
// s ("</name>", in any case, with white space allowed before the '>'), or 0
// when s does not start with one.
func closeTagLen(s, name string) int {
	j := 2 + len(name)
	if len(s) < j || s[0] != '<' || s[1] != '/' || !strings.EqualFold(s[2:j], name) {
		return 0
	}
	for ; j < len(s); j++ {
		switch s[j] {
		case '>':
			return j + 1
		case ' ', '\t', '\n', '\r', '\f':
		default:
			return 0
		}
	}
	return 0
}

// tagEnd reads the opening tag at the start of s, whose name is nameLen
// bytes long after the '<', the way an HTML tokenizer reads a start tag,
// and returns the offset just past its '>', or -1 if it never ends. A '>'
// or "/>" inside a quoted attribute value does not end the tag, and a '/'
// in an unquoted value belongs to the value: the tag is self-closing only
// when "/>" ends it outside any attribute value (<tool a="b"/>, <tool a/>,
// <tool/>; not <tool path=/tmp/>).
func tagEnd(s string, nameLen int) (end int, selfClosing bool) {
	state := beforeAttr
	for i := 1 + nameLen; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '>':
			return i + 1, false
		case c == '/' && state <= afterAttrName && i+1 < len(s) && s[i+1] == '>':
			return i + 2, true
		case (c == '"' || c == '\'') && state == beforeValue:
			q := strings.IndexByte(s[i+1:], c)
			if q < 0 {
				return -1, false
			}
			i += 1 + q
			state = beforeAttr
		default:
			state = state.next(c)
		}
	}
	return -1, false
}

// tagState is where a tokenizer reading a start tag is, between its name
// and its '>'.
type tagState int

// The states of a start tag, in an order tagEnd relies on: the first three
// are outside any attribute value.
const (
	beforeAttr    tagState = iota // between attributes
	inAttrName                    // in an attribute's name
	afterAttrName                 // after an attribute's name: '=' or another attribute
	beforeValue                   // after '='
	unquotedValue                 // in an unquoted attribute value
)

// next is the state after the byte c, which neither ends the tag nor opens
// a quoted value. A '/' outside a value that does not end the tag starts a
// new attribute; in a value, it belongs to the value.
func (st tagState) next(c byte) tagState {
	space := isTagSpace(c)
	switch {
	case st == unquotedValue && space:
		return beforeAttr
	case st == unquotedValue, st == beforeValue && !space:
		return unquotedValue
	case st == beforeValue:
		return beforeValue
	case c == '/':
		return beforeAttr
	case c == '=' && st != beforeAttr:
		return beforeValue
	case space && st == inAttrName:
		return afterAttrName
	case space:
		return st
	}
	return inAttrName
}

// isTagSpace reports whether c is white space between a tag's attributes.
func isTagSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// EstimateTokens approximates the number of tokens s costs a model: one
// token per four characters (runes), rounded up — the rule of thumb the
// capture and retrieval budgets are expressed in.
func EstimateTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// messageOverhead is the tokens counted per message for its role label.
const messageOverhead = 2

// WindowTokens is the estimated cost of msgs: [EstimateTokens] of each
// content plus a small per-message overhead.
func WindowTokens(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += EstimateTokens(m.Content) + messageOverhead
	}
	return n
}

// CapWindow returns the newest part of msgs that fits in budget tokens (as
// counted by [WindowTokens]). Whole messages are kept from the newest back;
// the oldest message kept may be cut, keeping its end, at a rune boundary.
// budget ≤ 0 returns nil. The input is not modified.
func CapWindow(msgs []Message, budget int) []Message {
	if budget <= 0 {
		return nil
	}
	used, first := 0, len(msgs)
	var cut *Message
	for i := len(msgs) - 1; i >= 0; i-- {
		cost := EstimateTokens(msgs[i].Content) + messageOverhead
		if used+cost <= budget {
			used += cost
			first = i
			continue
		}
		if room := budget - used - messageOverhead; room > 0 {
			c := Message{Role: msgs[i].Role, Content: tailRunes(msgs[i].Content, room*4), At: msgs[i].At}
			cut = &c
		}
		break
	}
	out := make([]Message, 0, len(msgs)-first+1)
	if cut != nil {
		out = append(out, *cut)
	}
	return append(out, msgs[first:]...)
}

// tailRunes returns the last n runes of s.
func tailRunes(s string, n int) string {
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// RedactWindow returns the window fit makes of msgs with the secrets of its
// messages replaced by redact.Placeholder (package
// github.com/forgemem/forgemem/memcore/redact), and how many were replaced
// — a message cut to fit counts whole. fit keeps the newest messages of
// msgs, the oldest kept possibly cut to its end, as [CapWindow] does.
//
// Capture and retrieval call it on the conversation before any of it
// leaves the machine for a model or an embedder. Only the messages fit
// keeps are redacted, so the cost follows the window, not the
// conversation; when fit cut the oldest kept message, that message is
// redacted whole and the window fitted again, so that a secret the cut
// went through is still found. Redaction is deterministic: the same
// messages give the same window, and a window that keeps its beginning
// from one call to the next keeps it redacted too. The input is not
// modified.
func RedactWindow(msgs []Message, fit func([]Message) []Message) ([]Message, int) {
	window := fit(msgs)
	from := len(msgs) - len(window)
	if len(window) > 0 && from >= 0 && len(window[0].Content) != len(msgs[from].Content) {
		redacted, n := redactMessages(msgs[from:])
		return fit(redacted), n
	}
	return redactMessages(window)
}

// redactMessages returns a copy of msgs with each content redacted, and the
// number of secrets replaced.
func redactMessages(msgs []Message) ([]Message, int) {
	if msgs == nil {
		return nil, 0
	}
	out := make([]Message, len(msgs))
	total := 0
	for i, m := range msgs {
		var n int
		out[i] = m
		out[i].Content, n = redact.Text(m.Content)
		total += n
	}
	return out, total
}
