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

	"github.com/forgemem/forgemem/memcore"
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

// maxLineBytes bounds one transcript line: a longer one (a huge tool
// result) is skipped unread.
const maxLineBytes = 64 << 20

// isBoundary reports whether l is a compaction boundary.
func (l *line) isBoundary() bool { return l.Type == "system" && l.Subtype == "compact_boundary" }

// ReadWindow returns the conversation of the transcript at path since its
// last compaction: the user's and the agent's text, oldest first, adjacent
// messages of one role joined. See [ReadWindowAt].
func ReadWindow(path string) ([]memcore.Message, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the transcript: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading the transcript: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("the transcript %s is not a regular file", path)
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
// The transcript is not read whole: the last boundary is found by reading
// backwards from the end, and only what follows it is read, line by line.
func ReadWindowAt(r io.ReaderAt, size int64) ([]memcore.Message, error) {
	start, err := lastBoundaryEnd(r, size)
	if err != nil {
		return nil, fmt.Errorf("reading the transcript: %w", err)
	}
	var msgs []memcore.Message
	br := bufio.NewReaderSize(io.NewSectionReader(r, start, size-start), 64<<10)
	for {
		raw, err := readLine(br)
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

// readLine returns the next line of br without its newline; a line longer
// than maxLineBytes is skipped and returned empty.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) <= maxLineBytes {
			buf = append(buf, chunk...)
		} else {
			buf = buf[:0:0] // too long: dropped, the rest is read past
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
	return append(msgs, memcore.Message{Role: role, Content: text})
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

// backwardChunk is how much lastBoundaryEnd reads at a time.
const backwardChunk = 256 << 10

// lastBoundaryEnd returns the offset just past the last compaction
// boundary line of the first size bytes of r, or 0 when there is none. It
// reads backwards from the end, a chunk at a time, looking for the
// boundary's marker and parsing the line around each one it finds.
func lastBoundaryEnd(r io.ReaderAt, size int64) (int64, error) {
	buf := make([]byte, backwardChunk+len(boundaryMarker))
	for end := size; end > 0; {
		begin := max(0, end-backwardChunk)
		// Overlap the next chunk by the marker's length, so that a marker
		// across two chunks is found.
		n := int(min(size, end+int64(len(boundaryMarker))) - begin)
		if _, err := r.ReadAt(buf[:n], begin); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		chunk := buf[:n]
		for i := len(chunk); ; {
			j := bytes.LastIndex(chunk[:i], boundaryMarker)
			if j < 0 {
				break
			}
			i = j
			at := begin + int64(j)
			if at >= end && end != size { // found by the previous chunk already
				continue
			}
			lineStart, lineEnd, err := lineAround(r, size, at)
			if err != nil {
				return 0, err
			}
			if lineEnd-lineStart > maxLineBytes {
				continue
			}
			raw := make([]byte, lineEnd-lineStart)
			if _, err := r.ReadAt(raw, lineStart); err != nil && !errors.Is(err, io.EOF) {
				return 0, err
			}
			var l line
			if json.Unmarshal(bytes.TrimRight(raw, "\r\n"), &l) == nil && l.isBoundary() {
				return min(lineEnd+1, size), nil
			}
		}
		end = begin
	}
	return 0, nil
}

// lineAround returns the offsets of the start of the line holding offset
// at and of its newline (size when it has none).
func lineAround(r io.ReaderAt, size, at int64) (start, end int64, err error) {
	var buf [4096]byte
	start = 0
	for pos := at; pos > 0; {
		from := max(0, pos-int64(len(buf)))
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
	end = size
	for pos := at; pos < size; {
		n := int(min(int64(len(buf)), size-pos))
		if _, err := r.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, err
		}
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			end = pos + int64(i)
			break
		}
		pos += int64(n)
	}
	return start, end, nil
}
