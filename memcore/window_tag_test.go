package memcore

import (
	"slices"
	"strings"
	"testing"
)

// TestStripToolContentTagEnd: a tool tag is self-closing only when "/>"
// ends it outside any attribute value, and a '>' inside a quoted value does
// not end the tag, so no output inside a block survives.
func TestStripToolContentTagEnd(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"unquoted value ending in a slash", "a<tool_result path=/tmp/>OUTPUT</tool_result>b", "ab"},
		{"unquoted value that is a slash", "a<tool path=/>OUTPUT</tool>b", "ab"},
		{"unquoted URL value", "a<tool_call url=https://x.test/a/>OUTPUT</tool_call>b", "ab"},
		{"second attribute unquoted with a slash", `a<tool_use id="1" dir=src/>OUTPUT</tool_use>b`, "ab"},
		{"quoted value holding />", `a<tool_result note="a/>b">OUTPUT</tool_result>b`, "ab"},
		{"quoted value holding >", `a<tool_result cmd='x > y'>OUTPUT</tool_result>b`, "ab"},
		{"nested tag with an unquoted slash value", "a<tool>x<tool p=/>OUTPUT</tool>LEAK</tool>b", "ab"},
		{"nested tag with a quoted >", `a<tool>x<tool q=">">OUTPUT</tool>LEAK</tool>b`, "ab"},
		{"closing tag with white space", "a<tool>OUTPUT</tool >b", "ab"},
		{"unterminated quote removed to the end", `a<tool_result x="OUTPUT</tool_result>b`, "a"},
		// Still self-closing.
		{"self-closing after a quoted value", `a<tool_call name="x"/>b`, "ab"},
		{"self-closing after a bare attribute", "a<tool flag/>b", "ab"},
		{"a slash not followed by > does not self-close", "a<tool / >OUTPUT", "a"},
		{"self-closing without attributes", "a<tool/>b<tool_use />c", "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StripToolContent([]Message{user(tt.in)})
			want := []Message{user(tt.want)}
			if !slices.Equal(got, want) {
				t.Errorf("StripToolContent(%q) = %q, want %q", tt.in, got, want)
			}
		})
	}
}

// FuzzStripToolContentAttributes builds a tool block whose opening tag
// carries attributes made from the fuzzer's bytes — quoted with either
// quote, or unquoted, any of them possibly ending in '/' — and whose
// content holds a marker: whatever the attributes, the marker never
// survives.
func FuzzStripToolContentAttributes(f *testing.F) {
	f.Add("path", "/tmp/", uint8(2), "OUTPUT", "before ", " after", uint8(0))
	f.Add("note", "a/>b", uint8(0), "x", "", "", uint8(1))
	f.Add("cmd", "x > y", uint8(1), "\n", "", "", uint8(2))
	f.Add("id", "1", uint8(0), "", "<tool>", "</tool>", uint8(3))
	f.Fuzz(func(t *testing.T, key, value string, quote uint8, body, before, after string, tagN uint8) {
		const marker = "\x02MARK\x02"
		name := toolTags[int(tagN)%len(toolTags)]
		if strings.Contains(before+after+key+value+body, "\x02") {
			t.Skip()
		}
		open := "<" + name + " " + attrName(key) + "=" + attrValue(value, quote) + ">"
		// The body must not close the block itself.
		body = strings.ReplaceAll(body, "</", "<")
		content := before + open + body + marker + body + "</" + name + ">" + after
		for _, m := range StripToolContent([]Message{user(content)}) {
			if strings.Contains(m.Content, "MARK") {
				t.Fatalf("tool content survived:\n in  %q\n out %q", content, m.Content)
			}
		}
	})
}

// attrName makes an attribute name of s: letters, digits, '_' and '-'
// kept, at least one letter.
func attrName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			b.WriteRune(r)
		}
	}
	return "a" + b.String()
}

// attrValue renders v as an attribute value: in double quotes, in single
// quotes, or unquoted (then without white space, quotes, '=', '<', '>' or
// '`', as HTML allows — but '/' is kept, and may end it).
func attrValue(v string, quote uint8) string {
	switch quote % 3 {
	case 0:
		return `"` + strings.ReplaceAll(v, `"`, "") + `"`
	case 1:
		return `'` + strings.ReplaceAll(v, `'`, "") + `'`
	}
	v = strings.Map(func(r rune) rune {
		if strings.ContainsRune(" \t\n\r\f\"'=<>`", r) {
			return -1
		}
		return r
	}, v)
	if v == "" {
		v = "/"
	}
	return v
}
