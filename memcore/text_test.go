package memcore

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// CheckText finds the first character memory text must not hold — a byte
// that is not UTF-8, a control character but tab and line breaks — and
// says where it is, in characters from 1 and in lines; everything else is
// text.
func TestCheckText(t *testing.T) {
	tests := []struct {
		name string
		text string
		// want is the character found; nil for text that is fine.
		want *CharError
		msg  string
	}{
		{"empty", "", nil, ""},
		{"plain", "Prefers tabs.", nil, ""},
		{"tab and line breaks", "Prefers tabs:\r\n\tin Go\rtoo.\n", nil, ""},
		{"U+FFFD, which is UTF-8", "Prefers \uFFFD.", nil, ""},
		{"accents, CJK and emoji", "Préfère «ça» — 名前は太郎 🦀", nil, ""},
		{"NUL", "Prefers tabs in \x00Go.", &CharError{Rune: 0, At: 17, Line: 1}, "a control character U+0000 at character 17"},
		{"escape sequence", "\x1b[2JPrefers tabs.", &CharError{Rune: 0x1b, At: 1, Line: 1}, "a control character U+001B at character 1"},
		{"DEL", "a\x7f", &CharError{Rune: 0x7f, At: 2, Line: 1}, "a control character U+007F at character 2"},
		{"C1 NEL", "a\u0085b", &CharError{Rune: 0x85, At: 2, Line: 1}, "a control character U+0085 at character 2"},
		{"C1 CSI", "a\u009b2J", &CharError{Rune: 0x9b, At: 2, Line: 1}, "a control character U+009B at character 2"},
		{"vertical tab", "a\vb", &CharError{Rune: '\v', At: 2, Line: 1}, "a control character U+000B at character 2"},
		{"counted in characters and lines", "é€\n𝄞\n\x07", &CharError{Rune: 7, At: 6, Line: 3}, "a control character U+0007 at character 6"},
		{"not UTF-8", "Prefers\xfftabs.", &CharError{Rune: utf8.RuneError, Byte: 0xff, At: 8, Line: 1}, "a byte that is not UTF-8 (0xFF) at character 8"},
		{"a cut character", "ab\xe2\x82", &CharError{Rune: utf8.RuneError, Byte: 0xe2, At: 3, Line: 1}, "a byte that is not UTF-8 (0xE2) at character 3"},
		{"the first of several", "a\n\x00\x1b", &CharError{Rune: 0, At: 3, Line: 2}, "a control character U+0000 at character 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckText(tt.text)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("CheckText(%q) = %v, want nil", tt.text, err)
				}
				return
			}
			var ce *CharError
			if !errors.As(err, &ce) {
				t.Fatalf("CheckText(%q) = %v, want a *CharError", tt.text, err)
			}
			if *ce != *tt.want {
				t.Errorf("CheckText(%q) = %+v, want %+v", tt.text, *ce, *tt.want)
			}
			if ce.Error() != tt.msg {
				t.Errorf("message %q, want %q", ce.Error(), tt.msg)
			}
			if ce.NotUTF8() != (tt.want.Byte != 0) {
				t.Errorf("NotUTF8() = %t", ce.NotUTF8())
			}
		})
	}
}

// A file written by hand whose text holds a control character is still a
// valid memory, and TextProblems names each field holding one, with its
// first such character and where it is; text with none has none.
func TestTextProblems(t *testing.T) {
	head := "---\nid: " + idA + "\ncreated_at: 2025-01-15T10:30:00Z\nversion: 1\nscope: repo\ncategory: patterns\n"
	tests := []struct {
		name string
		file string
		want []TextProblem
	}{
		{"plain", head + "session_id: sess-1\n---\n\nPrefers tabs:\n\tin Go, «toujours» 🦀.\n", nil},
		{"a NUL in the content", head + "---\n\nPrefers tabs.\nIn \x00Go\x00.\n",
			[]TextProblem{{"content", &CharError{Rune: 0, At: 18, Line: 2}}}},
		{"an escape sequence in the content", head + "---\n\n\x1b[2JPrefers tabs.\n",
			[]TextProblem{{"content", &CharError{Rune: 0x1b, At: 1, Line: 1}}}},
		{"escapes in the front matter", head + "session_id: \"s\\e]0;x\\a\"\nretired: true\nretired_reason: \"wrong \\x9b2J\"\n" +
			"evidence:\n  quote: \"said \\0 it\"\n---\n\nPrefers tabs.\x7f\n",
			[]TextProblem{
				{"session_id", &CharError{Rune: 0x1b, At: 2, Line: 1}},
				{"retired_reason", &CharError{Rune: 0x9b, At: 7, Line: 1}},
				{"evidence.quote", &CharError{Rune: 0, At: 6, Line: 1}},
				{"content", &CharError{Rune: 0x7f, At: 14, Line: 1}},
			}},
		{"status and rejection reasons", head + "status: pending\nstatus_reason: \"instruction: \\a\"\n---\n\nPrefers tabs.\n",
			[]TextProblem{{"status_reason", &CharError{Rune: 7, At: 14, Line: 1}}}},
		{"a rejection reason", head + "rejection_reason: \"no\\r\\n\\vway\"\n---\n\nPrefers tabs.\n",
			[]TextProblem{{"rejection_reason", &CharError{Rune: '\v', At: 5, Line: 2}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.file))
			if err != nil {
				t.Fatalf("Parse: %v (the file must still be read)", err)
			}
			got := m.TextProblems()
			if len(got) != len(tt.want) {
				t.Fatalf("TextProblems() = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i].Field != tt.want[i].Field || *got[i].Char != *tt.want[i].Char {
					t.Errorf("problem %d = %s %+v, want %s %+v", i, got[i].Field, *got[i].Char, tt.want[i].Field, *tt.want[i].Char)
				}
			}
		})
	}
}

// checkTextProblems fails t unless each of m's TextProblems is what
// CheckText says of its field, and each field CheckText refuses has one.
func checkTextProblems(t *testing.T, m *MemoryFile) {
	t.Helper()
	fields := map[string]string{"session_id": m.Meta.SessionID, "retired_reason": m.Meta.RetiredReason,
		"status_reason": m.Meta.StatusReason, "rejection_reason": m.Meta.RejectionReason, "content": m.Content, "evidence.quote": ""}
	if m.Meta.Evidence != nil {
		fields["evidence.quote"] = m.Meta.Evidence.Quote
	}
	got := map[string]*CharError{}
	for _, p := range m.TextProblems() {
		got[p.Field] = p.Char
	}
	for key, text := range fields {
		var want *CharError
		if err := CheckText(text); err != nil && !errors.As(err, &want) {
			t.Fatalf("CheckText(%q) = %v, not a *CharError", text, err)
		}
		switch {
		case want == nil && got[key] != nil:
			t.Fatalf("TextProblems names %s %+v, which CheckText accepts (%q)", key, *got[key], text)
		case want != nil && (got[key] == nil || *got[key] != *want):
			t.Fatalf("TextProblems of %s = %v, want %+v (%q)", key, got[key], *want, text)
		case want != nil && !want.NotUTF8() && []rune(text)[want.At-1] != want.Rune:
			t.Fatalf("%s: character %d of %q is not %U", key, want.At, text, want.Rune)
		}
	}
}
