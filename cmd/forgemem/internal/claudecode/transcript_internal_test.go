package claudecode

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// referenceWindow is what readWindowAt must return, read the simple way:
// every line of the tail from its first whole line, forwards, each line
// over the limit skipped, each boundary emptying the window.
func referenceWindow(data []byte, lim limits) []memcore.Message {
	start := 0
	if int64(len(data)) > lim.tail {
		from := len(data) - int(lim.tail)
		start = len(data)
		if i := bytes.IndexByte(data[from-1:], '\n'); i >= 0 {
			start = from + i
		}
	}
	var msgs []memcore.Message
	for _, l := range bytes.Split(data[start:], []byte("\n")) {
		if int64(len(l)) > lim.line {
			continue
		}
		if raw := bytes.TrimRight(l, "\r\n"); len(raw) > 0 {
			msgs = appendLine(msgs, raw)
		}
	}
	return msgs
}

// show writes a window as "[{role content} …]", without the times.
func show(msgs []memcore.Message) string {
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = "{" + string(m.Role) + " " + m.Content + "}"
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// small are bounds small enough for short inputs to cross each of them.
func small(tail, line, chunk, buf int) limits {
	return limits{tail: int64(tail), line: int64(line), chunk: chunk, buf: max(16, buf)}
}

func TestReadWindowBounds(t *testing.T) {
	u := `{"type":"user","message":{"role":"user","content":"%s"}}`
	boundary := `{"type":"system","subtype":"compact_boundary"}`
	// padded is a user line of n bytes whose end, after any cut in its
	// leading spaces, is still a user line: a reader that parses the tail
	// of a long line as a line of its own finds TAIL-OF-A-LONG-LINE.
	padded := func(n int) string {
		l := fmt.Sprintf(u, "TAIL-OF-A-LONG-LINE")
		return strings.Repeat(" ", n-len(l)) + l
	}
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	tests := []struct {
		name string
		in   string
		lim  limits
		want string
	}{
		{"a line over the limit is skipped whole", lines(fmt.Sprintf(u, "one"), padded(300), fmt.Sprintf(u, "two")),
			small(1<<20, 199, 64, 16), "[{user one\n\ntwo}]"},
		{"a line at the limit is read", lines(fmt.Sprintf(u, "one"), padded(200)),
			small(1<<20, 200, 64, 16), "[{user one\n\nTAIL-OF-A-LONG-LINE}]"},
		{"a last line over the limit, without newline, is skipped whole", lines(fmt.Sprintf(u, "one")) + padded(300),
			small(1<<20, 100, 64, 16), "[{user one}]"},
		{"a boundary over the limit is no boundary", lines(fmt.Sprintf(u, "one"), boundary+strings.Repeat(" ", 100), fmt.Sprintf(u, "two")),
			small(1<<20, 80, 32, 16), "[{user one\n\ntwo}]"},
		{"the tail starts at its first whole line", lines(fmt.Sprintf(u, "one"), padded(120), fmt.Sprintf(u, "two")),
			small(100, 1000, 32, 16), "[{user two}]"},
		{"a boundary before the tail is not looked for", lines(boundary, fmt.Sprintf(u, "one"), fmt.Sprintf(u, "two")),
			small(len(fmt.Sprintf(u, "one"))+len(fmt.Sprintf(u, "two"))+2, 1000, 32, 16), "[{user one\n\ntwo}]"},
		{"a tail starting on a line's first byte keeps it", lines(fmt.Sprintf(u, "one"), fmt.Sprintf(u, "two")),
			small(len(fmt.Sprintf(u, "two"))+1, 1000, 32, 16), "[{user two}]"},
		{"markers in a long line are passed over", lines(boundary, fmt.Sprintf(u, "one"), fmt.Sprintf(u, strings.Repeat("compact_boundary ", 40))),
			small(1<<20, 1<<20, 64, 16), "[{user one\n\n" + strings.TrimSpace(strings.Repeat("compact_boundary ", 40)) + "}]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readWindowAt(strings.NewReader(tt.in), int64(len(tt.in)), tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			if show(got) != tt.want {
				t.Errorf("window = %q\nwant     %q", show(got), tt.want)
			}
			if ref := show(referenceWindow([]byte(tt.in), tt.lim)); ref != tt.want {
				t.Errorf("the reference reads %q", ref)
			}
		})
	}
}

// FuzzReadWindow checks the reader — backwards to the last boundary, then
// forwards line by line through a small buffer — against the reference
// on any input and any small bounds: no line is split, no boundary missed.
func FuzzReadWindow(f *testing.F) {
	u := `{"type":"user","message":{"role":"user","content":"one"}}`
	a := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"two"}]}}`
	b := `{"type":"system","subtype":"compact_boundary"}`
	for _, seed := range []string{
		"", u, u + "\n" + a + "\n", u + "\n" + b + "\n" + a, b + "\r\n" + u + "\r\n",
		"   " + u + "\n" + strings.Repeat(" ", 40) + a + "\n" + b,
		u + "\n{\"type\":\"system\",\"subtype\":\"compact\\u005fboundary\"}\n" + a + "\n",
		"compact_boundary\ncompact_boundary " + b + "\n" + u,
	} {
		f.Add([]byte(seed), uint16(64), uint16(48), uint8(16), uint8(16))
		f.Add([]byte(seed), uint16(1000), uint16(1000), uint8(200), uint8(64))
	}
	f.Fuzz(func(t *testing.T, data []byte, tail, line uint16, chunk, buf uint8) {
		lim := small(int(tail)+1, int(line), int(chunk)+1, int(buf))
		got, err := readWindowAt(bytes.NewReader(data), int64(len(data)), lim)
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceWindow(data, lim); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("limits %+v:\nwindow    %q\nreference %q", lim, got, want)
		}
	})
}
