package jsonlines

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
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
// long — or, with a limit, up to it. A byte order mark at the start of the
// file, which some editors write at the start of UTF-8, is not part of its
// first line.
type Reader struct {
	br      *bufio.Reader
	maxLine int  // the longest line read, in bytes without its end; 0: any
	n       int  // lines read
	done    bool // the end was read
}

// NewReader returns a Reader of r that reads lines however long.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReader(r)}
}

// NewLimitedReader returns a Reader of r whose Next refuses a line longer
// than maxLine bytes (without its end) with an error wrapping
// [ErrLineTooLong], as soon as it has read that much of it: a stream
// without a newline (/dev/zero) is not read on and on into memory.
func NewLimitedReader(r io.Reader, maxLine int) *Reader {
	return &Reader{br: bufio.NewReader(r), maxLine: maxLine}
}

// ErrLineTooLong: a line longer than a [NewLimitedReader]'s limit. The
// error is a [*LineTooLongError].
var ErrLineTooLong = errors.New("line too long")

// LineTooLongError is the error of a line longer than a
// [NewLimitedReader]'s limit: "line 3 is longer than 16 MiB". It matches
// [ErrLineTooLong].
type LineTooLongError struct {
	// N is the line's number, from 1; Limit the limit, in bytes.
	N, Limit int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("line %d is longer than %s", e.N, sizeText(e.Limit))
}

// Is reports whether target is ErrLineTooLong.
func (e *LineTooLongError) Is(target error) bool { return target == ErrLineTooLong }

// byteOrderMark is U+FEFF in UTF-8.
var byteOrderMark = []byte("\ufeff")

// Next returns the next line that is not blank, or io.EOF after the last.
// An error reading r is returned as it is.
func (r *Reader) Next() (Line, error) {
	for !r.done {
		text, err := r.readLine()
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

// readLine reads the next line with its end, if any: io.EOF after the
// last, and an error wrapping ErrLineTooLong once a line is longer than
// the limit.
func (r *Reader) readLine() ([]byte, error) {
	if r.maxLine <= 0 {
		return r.br.ReadBytes('\n')
	}
	var line []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		line = append(line, chunk...)
		if n := len(bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))); n > r.maxLine {
			return nil, &LineTooLongError{N: r.n + 1, Limit: r.maxLine}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// sizeText writes n bytes as a person reads it: "16 MiB", "512 KiB",
// "100 bytes".
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Syntax says what is wrong with the line, given the error encoding/json
// returned decoding its first value: that the line ends inside a value,
// or the character where it stops being JSON and its column, counted in
// characters from the line's start. It begins "not valid JSON".
func (l Line) Syntax(err error) string {
	msg, _ := l.syntax(err)
	return msg
}

// syntax is Syntax, and the column it names; 0 when it names none.
func (l Line) syntax(err error) (string, int) {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "not valid JSON: the line ends inside a value", 0
	case errors.As(err, &syn) && syn.Offset > 0 && syn.Offset <= int64(len(l.Text)):
		col := l.column(int(syn.Offset - 1))
		return fmt.Sprintf("not valid JSON: unexpected %s at column %d", l.charAt(int(syn.Offset-1)), col), col
	}
	return fmt.Sprintf("not valid JSON: %v", err), 0
}

// column is the column of the character at byte i of Text, counted in
// characters from the line's first, 1.
func (l Line) column(i int) int {
	return l.Indent + utf8.RuneCount(l.Text[:i]) + 1
}

// charAt quotes the character at byte i of Text.
func (l Line) charAt(i int) string {
	r, _ := utf8.DecodeRune(l.Text[i:])
	return strconv.Quote(string(r))
}

// ErrNotOneValue: a line that is not exactly one JSON value, with nothing
// but space around it. The error is a [*NotOneValueError].
var ErrNotOneValue = errors.New("not one JSON value")

// NotOneValueError is the error of a line that is not exactly one JSON
// value, from [Line.Value]: one that is not JSON (as [Line.Syntax] says),
// `not valid JSON: unexpected "]" at column 31, after the object` after a
// value, or "more than one JSON value on the line". Its message does not
// name the line, as the errors of a reader about the line do. It matches
// [ErrNotOneValue].
type NotOneValueError struct {
	// N is the line's number, from 1.
	N int
	// Column is where the line stops being one JSON value, in characters
	// from its first, 1; 0 when the line ends inside a value.
	Column int
	// Second is whether a second JSON value follows the first.
	Second bool
	msg    string
}

func (e *NotOneValueError) Error() string { return e.msg }

// Is reports whether target is ErrNotOneValue.
func (e *NotOneValueError) Is(target error) bool { return target == ErrNotOneValue }

// jsonSpace is the space JSON allows between values.
const jsonSpace = " \t\r\n"

// Value returns the line's JSON value, which must be all the line holds:
// a line that is not JSON, or whose value is followed by anything, a
// second value ("{…} {…}"), the "]" or "," of an array cut into lines by
// hand, is an error, a [*NotOneValueError] (see there) matching
// [ErrNotOneValue]. The value is as encoding/json reads it, not checked
// further; space around it is not part of it.
func (l Line) Value() (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(l.Text))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		msg, col := l.syntax(err)
		return nil, &NotOneValueError{N: l.N, Column: col, msg: msg}
	}
	end := int(dec.InputOffset())
	rest := bytes.TrimLeft(l.Text[end:], jsonSpace)
	if len(rest) == 0 {
		return v, nil
	}
	at := len(l.Text) - len(rest)
	col := l.column(at)
	var second json.RawMessage
	if dec.Decode(&second) == nil {
		return nil, &NotOneValueError{N: l.N, Column: col, Second: true, msg: "more than one JSON value on the line"}
	}
	what := Kind(v)
	if a, noun, ok := strings.Cut(what, " "); ok && (a == "a" || a == "an") {
		what = "the " + noun
	}
	return nil, &NotOneValueError{N: l.N, Column: col,
		msg: fmt.Sprintf("not valid JSON: unexpected %s at column %d, after %s", l.charAt(at), col, what)}
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

// maxValueShown bounds a value an error quotes, in columns of a terminal.
const maxValueShown = 64

// Clip is s to quote in an error, which a person reads on a terminal: cut
// to its first 64 columns followed by "…" when it takes more than 65 (see
// [termtext.Clip]), so that a value of CJK text, two columns a character,
// is cut at the width of one in ASCII.
func Clip(s string) string { return termtext.Clip(s, maxValueShown+1) }
