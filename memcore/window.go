package memcore

import (
	"strings"
	"unicode/utf8"
)

// toolTags are the XML-style blocks that carry tool calls and their results
// inside assistant or user text. Their content never reaches a classifier
// or a retrieval query.
var toolTags = []string{"tool_result", "tool_call", "tool_use", "tool"}

// StripToolContent returns the conversation as capture and retrieval see it:
// only user and assistant messages, with tool-call and tool-result blocks
// (<tool>…</tool>, <tool_call>…</tool_call>, <tool_use>…</tool_use>,
// <tool_result>…</tool_result>, tags matched case-insensitively and allowed
// attributes) removed, and messages left empty dropped. An unclosed block is
// removed to the end of its message, so tool output is never leaked. The
// input is not modified.
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
		out = append(out, Message{Role: m.Role, Content: text})
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
	gt := strings.IndexByte(s, '>')
	if gt < 0 {
		return -1
	}
	if gt > 0 && s[gt-1] == '/' {
		return gt + 1
	}
	closing := "</" + name + ">"
	depth := 1
	for i := gt + 1; ; {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			return -1
		}
		i += j
		switch {
		case len(s)-i >= len(closing) && strings.EqualFold(s[i:i+len(closing)], closing):
			i += len(closing)
			if depth--; depth == 0 {
				return i
			}
		case isOpenTag(s[i:], name):
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return -1
			}
			if s[i+end-1] != '/' {
				depth++
			}
			i += end + 1
		default:
			i++
		}
	}
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
			c := Message{Role: msgs[i].Role, Content: tailRunes(msgs[i].Content, room*4)}
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
