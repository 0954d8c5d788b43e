package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/mcpserver"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/mcpserver/mcptest"
)

// generatedFrames are malformed frames too large or deep to write in a
// file: nesting past what a JSON decoder takes, and lines over the
// transport's limit of maxFrame bytes.
func generatedFrames(maxFrame int) []mcptest.Frame {
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	deepParams := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + strings.Repeat("[", 12000) + strings.Repeat("]", 12000) + "}}"
	long := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", maxFrame) + `"}}`
	return []mcptest.Frame{
		{Name: "an array nested 20,000 deep", Bytes: []byte(deep), Code: -32700, ID: "null"},
		{Name: "params nested 12,000 deep", Bytes: []byte(deepParams), Code: -32700, ID: "null"},
		{Name: "a message over the limit", Bytes: []byte(long), Code: -32600, ID: "null"},
		{Name: "garbage over the limit", Bytes: bytes.Repeat([]byte{0xff, '{', '"'}, maxFrame), Code: -32600, ID: "null"},
	}
}

// hangGuard turns a server that stopped answering into a failure rather
// than a test that runs until go test's timeout; it is no measure of
// speed.
const hangGuard = 2 * time.Minute

// rawClient talks to a server over its Transport, line by line.
type rawClient struct {
	t  *testing.T
	in io.WriteCloser
	// answers are the server's lines, read as they come: a pipe holds no
	// line, and the server writes a refusal before it reads on.
	answers chan []byte
	next    int
}

// answer is a JSON-RPC answer as the test reads it.
type answer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Method string          `json:"method"`
	Error  *answerError    `json:"error"`
}

type answerError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (a answer) String() string {
	if a.Error != nil {
		return fmt.Sprintf("id %s: error %d %q", a.ID, a.Error.Code, clipName(a.Error.Message))
	}
	return fmt.Sprintf("id %s: %s", a.ID, clipName(string(a.Result)))
}

// newRawClient serves a workspace on a Transport whose lines are at most
// maxFrame bytes, and initializes a session as a client would.
func newRawClient(t *testing.T, maxFrame int) *rawClient {
	t.Helper()
	ws, _ := newWorkspace(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- mcpserver.New(ws, mcpserver.Options{Version: "test"}).Run(ctx, &mcpserver.Transport{In: inR, Out: outW, MaxFrame: maxFrame})
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		<-served
	})
	c := &rawClient{t: t, in: inW, answers: make(chan []byte, 1024), next: 1000}
	go func() {
		defer close(c.answers)
		lines := bufio.NewScanner(outR)
		lines.Buffer(make([]byte, 1<<20), 16<<20)
		for lines.Scan() {
			c.answers <- bytes.Clone(lines.Bytes())
		}
	}()
	c.send([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	if a := c.read(); string(a.ID) != "1" || a.Error != nil {
		t.Fatalf("initialize: %+v", a)
	}
	c.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return c
}

func (c *rawClient) send(frame []byte) {
	c.t.Helper()
	if _, err := c.in.Write(append(frame, '\n')); err != nil {
		c.t.Fatalf("writing a frame: %v", err)
	}
}

func (c *rawClient) read() answer {
	c.t.Helper()
	var line []byte
	var ok bool
	select {
	case line, ok = <-c.answers:
	case <-time.After(hangGuard):
		c.t.Fatalf("the server answered nothing for %v", hangGuard)
	}
	if !ok {
		c.t.Fatal("the server's output ended")
	}
	var a answer
	if err := json.Unmarshal(line, &a); err != nil {
		c.t.Fatalf("an answer that is not JSON: %v: %s", err, line)
	}
	return a
}

// ping sends a ping and returns every answer read until its own, which
// shows that the server still serves.
func (c *rawClient) ping() []answer {
	c.t.Helper()
	c.next++
	id := strconv.Itoa(c.next)
	c.send([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`))
	var before []answer
	for {
		a := c.read()
		if a.Method != "" {
			continue // a notification, such as tools/list_changed
		}
		if string(a.ID) == id {
			if a.Error != nil {
				c.t.Fatalf("ping %s: %+v", id, a.Error)
			}
			return before
		}
		before = append(before, a)
	}
}

// A malformed frame — not UTF-8, not JSON, empty, a bare value, a batch,
// an id that is not a string or an integer, a message of the wrong shape,
// nesting too deep, a line over the limit — is answered with a JSON-RPC
// error, with its id when it could be read, and the server serves the next
// frame.
func TestTransportSurvivesMalformedFrames(t *testing.T) {
	const maxFrame = 64 << 10
	c := newRawClient(t, maxFrame)
	for _, tc := range append(mcptest.MalformedFrames(t, "testdata/malformed_frames.txt"), generatedFrames(maxFrame)...) {
		c.send(tc.Bytes)
		got := c.ping()
		if len(got) != 1 || got[0].Error == nil || got[0].Error.Code != tc.Code || string(got[0].ID) != tc.ID {
			t.Errorf("%s: answered %+v; want one error %d with id %s", clipName(tc.Name), got, tc.Code, tc.ID)
			continue
		}
		if len(got[0].Error.Message) > 1000 {
			t.Errorf("%s: an error message of %d bytes", clipName(tc.Name), len(got[0].Error.Message))
		}
	}
}

// Frames of the right shape that the SDK refuses or ignores — an unknown
// method, a response to nothing, a notification it does not know, params
// it cannot decode — get the SDK's answer, or none, and the server serves
// on. (The SDK answers an unknown method and params it cannot decode with
// error code 0, not -32601 and -32602.)
func TestTransportSurvivesWellFormedNonsense(t *testing.T) {
	c := newRawClient(t, 0)
	const (
		isError  = "an error"
		isResult = "a result"
		isNone   = "no answer"
	)
	tests := []struct {
		frame string
		// want is the answer to id 77.
		want string
	}{
		{`{"jsonrpc":"2.0","id":77,"method":"no/such/method"}`, isError},
		{`{"jsonrpc":"2.0","id":77,"method":"tools/call"}`, isError},
		{`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":null}`, isError},
		{`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":[1]}`, isError},
		{`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":5}}`, isError},
		{`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"memory_nope"}}`, isError},
		{`{"jsonrpc":"2.0","id":77,"method":"tools/list","params":{"cursor":{}}}`, isError},
		{`{"jsonrpc":"2.0","id":77,"method":"initialize","params":{"protocolVersion":{}}}`, isError},
		{`{"jsonrpc":"2.0","id":77,"method":"notifications/cancelled","params":{"requestId":1}}`, isError},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"memory_list"}}`, isNone},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}`, isNone},
		{`{"jsonrpc":"2.0","method":"no/such/notification"}`, isNone},
		{`{"jsonrpc":"2.0","id":77,"result":{}}`, isNone},
		{`{"jsonrpc":"2.0","id":77,"error":{"code":-1,"message":"no"}}`, isNone},
		{`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"memory_list","arguments":null}}`, isResult},
		{`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"memory_list","arguments":[1]}}`, isResult},
		{`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"memory_show","arguments":{"id":{}}}}`, isResult},
		{`{"jsonrpc":"2.0","id":"77","method":"ping","params":{"_meta":{"progressToken":{}}}}`, isResult},
	}
	for _, tt := range tests {
		c.send([]byte(tt.frame))
		var got []answer
		if tt.want != isNone {
			got = append(got, c.awaitID("77")) // answered in its own time
		}
		got = append(got, c.ping()...)
		ok := false
		switch tt.want {
		case isNone:
			ok = len(got) == 0
		case isResult:
			ok = len(got) == 1 && got[0].Error == nil && got[0].Result != nil
		case isError:
			ok = len(got) == 1 && got[0].Error != nil
		}
		if !ok {
			t.Errorf("%s: answered %v; want %s", tt.frame, got, tt.want)
		}
	}
}

// awaitID reads answers until the one with id, and returns it; any other
// answer fails the test.
func (c *rawClient) awaitID(id string) answer {
	c.t.Helper()
	for {
		a := c.read()
		if a.Method != "" {
			continue
		}
		if strings.Trim(string(a.ID), `"`) == id {
			return a
		}
		c.t.Errorf("an answer %v while waiting for id %s", a, id)
	}
}

func clipName(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
