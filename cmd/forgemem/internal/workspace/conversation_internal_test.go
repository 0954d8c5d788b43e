package workspace

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/jsonlines"
)

// A conversation longer than what is kept keeps its newest messages; one
// that fits is read whole.
func TestReadConversationKeepsTheNewest(t *testing.T) {
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, `{"role": "user", "content": "message %d, ten bytes of padding: %s"}`+"\n", i, strings.Repeat("x", 10))
	}
	size := len(`message 0, ten bytes of padding: xxxxxxxxxx`)
	tests := []struct {
		maxKept   int
		wantFirst string
		want      int
	}{
		{1 << 20, "message 0,", 10},
		{3 * size, "message 7,", 3},
		{3*size - 1, "message 8,", 2},
		{1, "message 9,", 1}, // the newest, whatever its size
	}
	for _, tt := range tests {
		msgs, err := readConversation(strings.NewReader(b.String()), 1<<10, tt.maxKept)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != tt.want || !strings.HasPrefix(msgs[0].Content, tt.wantFirst) || !strings.HasPrefix(msgs[len(msgs)-1].Content, "message 9,") {
			t.Errorf("kept %d bytes: %d messages from %q; want %d from %q to message 9", tt.maxKept, len(msgs), msgs[0].Content, tt.want, tt.wantFirst)
		}
	}
}

// endless is a stream of one byte that never ends, as /dev/zero is; read
// counts what was read of it.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.read += len(p)
	return len(p), nil
}

// A line longer than the limit is refused as soon as that much of it is
// read, naming the line: an endless stream without a newline ends.
func TestReadConversationRefusesALineTooLong(t *testing.T) {
	const limit = 64 << 10
	for _, tt := range []struct {
		name string
		in   func() (io.Reader, *endless)
		line string
	}{
		{"endless", func() (io.Reader, *endless) { e := &endless{}; return e, e }, "line 1 "},
		{"second line", func() (io.Reader, *endless) {
			e := &endless{}
			return io.MultiReader(strings.NewReader(`{"role": "user", "content": "hi"}`+"\n\n"), e), e
		}, "line 3 "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, e := tt.in()
			_, err := readConversation(r, limit, 1<<20)
			if !errors.Is(err, ErrBadConversation) || !errors.Is(err, jsonlines.ErrLineTooLong) || !strings.Contains(err.Error(), tt.line+"is longer than 64 KiB") {
				t.Fatalf("err = %v; want a bad conversation naming %q, too long", err, tt.line)
			}
			if e.read > 2*limit {
				t.Errorf("read %d bytes of a line refused at %d", e.read, limit)
			}
		})
	}
	// A line of exactly the limit is read.
	line := `{"role": "user", "content": "` + strings.Repeat("y", 100) + `"}`
	if _, err := readConversation(strings.NewReader(line+"\r\n"), len(line), 1<<20); err != nil {
		t.Errorf("a line of the limit: %v", err)
	}
}
