package jsonlines_test

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/jsonlines"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
)

func TestReader(t *testing.T) {
	tests := []struct {
		name, in string
		want     []jsonlines.Line
	}{
		{"empty", "", nil},
		{"blank lines", "\n \t\n\r\n", nil},
		{"lines numbered with the blank ones", "{}\n\n  [1]\r\n", []jsonlines.Line{{N: 1, Text: []byte("{}")}, {N: 3, Text: []byte("[1]"), Indent: 2}}},
		{"no final newline", "{}\n{\"a\": 1}", []jsonlines.Line{{N: 1, Text: []byte("{}")}, {N: 2, Text: []byte(`{"a": 1}`)}}},
		{"indent counted in characters", "\t\u00a0{}", []jsonlines.Line{{N: 1, Text: []byte("{}"), Indent: 2}}},
		{"a byte order mark first", "\ufeff{}\n", []jsonlines.Line{{N: 1, Text: []byte("{}")}}},
		{"a byte order mark alone", "\ufeff", nil},
		{"a byte order mark, then a blank line", "\ufeff\n{}", []jsonlines.Line{{N: 2, Text: []byte("{}")}}},
		{"a byte order mark on line 2 is kept", "{}\n\ufeff{}", []jsonlines.Line{{N: 1, Text: []byte("{}")}, {N: 2, Text: []byte("\ufeff{}")}}},
		{"a byte order mark after space is kept", " \ufeff{}", []jsonlines.Line{{N: 1, Text: []byte("\ufeff{}"), Indent: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := jsonlines.NewReader(strings.NewReader(tt.in))
			var got []jsonlines.Line
			for {
				l, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, l)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("lines %+v, want %+v", got, tt.want)
			}
			if _, err := r.Next(); !errors.Is(err, io.EOF) {
				t.Errorf("Next after the end = %v, want io.EOF", err)
			}
		})
	}
}

func TestReaderReturnsReadErrors(t *testing.T) {
	broken := errors.New("disk on fire")
	r := jsonlines.NewReader(io.MultiReader(strings.NewReader("{}\n"), iotest.ErrReader(broken)))
	if l, err := r.Next(); err != nil || string(l.Text) != "{}" {
		t.Fatalf("first line %q, %v", l.Text, err)
	}
	if _, err := r.Next(); !errors.Is(err, broken) {
		t.Errorf("Next = %v, want the read error", err)
	}
}

func TestSyntax(t *testing.T) {
	tests := []struct {
		name, text string
		indent     int
		want       string
	}{
		{"a word", "User: hi", 0, `not valid JSON: unexpected "U" at column 1`},
		{"after the indent", "User: hi", 3, `not valid JSON: unexpected "U" at column 4`},
		{"columns in characters", `{"é": x}`, 0, `not valid JSON: unexpected "x" at column 7`},
		{"a byte order mark", "\ufeff{}", 0, `not valid JSON: unexpected "\ufeff" at column 1`},
		{"cut off", `{"a": "b`, 0, "not valid JSON: the line ends inside a value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v json.RawMessage
			err := json.NewDecoder(strings.NewReader(tt.text)).Decode(&v)
			if err == nil {
				t.Fatalf("%q decodes", tt.text)
			}
			if got := (jsonlines.Line{N: 1, Text: []byte(tt.text), Indent: tt.indent}).Syntax(err); got != tt.want {
				t.Errorf("Syntax = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestValue: a line is its one JSON value, space around it allowed;
// anything after the value is refused with an error that says what and
// where, and is a *NotOneValueError matching ErrNotOneValue.
func TestValue(t *testing.T) {
	tests := []struct {
		name, text string
		indent     int
		want       string // the value, or else the error
		column     int    // the error's
		second     bool   // the error's
	}{
		{"an object", `{"id": "a", "text": "b"}`, 0, `{"id": "a", "text": "b"}`, 0, false},
		{"an array, any value", `[1, 2]`, 0, `[1, 2]`, 0, false},
		{"space after the value", "{\"a\": 1} \t\r ", 0, `{"a": 1}`, 0, false},
		{"a second value", `{"id":"a","text":"b"} {"id":"c","text":"d"}`, 0, "more than one JSON value on the line", 23, true},
		{"a second value, no space", `{}[]`, 0, "more than one JSON value on the line", 3, true},
		{"a number, then a second", `1 2`, 0, "more than one JSON value on the line", 3, true},
		{"a trailing ]", `{"collection":"x"}]`, 0, `not valid JSON: unexpected "]" at column 19, after the object`, 19, false},
		{"a trailing comma", `{"collection":"x"},`, 0, `not valid JSON: unexpected "," at column 19, after the object`, 19, false},
		{"a trailing ] after space, indented", `{"a": 1}  ]`, 2, `not valid JSON: unexpected "]" at column 13, after the object`, 13, false},
		{"columns in characters", `{"é": "ü"}]`, 0, `not valid JSON: unexpected "]" at column 11, after the object`, 11, false},
		{"trailing garbage", `{"id": "a"} // a comment`, 0, `not valid JSON: unexpected "/" at column 13, after the object`, 13, false},
		{"a word after an array", `[1] x`, 0, `not valid JSON: unexpected "x" at column 5, after the array`, 5, false},
		{"a letter after a number", `1x`, 0, `not valid JSON: unexpected "x" at column 2, after the number`, 2, false},
		{"a ] after null", `null]`, 0, `not valid JSON: unexpected "]" at column 5, after null`, 5, false},
		{"a second value cut off", `{} {"a": `, 0, `not valid JSON: unexpected "{" at column 4, after the object`, 4, false},
		{"not JSON", `User: hi`, 1, `not valid JSON: unexpected "U" at column 2`, 2, false},
		{"cut off", `{"a": "b`, 0, "not valid JSON: the line ends inside a value", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := (jsonlines.Line{N: 7, Text: []byte(tt.text), Indent: tt.indent}).Value()
			var one *jsonlines.NotOneValueError
			switch {
			case err == nil:
				if string(v) != tt.want {
					t.Errorf("Value = %s, want %s", v, tt.want)
				}
			case !errors.Is(err, jsonlines.ErrNotOneValue) || !errors.As(err, &one):
				t.Errorf("Value = %v; want a *NotOneValueError matching ErrNotOneValue", err)
			case err.Error() != tt.want || one.N != 7 || one.Column != tt.column || one.Second != tt.second:
				t.Errorf("Value = %q (line %d, column %d, second %v); want %q (line 7, column %d, second %v)",
					err, one.N, one.Column, one.Second, tt.want, tt.column, tt.second)
			}
		})
	}
}

func TestKind(t *testing.T) {
	for v, want := range map[string]string{
		`{"a": 1}`: "an object", `[]`: "an array", `"x"`: "a string", `-1.5e3`: "a number",
		`true`: "true", `false`: "false", `null`: "null", ` `: "nothing", ` [1] `: "an array",
	} {
		if got := jsonlines.Kind([]byte(v)); got != want {
			t.Errorf("Kind(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestAbsent(t *testing.T) {
	for v, want := range map[string]bool{"": true, "null": true, `""`: false, "0": false, "[]": false} {
		if got := jsonlines.Absent(json.RawMessage(v)); got != want {
			t.Errorf("Absent(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{strings.Repeat("é", 65), strings.Repeat("é", 65)},
		{strings.Repeat("é", 66), strings.Repeat("é", 64) + "…"},
		{strings.Repeat("e\u0301", 66), strings.Repeat("e\u0301", 64) + "…"},
		// CJK takes two columns a character: cut at the width of 64 ASCII.
		{strings.Repeat("漢", 32) + "a", strings.Repeat("漢", 32) + "a"},
		{strings.Repeat("漢", 33), strings.Repeat("漢", 32) + "…"},
		{"role: " + strings.Repeat("ユーザー", 10), "role: " + strings.Repeat("ユーザー", 7) + "ユ…"},
	} {
		if got := jsonlines.Clip(tt.in); got != tt.want {
			t.Errorf("Clip(%d runes) = %q, want %q", len([]rune(tt.in)), got, tt.want)
		} else if w := termtext.Width(got); w > 65 {
			t.Errorf("Clip(%d runes) = %q, %d columns wide, want at most 65", len([]rune(tt.in)), got, w)
		}
	}
}

// A limited reader reads the lines up to its limit, numbered as without
// one, longer than bufio's buffer too, and refuses the first longer one.
func TestLimitedReader(t *testing.T) {
	long := strings.Repeat("z", 10_000) // over bufio's 4096 bytes
	r := jsonlines.NewLimitedReader(strings.NewReader("a\n\n"+long+"\r\n"+long+"z\nb\n"), len(long))
	for _, want := range []struct {
		n    int
		text string
	}{{1, "a"}, {3, long}} {
		l, err := r.Next()
		if err != nil || l.N != want.n || string(l.Text) != want.text {
			t.Fatalf("Next() = line %d of %d bytes, %v; want line %d of %d bytes", l.N, len(l.Text), err, want.n, len(want.text))
		}
	}
	_, err := r.Next()
	var tooLong *jsonlines.LineTooLongError
	if !errors.Is(err, jsonlines.ErrLineTooLong) || !errors.As(err, &tooLong) || tooLong.N != 4 || err.Error() != "line 4 is longer than 10000 bytes" {
		t.Errorf("Next() of a line over the limit = %v; want line 4 is longer than 10000 bytes", err)
	}
}
