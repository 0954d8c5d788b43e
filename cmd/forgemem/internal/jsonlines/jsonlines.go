package jsonlines

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Line is a line of a file that is not blank.
type Line struct {
	// N is the line's number, from 1, blank lines counted.
	N int
	// Text is the line without the space around it, nor its end.
	Text []byte
	// Indent is the number of characters of space before Text: the
	// columns an error names count from the line's first character.
	Indent int
}

// Reader reads the lines of a JSON Lines file that are not blank, however
// long. A byte order mark at the start of the file, which some editors
// write at the start of UTF-8, is not part of its first line.
type Reader struct {
	br   *bufio.Reader
	n    int  // lines read
	done bool // the end was read
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReader(r)}
}

// byteOrderMark is U+FEFF in UTF-8.
var byteOrderMark = []byte("\ufeff")

// Next returns the next line that is not blank, or io.EOF after the last.
// An error reading r is returned as it is.
func (r *Reader) Next() (Line, error) {
	for !r.done {
		text, err := r.br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return Line{}, err
		}
		r.done = err != nil
		r.n++
		if r.n == 1 {
			text = bytes.TrimPrefix(text, byteOrderMark)
		}
		if trimmed := bytes.TrimSpace(text); len(trimmed) > 0 {
			indent := utf8.RuneCount(text[:len(text)-len(bytes.TrimLeftFunc(text, unicode.IsSpace))])
			return Line{N: r.n, Text: trimmed, Indent: indent}, nil
		}
	}
	return Line{}, io.EOF
}

// Syntax says what is wrong with the line, given the error encoding/json
// returned decoding its first value: that the line ends inside a value,
// or the character where it stops being JSON and its column, counted in
// characters from the line's start. It begins "not valid JSON".
func (l Line) Syntax(err error) string {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "not valid JSON: the line ends inside a value"
	case errors.As(err, &syn) && syn.Offset > 0 && syn.Offset <= int64(len(l.Text)):
		r, _ := utf8.DecodeRune(l.Text[syn.Offset-1:])
		col := l.Indent + utf8.RuneCount(l.Text[:syn.Offset-1]) + 1
		return fmt.Sprintf("not valid JSON: unexpected %s at column %d", strconv.Quote(string(r)), col)
	}
	return fmt.Sprintf("not valid JSON: %v", err)
}

// Kind names the kind of a JSON value as a person would: "an object", "an
// array", "a string", "a number", "true", "false" or "null"; "nothing" for
// no value.
func Kind(v []byte) string {
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

// Absent reports whether a member's value is missing or null, which
// encoding/json reads as the field's zero value.
func Absent(v json.RawMessage) bool {
	return len(v) == 0 || string(v) == "null"
}

// maxValueShown bounds a value an error quotes, in characters.
const maxValueShown = 64

// Clip is s to quote in an error: cut to its first 64 characters followed
// by "…" when it is longer than 65.
func Clip(s string) string {
	if utf8.RuneCountInString(s) <= maxValueShown+1 {
		return s
	}
	return string([]rune(s)[:maxValueShown]) + "…"
}
