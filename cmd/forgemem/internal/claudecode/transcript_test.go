package claudecode_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/golden"
	"github.com/forgemem/forgemem/memcore"
)

// markers are in the fixture transcript only where nothing may be kept:
// before the last compaction, in the compaction's summary, meta lines,
// slash commands and their output, thinking, tool calls and results, a
// sidechain, a queued prompt, a truncated line and a system line.
var markers = []string{
	"BEFORE-COMPACTION-MARKER", "COMPACT-SUMMARY-MARKER", "META-MARKER", "COMMAND-OUTPUT-MARKER", "/cost",
	"THINKING-MARKER", "TOOL-INPUT-MARKER", "TOOL-OUTPUT-MARKER", "TOOL-ERROR-MARKER", "SIDECHAIN-MARKER",
	"QUEUE-MARKER", "TRUNCATED-MARKER", "SYSTEM-MARKER", "iVBORw0KGgo",
}

// The fixture, a Claude Code transcript with every kind of line, gives the
// user's and the agent's text since the last compaction and nothing else
// (testdata/window.golden.json).
func TestReadWindowOfTheFixture(t *testing.T) {
	msgs, err := claudecode.ReadWindow(filepath.Join("testdata", "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(msgs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range markers {
		if bytes.Contains(data, []byte(m)) {
			t.Errorf("the window holds %s", m)
		}
	}
	golden.Check(t, filepath.Join("testdata", "window.golden.json"), append(data, '\n'))
}

// transcript builds a transcript from lines, as JSON objects or raw text.
func transcript(lines ...any) string {
	var b strings.Builder
	for _, l := range lines {
		switch v := l.(type) {
		case string:
			b.WriteString(v)
		default:
			data, err := json.Marshal(v)
			if err != nil {
				panic(err)
			}
			b.Write(data)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func user(content any) map[string]any {
	return map[string]any{"type": "user", "isSidechain": false, "message": map[string]any{"role": "user", "content": content}}
}

func assistant(content any) map[string]any {
	return map[string]any{"type": "assistant", "isSidechain": false, "message": map[string]any{"role": "assistant", "content": content}}
}

func boundary() map[string]any {
	return map[string]any{"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
		"compactMetadata": map[string]any{"trigger": "manual", "preTokens": 1200}}
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func TestReadWindow(t *testing.T) {
	u := func(s string) memcore.Message { return memcore.Message{Role: memcore.RoleUser, Content: s} }
	a := func(s string) memcore.Message { return memcore.Message{Role: memcore.RoleAssistant, Content: s} }
	tests := []struct {
		name string
		in   string
		want []memcore.Message
	}{
		{"empty", "", nil},
		{"no boundary: the whole conversation",
			transcript(user("one"), assistant([]any{text("two")}), user("three")),
			[]memcore.Message{u("one"), a("two"), u("three")}},
		{"after the last of two boundaries",
			transcript(user("one"), boundary(), user("two"), boundary(), user("three"), assistant([]any{text("four")})),
			[]memcore.Message{u("three"), a("four")}},
		{"a boundary as the last line: nothing yet",
			transcript(user("one"), assistant([]any{text("two")}), boundary()),
			nil},
		{"the marker in the user's words is no boundary",
			transcript(boundary(), user(`what does "subtype":"compact_boundary" mean?`), assistant([]any{text("a compaction")})),
			[]memcore.Message{u(`what does "subtype":"compact_boundary" mean?`), a("a compaction")}},
		{"a boundary written with spaces is found by the line reader",
			transcript(user("one"), `{"type": "system", "subtype": "compact_boundary"}`, user("two")),
			[]memcore.Message{u("two")}},
		{"adjacent lines of one role are joined",
			transcript(user("one"), assistant([]any{text("two")}), assistant([]any{map[string]any{"type": "tool_use", "id": "t", "name": "Bash", "input": map[string]any{}}}),
				user([]any{map[string]any{"type": "tool_result", "tool_use_id": "t", "content": "out"}}), assistant([]any{text("three")})),
			[]memcore.Message{u("one"), a("two\n\nthree")}},
		{"lines that do not parse are skipped",
			transcript(user("one"), `{"type":"user","message":{`, "not json at all", `[1,2]`, `{"type":"user","message":"text"}`, user("two")),
			[]memcore.Message{u("one\n\ntwo")}},
		{"CRLF line endings and a last line without newline",
			strings.ReplaceAll(transcript(user("one"), assistant("two")), "\n", "\r\n") + `{"type":"user","message":{"role":"user","content":"three"}}`,
			[]memcore.Message{u("one"), a("two"), u("three")}},
		{"blank text blocks and whitespace are dropped",
			transcript(user([]any{text("  "), text(" one ")}), assistant("   ")),
			[]memcore.Message{u("one")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := claudecode.ReadWindowAt(strings.NewReader(tt.in), int64(len(tt.in)))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("window = %q\nwant     %q", got, tt.want)
			}
		})
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// A long session's transcript is not read whole: what precedes the last
// compaction boundary is skipped, whatever it holds — tool results far
// larger than the read buffer, boundary markers inside tool output.
func TestReadWindowReadsOnlyAfterTheLastBoundary(t *testing.T) {
	var b strings.Builder
	big := strings.Repeat("x", 1<<20) // tool results of 1 MiB
	for i := range 6 {
		b.WriteString(transcript(user(fmt.Sprint("old prompt ", i)),
			user([]any{map[string]any{"type": "tool_result", "tool_use_id": "t", "content": big + " compact_boundary"}})))
		if i%3 == 0 {
			b.WriteString(transcript(boundary()))
		}
	}
	b.WriteString(transcript(boundary(), user("the newest prompt"), assistant([]any{text("the newest reply")}),
		user([]any{map[string]any{"type": "tool_result", "tool_use_id": "t", "content": "compact_boundary in tool output"}})))
	data := b.String()
	r := &countingReader{r: strings.NewReader(data)}
	got, err := claudecode.ReadWindowAt(r, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	want := "[{user the newest prompt} {assistant the newest reply}]"
	if show(got) != want {
		t.Errorf("window = %v, want %s", show(got), want)
	}
	if read := r.n.Load(); read > int64(len(data))/20 {
		t.Errorf("read %d bytes of a %d-byte transcript; want only the part after the last boundary", read, len(data))
	}
}

// A transcript that is still being written is read up to the size given:
// a half-written last line is skipped.
func TestReadWindowOfAGrowingTranscript(t *testing.T) {
	done := transcript(user("one"), assistant([]any{text("two")}))
	partial := `{"type":"user","message":{"role":"user","content":"thr`
	data := done + partial
	got, err := claudecode.ReadWindowAt(strings.NewReader(data+`ee"}}`+"\n"), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if show(got) != "[{user one} {assistant two}]" {
		t.Errorf("window = %v", show(got))
	}
}

func TestReadWindowOfAMissingFile(t *testing.T) {
	_, err := claudecode.ReadWindow(filepath.Join(t.TempDir(), "gone.jsonl"))
	if !os.IsNotExist(err) && !strings.Contains(fmt.Sprint(err), "no such file") {
		t.Errorf("err = %v, want a missing file", err)
	}
}

// A line longer than MaxLineBytes is skipped whole: no piece of it is
// read as a line, even a piece that parses as one.
func TestReadWindowSkipsAnOversizedLineWhole(t *testing.T) {
	tail, _ := json.Marshal(user("TAIL-OF-AN-OVERSIZED-LINE"))
	var b strings.Builder
	b.WriteString(transcript(user("before")))
	// Leading spaces are JSON white space: whatever is cut off the front
	// of this line, the rest parses as a user line.
	b.WriteString(strings.Repeat(" ", claudecode.MaxLineBytes+(64<<10)))
	b.Write(tail)
	b.WriteString("\n")
	b.WriteString(transcript(assistant("after")))
	data := b.String()
	got, err := claudecode.ReadWindowAt(strings.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if show(got) != "[{user before} {assistant after}]" {
		t.Errorf("window = %q", got)
	}
}

// show writes a window as "[{role content} …]", without the times.
func show(msgs []memcore.Message) string {
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = "{" + string(m.Role) + " " + m.Content + "}"
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Each message carries the time of its transcript line (the first line of
// messages joined), and a line without a readable time gives none.
func TestReadWindowReadsTimes(t *testing.T) {
	in := strings.Join([]string{
		`{"type":"user","timestamp":"2025-03-10T10:03:12.530Z","message":{"role":"user","content":"one"}}`,
		`{"type":"assistant","timestamp":"2025-03-10T10:03:15Z","message":{"role":"assistant","content":[{"type":"text","text":"two"}]}}`,
		`{"type":"assistant","timestamp":"2025-03-10T10:04:00Z","message":{"role":"assistant","content":[{"type":"text","text":"three"}]}}`,
		`{"type":"user","timestamp":"yesterday","message":{"role":"user","content":"four"}}`,
	}, "\n")
	got, err := claudecode.ReadWindowAt(strings.NewReader(in), int64(len(in)))
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Time{time.Date(2025, 3, 10, 10, 3, 12, 530e6, time.UTC), time.Date(2025, 3, 10, 10, 3, 15, 0, time.UTC), {}}
	if len(got) != len(want) {
		t.Fatalf("window %v, want %d messages", show(got), len(want))
	}
	for i, m := range got {
		if !m.At.Equal(want[i]) {
			t.Errorf("message %d (%q) at %v, want %v", i, m.Content, m.At, want[i])
		}
	}
}
