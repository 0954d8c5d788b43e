package claudecode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// A Claude Code transcript is a JSON Lines file: one object per line with a
// "type" ("user", "assistant", "system", "summary", "queue-operation",
// "file-history-snapshot", …), "uuid", "parentUuid", "sessionId",
// "timestamp", "isSidechain" and "isMeta", and, for user and assistant
// lines, a "message" {"role", "content"} whose content is a string or an
// array of blocks: text, tool_use, tool_result, thinking, image. A system
// line {"subtype": "compact_boundary", "compactMetadata": {…}} marks a
// compaction: what follows it is a new context window, which starts with
// the compaction's summary as a user line marked "isCompactSummary".

// line is the part of a transcript line the window needs.
type line struct {
	Type             string   `json:"type"`
	Subtype          string   `json:"subtype"`
	IsSidechain      bool     `json:"isSidechain"`
	IsMeta           bool     `json:"isMeta"`
	IsCompactSummary bool     `json:"isCompactSummary"`
	Message          *message `json:"message"`
	// Timestamp is when the line was written (RFC 3339); a value that
	// does not parse is no time, not a bad line.
	Timestamp string `json:"timestamp"`
}

// message is a user or assistant line's message.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// block is one block of a message's content array.
type block struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// boundaryMarker is in every compaction boundary line.
var boundaryMarker = []byte("compact_boundary")

// The bounds of reading a transcript. A Claude Code transcript grows with
// every tool result of a session, and a repository or a mistake can put
// anything at its path: a hook reads a bounded part of it in bounded
// memory, whatever it holds.
const (
	// MaxTranscriptBytes bounds the size of a transcript [ReadWindow]
	// reads: a larger file is not read at all (an error wrapping
	// [ErrTranscriptTooLarge]).
	MaxTranscriptBytes = 1 << 30
	// MaxTailBytes bounds how much of a transcript is looked at: only its
	// last MaxTailBytes, from the first line that starts in them. The
	// window is capped far below this by the token budgets of capture and
	// retrieval, and what is newest is at the end.
	MaxTailBytes = 64 << 20
	// MaxLineBytes bounds one transcript line (without its newline): a
	// longer line (a huge tool result, a pasted image) is skipped whole,
	// never read in pieces.
	MaxLineBytes = 16 << 20
)

// ErrTranscriptTooLarge: the transcript is larger than
// [MaxTranscriptBytes]; it is not read.
var ErrTranscriptTooLarge = errors.New("the transcript is too large to read")

// limits are the bounds a window is read with: the constants above, or
// smaller ones in tests.
type limits struct {
	// tail and line are MaxTailBytes and MaxLineBytes.
	tail, line int64
	// chunk is how much the backward search for a boundary reads at a
	// time; buf the size of the forward reader's buffer.
	chunk, buf int
}

// defaultLimits are the bounds of [ReadWindowAt].
var defaultLimits = limits{tail: MaxTailBytes, line: MaxLineBytes, chunk: 256 << 10, buf: 64 << 10}

// isBoundary reports whether l is a compaction boundary.
func (l *line) isBoundary() bool { return l.Type == "system" && l.Subtype == "compact_boundary" }

// ReadWindow returns the conversation of the transcript at path since its
// last compaction: the user's and the agent's text, oldest first, adjacent
// messages of one role joined. See [ReadWindowAt].
//
// The file is opened only if it is a regular file, never through a
// symbolic link and never waiting on a FIFO or a device
// (memcore/atomicfile.Open; the errors wrap atomicfile.ErrSymlink and
// atomicfile.ErrNotRegular); a missing one is an error wrapping
// fs.ErrNotExist, and one larger than [MaxTranscriptBytes] one wrapping
// [ErrTranscriptTooLarge].
func ReadWindow(path string) ([]memcore.Message, error) {
	f, err := atomicfile.Open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the transcript: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading the transcript: %w", err)
	}
	if info.Size() > MaxTranscriptBytes {
		return nil, fmt.Errorf("%w: %s holds %d bytes, more than %d", ErrTranscriptTooLarge, path, info.Size(), int64(MaxTranscriptBytes))
	}
	return ReadWindowAt(f, info.Size())
}

// ReadWindowAt returns the conversation of the transcript held in the
// first size bytes of r since its last compaction boundary: the text
// blocks of user and assistant lines, oldest first, with adjacent messages
// of one role joined by a blank line. Everything else is left out: tool
// calls, tool results, thinking and images; lines marked isMeta (notes
// Claude Code adds) or isSidechain (sub-agents' conversations); the
// compaction's summary (not the user's words); slash-command invocations
// and their output; system, summary and other lines; and lines that do not
// parse (a line being written, a corrupt one), which are skipped.
//
// The transcript is not read whole: only its last [MaxTailBytes] are
// looked at, from the first line that starts in them; the last boundary
// among them is found by reading backwards from the end, and only what
// follows it is read, line by line. A line longer than [MaxLineBytes] is
// skipped whole.
func ReadWindowAt(r io.ReaderAt, size int64) ([]memcore.Message, error) {
	return readWindowAt(r, size, defaultLimits)
}

// readWindowAt is ReadWindowAt with the bounds lim.
func readWindowAt(r io.ReaderAt, size int64, lim limits) ([]memcore.Message, error) {
	first, err := tailStart(r, size, lim.tail)
	if err != nil {
		return nil, fmt.Errorf("reading the transcript: %w", err)
	}
	start, err := lastBoundaryEnd(r, size, first, lim)
	if err != nil {
		return nil, fmt.Errorf("reading the transcript: %w", err)
	}
	var msgs []memcore.Message
	br := bufio.NewReaderSize(io.NewSectionReader(r, start, size-start), lim.buf)
	for {
		raw, err := readLine(br, lim.line)
		if len(raw) > 0 {
			msgs = appendLine(msgs, raw)
		}
		if errors.Is(err, io.EOF) {
			return msgs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the transcript: %w", err)
		}
	}
}

// tailStart returns the offset of the first line that starts in the last
// tail bytes of the first size bytes of r: 0 when they are all there, size
// when no line starts in them.
func tailStart(r io.ReaderAt, size, tail int64) (int64, error) {
	if size <= tail {
		return 0, nil
	}
	// The line starts after the first newline at or after from-1: at from
	// itself when the byte before it ends a line.
	var buf [4096]byte
	for pos := size - tail - 1; pos < size; {
		n := int(min(int64(len(buf)), size-pos))
		if _, err := r.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
		pos += int64(n)
	}
	return size, nil
}

// readLine returns the next line of br without its line ending. A line
// whose bytes before its newline are more than limit is read past and
// returned empty: none of it is ever returned as a line.
func readLine(br *bufio.Reader, limit int64) ([]byte, error) {
	var buf []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		content := int64(len(chunk))
		if err == nil {
			content-- // the newline
		}
		if !over && int64(len(buf))+content <= limit {
			buf = append(buf, chunk...)
		} else {
			over, buf = true, nil // too long: dropped, and the rest of it too
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(buf, "\r\n"), err
	}
}

// appendLine adds what raw, one transcript line, says to the window: a
// compaction boundary empties it, and a user or assistant line adds its
// text.
func appendLine(msgs []memcore.Message, raw []byte) []memcore.Message {
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		return msgs
	}
	if l.isBoundary() {
		return msgs[:0]
	}
	if (l.Type != "user" && l.Type != "assistant") || l.IsMeta || l.IsSidechain || l.IsCompactSummary || l.Message == nil {
		return msgs
	}
	role := memcore.RoleUser
	if l.Type == "assistant" {
		role = memcore.RoleAssistant
	}
	text := strings.TrimSpace(contentText(l.Message.Content))
	if text == "" || role == memcore.RoleUser && isCommandText(text) {
		return msgs
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == role {
		msgs[n-1].Content += "\n\n" + text
		return msgs
	}
	return append(msgs, memcore.Message{Role: role, Content: text, At: l.time()})
}

// time is when the line was written, the zero time when it does not say.
func (l *line) time() time.Time {
	t, err := time.Parse(time.RFC3339Nano, l.Timestamp)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// contentText is the text of a message's content: the string, or the text
// blocks of the array joined by blank lines.
func contentText(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return ""
		}
		return s
	}
	var blocks []block
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, strings.TrimSpace(b.Text))
		}
	}
	return strings.Join(parts, "\n\n")
}

// isCommandText reports whether a user line's text is a slash command's
// invocation or output, which Claude Code records as user lines.
func isCommandText(s string) bool {
	for _, p := range []string{"<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// lastBoundaryEnd returns the offset just past the last compaction
// boundary line of r between first (where a line starts) and size, or
// first when there is none. It reads backwards from the end, lim.chunk
// bytes at a time, looking for the boundary's marker and parsing the line
// around each one it finds; the other markers of a line that is no
// boundary are passed over.
func lastBoundaryEnd(r io.ReaderAt, size, first int64, lim limits) (int64, error) {
	buf := make([]byte, lim.chunk+len(boundaryMarker))
	for end := size; end > first; {
		begin := max(first, end-int64(lim.chunk))
		// Overlap the next chunk by the marker's length, so that a marker
		// across two chunks is found.
		n := int(min(size, end+int64(len(boundaryMarker))) - begin)
		if _, err := r.ReadAt(buf[:n], begin); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		next := begin
		for i := n; ; {
			j := bytes.LastIndex(buf[:i], boundaryMarker)
			if j < 0 {
				break
			}
			i = j
			at := begin + int64(j)
			if at >= end && end != size { // in a line looked at already
				continue
			}
			lineStart, lineEnd, err := lineAround(r, first, size, at, lim.line)
			if err != nil {
				return 0, err
			}
			ok, err := isBoundaryLine(r, lineStart, lineEnd, lim.line)
			if err != nil || ok {
				return min(lineEnd+1, size), err
			}
			if lineStart <= begin {
				next = lineStart // the rest of the chunk is in this line
				break
			}
			i = int(lineStart - begin)
		}
		end = next
	}
	return first, nil
}

// isBoundaryLine reports whether the line between start and end (its
// newline) is a compaction boundary no longer than limit.
func isBoundaryLine(r io.ReaderAt, start, end, limit int64) (bool, error) {
	if end-start > limit {
		return false, nil
	}
	raw := make([]byte, end-start)
	if _, err := r.ReadAt(raw, start); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	var l line
	return json.Unmarshal(bytes.TrimRight(raw, "\r\n"), &l) == nil && l.isBoundary(), nil
}

// lineAround returns the offsets of the start of the line holding offset
// at, looking back no further than first (where a line starts), and of its
// newline (size when it has none). It looks forward no further than limit
// bytes past the line's start: a line longer than that ends, for the
// caller, past its limit.
func lineAround(r io.ReaderAt, first, size, at, limit int64) (start, end int64, err error) {
	var buf [4096]byte
	start = first
	for pos := at; pos > first; {
		from := max(first, pos-int64(len(buf)))
		n := int(pos - from)
		if _, err := r.ReadAt(buf[:n], from); err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			start = from + int64(i) + 1
			break
		}
		pos = from
	}
	stop := min(size, start+limit+1) // a line reaching it is too long
	for pos := at; pos < stop; {
		n := int(min(int64(len(buf)), stop-pos))
		if _, err := r.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, err
		}
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return start, pos + int64(i), nil
		}
		pos += int64(n)
	}
	return start, max(stop, at), nil
}
