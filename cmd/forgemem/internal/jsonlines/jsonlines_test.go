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
	} {
		if got := jsonlines.Clip(tt.in); got != tt.want {
			t.Errorf("Clip(%d runes) = %q, want %q", len([]rune(tt.in)), got, tt.want)
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
