package memcore

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CharError is a character of a text that a memory file must not hold, as
// [CheckText] finds it: a byte that is not UTF-8, a control character
// other than tab and line breaks, or a bidirectional formatting or
// invisible character, or a tag character outside a flag. Its message
// names the character and where it is: "a control character U+001B at
// character 5".
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

// CharKind is the kind of character a [CharError] is.
type CharKind int

// The kinds of [CharError].
const (
	// CharNotUTF8: a byte that is not UTF-8.
	CharNotUTF8 CharKind = iota
	// CharControl: a control character (C0, DEL or C1) other than tab and
	// line breaks: a NUL, the ESC that starts an escape sequence.
	CharControl
	// CharBidi: one of Unicode's bidirectional formatting characters, the
	// embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069
	// and the marks U+200E, U+200F and U+061C, which change the order in
	// which the text around them is shown ("Trojan Source").
	CharBidi
	// CharInvisible: a character that shows as nothing, the zero-width
	// space U+200B, U+FEFF (a byte order mark inside text), the word
	// joiner U+2060 or the invisible operators U+2061–U+2064, which make
	// two texts that read alike differ.
	CharInvisible
	// CharTag: one of Unicode's tag characters U+E0000–U+E007F outside
	// the flag of a subdivision (England, Scotland, Wales). They show as
	// nothing, but U+E0020–U+E007E mirror ASCII, and a model reads
	// U+E0041 as "A": text hidden from a person that a model still reads
	// ("ASCII smuggling").
	CharTag
)

// Kind says what kind of character e is.
func (e *CharError) Kind() CharKind {
	switch {
	case e.Rune == utf8.RuneError && e.Byte != 0:
		return CharNotUTF8
	case isBidi(e.Rune):
		return CharBidi
	case isTag(e.Rune):
		return CharTag
	case isInvisible(e.Rune):
		return CharInvisible
	}
	return CharControl
}

func (e *CharError) Error() string {
	what := ""
	switch e.Kind() {
	case CharNotUTF8:
		return fmt.Sprintf("a byte that is not UTF-8 (0x%02X) at character %d", e.Byte, e.At)
	case CharBidi:
		what = "a bidirectional formatting character"
	case CharInvisible:
		what = "an invisible character"
	case CharTag:
		what = "an invisible tag character"
	default:
		what = "a control character"
	}
	return fmt.Sprintf("%s U+%04X at character %d", what, e.Rune, e.At)
}

// CheckText returns a [*CharError] for the first character of s that text
// written into a memory file — its content, a reason, a quote — must not
// hold, or nil: a byte that is not UTF-8; a control character (C0, DEL or
// C1) other than tab, line feed and carriage return (line breaks, which a
// writer makes "\n"); a bidirectional formatting character (U+202A–U+202E,
// U+2066–U+2069, U+200E, U+200F, U+061C); the invisible zero-width space
// U+200B, U+FEFF, the word joiner U+2060 and the invisible operators
// U+2061–U+2064; a tag character U+E0000–U+E007F outside the flag of a
// subdivision. A NUL makes git and other tools take the file for binary,
// an escape sequence drives the terminal of whoever prints the file, the
// bidirectional and invisible characters make text read differently than
// it is, and tag characters hide text from a person that a model reads
// (U+E0041 is an invisible "A"). The zero-width joiner U+200D and
// non-joiner U+200C are text: emoji sequences (👨‍👩‍👧) and the spelling of
// Persian and other scripts need them, as letters of every script,
// accents, emoji and right-to-left text written as such are; so are the
// flags of England, Scotland and Wales, U+1F3F4 followed by the tag
// letters and digits of a subdivision code (3 to 7 of them: "gbeng") and
// U+E007F CANCEL TAG. Unicode allows any tag characters U+E0020–U+E007E
// there, but a subdivision code is only lower-case letters and digits, so
// no sentence can hide inside a "flag". The forgemem command, its MCP server and
// capture refuse such text. A file written by hand that holds such a
// character is still read, unless it is a byte that is not UTF-8
// ([MemoryFile.Validate]), and [MemoryFile.TextProblems] reports it.
func CheckText(s string) error {
	if ce := findChar(s, unsafeRune); ce != nil {
		return ce
	}
	return nil
}

// findChar returns the first byte of s that is not UTF-8, or character
// refuse reports, or nil.
func findChar(s string, refuse func(rune) bool) *CharError {
	var first *CharError
	scanChars(s, refuse, func(ce *CharError, _, _ int) bool {
		first = ce
		return false
	})
	return first
}

// scanChars calls found with each byte of s that is not UTF-8 and each
// character refuse reports, where it is in s and its size, in order,
// until found returns false. The tag characters of a subdivision's flag
// are text: refuse is not asked about them.
func scanChars(s string, refuse func(rune) bool, found func(ce *CharError, i, size int) bool) {
	line := 1
	for i, n := 0, 1; i < len(s); n++ {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if !found(&CharError{Rune: r, Byte: s[i], At: n, Line: line}, i, size) {
				return
			}
		case r == '\n':
			line++
		case r == flagBase:
			// A flag's tag characters are text: step over them.
			if tags := flagTags(s[i+size:]); tags > 0 {
				i += size + tags*tagSize
				n += tags
				continue
			}
		case refuse(r):
			if !found(&CharError{Rune: r, At: n, Line: line}, i, size) {
				return
			}
		}
		i += size
	}
}

// The emoji tag sequence of a subdivision's flag: flagBase, the tag
// letters and digits of its code, cancelTag.
const (
	flagBase  = 0x1f3f4 // WAVING BLACK FLAG
	cancelTag = 0xe007f
	// tagSize is the size of a tag character in UTF-8.
	tagSize = 4
	// minFlagCode and maxFlagCode bound the length of a subdivision code
	// (CLDR's unicode_subdivision_id: a region of 2 letters or 3 digits,
	// then 1 to 4 letters or digits).
	minFlagCode, maxFlagCode = 3, 7
)

// flagTags returns how many tag characters, the cancel tag included, start
// s when s follows a flagBase and they make it a subdivision's flag: 3 to
// 7 tag lower-case letters (U+E0061–U+E007A) or digits (U+E0030–U+E0039),
// then U+E007F; 0 otherwise.
func flagTags(s string) int {
	for k := 0; k <= maxFlagCode; k++ {
		r, size := utf8.DecodeRuneInString(s[min(k*tagSize, len(s)):])
		switch {
		case r == cancelTag && k >= minFlagCode:
			return k + 1
		case size != tagSize || !(r >= 0xe0061 && r <= 0xe007a || r >= 0xe0030 && r <= 0xe0039):
			return 0
		}
	}
	return 0
}

// notUTF8 returns the first byte of s that is not UTF-8, or nil.
func notUTF8(s string) *CharError {
	if utf8.ValidString(s) {
		return nil
	}
	return findChar(s, func(rune) bool { return false })
}

// TextProblem is a character of a memory's text that [CheckText] refuses.
type TextProblem struct {
	// Field is the field it is in, by its key in the file
	// ("retired_reason", "evidence.quote"), or "content" for the body.
	Field string
	// Char is the first such character of the field.
	Char *CharError
}

// TextProblems returns, for each field of m that holds text — the session
// id, the retired, status and rejection reasons, the evidence's quote and
// the content — the first character of it that [CheckText] refuses, in the
// order of the file, or nil when there is none. A memory a person wrote or
// merged by hand can hold one and still be valid: only a byte that is not
// UTF-8 makes it invalid (Validate), so that such a character is reported
// rather than the memory hidden.
func (m *MemoryFile) TextProblems() []TextProblem {
	mt := &m.Meta
	quote := ""
	if mt.Evidence != nil {
		quote = mt.Evidence.Quote
	}
	fields := []struct{ key, text string }{
		{"session_id", mt.SessionID},
		{"retired_reason", mt.RetiredReason},
		{"evidence.quote", quote},
		{"status_reason", mt.StatusReason},
		{"rejection_reason", mt.RejectionReason},
		{"content", m.Content},
	}
	var out []TextProblem
	for _, f := range fields {
		if ce := findChar(f.text, unsafeRune); ce != nil {
			out = append(out, TextProblem{Field: f.key, Char: ce})
		}
	}
	return out
}

// unsafeRune reports whether CheckText refuses r, a character of UTF-8
// text.
func unsafeRune(r rune) bool {
	if unicode.IsControl(r) {
		return r != '\t' && r != '\n' && r != '\r'
	}
	return isBidi(r) || isInvisible(r) || isTag(r)
}

// isBidi reports whether r is one of Unicode's bidirectional formatting
// characters: ALM, LRM, RLM, the embeddings and overrides U+202A–U+202E and
// the isolates U+2066–U+2069.
func isBidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// isInvisible reports whether r is a character CheckText refuses because
// it shows as nothing: the zero-width space, U+FEFF (a parser drops the
// byte order mark that starts a file; inside text it is a zero-width
// no-break space), the word joiner U+2060 and the invisible operators
// U+2061–U+2064.
func isInvisible(r rune) bool { return r == 0x200b || r == 0xfeff || r >= 0x2060 && r <= 0x2064 }

// isTag reports whether r is one of Unicode's tag characters,
// U+E0000–U+E007F.
func isTag(r rune) bool { return r >= 0xe0000 && r <= 0xe007f }

// EscapeText returns s with each character [CheckText] refuses, and each
// byte that is not UTF-8, replaced by what escape returns for it (its
// CharError says which it is and where); the rest of s, the tag
// characters of a flag included, is kept. It returns s itself when there
// is nothing to replace. So that a person sees what a model reads, text
// from a memory file is shown with such characters escaped — by
// [VisibleText] to a model, by the forgemem command its own way in a
// terminal — and everything that shows them uses this one list.
func EscapeText(s string, escape func(c *CharError) string) string {
	var b strings.Builder
	last := 0
	scanChars(s, unsafeRune, func(ce *CharError, i, size int) bool {
		if last == 0 {
			b.Grow(len(s) + 16)
		}
		b.WriteString(s[last:i])
		b.WriteString(escape(ce))
		last = i + size
		return true
	})
	if b.Len() == 0 && last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// VisibleText returns s with each character [CheckText] refuses written as
// its code point in angle brackets, "<U+E0041>", and each byte that is not
// UTF-8 as "<0xFF>": what a model reads of a memory is then what a person
// reading the memory sees, and an instruction hidden in tag characters or
// behind a bidirectional override shows as the code points it is. Text
// without such characters is returned as it is.
func VisibleText(s string) string {
	return EscapeText(s, func(c *CharError) string {
		if c.Kind() == CharNotUTF8 {
			return fmt.Sprintf("<0x%02X>", c.Byte)
		}
		return fmt.Sprintf("<U+%04X>", c.Rune)
	})
}
