// Package mcptest holds what the MCP server's tests and the command's
// end-to-end tests share: the malformed frames a client may send and the
// JSON-RPC error each must be answered with. Only tests import it.
package mcptest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Frame is a line a client sends and the JSON-RPC error it must be
// answered with.
type Frame struct {
	Name  string
	Bytes []byte
	Code  int
	// ID is the answer's id as JSON: "null" when the frame's id could not
	// be read.
	ID string
}

// MalformedFrames reads a file of malformed frames
// (internal/mcpserver/testdata/malformed_frames.txt): one a line, as the
// error code, the answer's id and the frame as a Go string literal,
// separated by spaces; blank lines and lines starting with # are skipped.
func MalformedFrames(t testing.TB, path string) []Frame {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var frames []Frame
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		code, rest, _ := strings.Cut(line, " ")
		id, lit, _ := strings.Cut(rest, " ")
		c, err1 := strconv.Atoi(code)
		frame, err2 := strconv.Unquote(lit)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s line %d: %q", path, i+1, line)
		}
		frames = append(frames, Frame{Name: fmt.Sprintf("line %d %s", i+1, lit), Bytes: []byte(frame), Code: c, ID: id})
	}
	return frames
}
