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
