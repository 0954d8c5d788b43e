package memcore

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// CharError is a character of a text that a memory file must not hold, as
// [CheckText] finds it: a byte that is not UTF-8, or a control character
// other than tab and line breaks. Its message names the character and
// where it is: "a control character U+001B at character 5".
type CharError struct {
	// Rune is the character, or utf8.RuneError for a byte that is not
	// UTF-8 (Byte).
	Rune rune
	// Byte is the byte that is not UTF-8, when Rune stands for one; 0
	// otherwise (a NUL is UTF-8, Rune 0).
	Byte byte
	// At is where it is, in characters counted from 1 in the text checked
	// (a byte that is not UTF-8 counts as one).
	At int
	// Line is the line it is on, counted from 1: a line feed ends a line.
	Line int
}

// NotUTF8 reports whether e is a byte that is not UTF-8 rather than a
// character.
func (e *CharError) NotUTF8() bool { return e.Rune == utf8.RuneError && e.Byte != 0 }

func (e *CharError) Error() string {
	if e.NotUTF8() {
		return fmt.Sprintf("a byte that is not UTF-8 (0x%02X) at character %d", e.Byte, e.At)
	}
	return fmt.Sprintf("a control character U+%04X at character %d", e.Rune, e.At)
}

// CheckText returns a [*CharError] for the first character of s that text
// written into a memory file — its content, a reason, a quote — must not
// hold, or nil: a byte that is not UTF-8, or a control character (C0, DEL
// or C1) other than tab, line feed and carriage return (line breaks,
// which a writer makes "\n"). A NUL makes git and other tools take the
// file for binary, and an escape sequence drives the terminal of whoever
// prints the file. The forgemem command, its MCP server and capture refuse
// such text.
func CheckText(s string) error {
	line := 1
	for i, n := 0, 1; i < len(s); n++ {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return &CharError{Rune: r, Byte: s[i], At: n, Line: line}
		case r == '\n':
			line++
		case unsafeRune(r):
			return &CharError{Rune: r, At: n, Line: line}
		}
		i += size
	}
	return nil
}

// unsafeRune reports whether CheckText refuses r, a character of UTF-8
// text.
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r'
}
