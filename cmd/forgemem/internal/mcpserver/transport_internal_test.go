package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The frame reader returns each line whole without its line end, however
// the input is split into reads, and drops a line over its limit without
// holding it.
func TestFrameReader(t *testing.T) {
	const max = 8
	tests := []struct {
		name  string
		input string
		// want are the lines read, "!" for a line over the limit.
		want []string
	}{
		{"lines", "a\nbb\n", []string{"a", "bb"}},
		{"CRLF", "a\r\nbb\r\n", []string{"a", "bb"}},
		{"a last line without newline", "a\nbb", []string{"a", "bb"}},
		{"empty lines", "\n\r\n\n", []string{"", "", ""}},
		{"at the limit", "12345678\n12345678\r\n", []string{"12345678", "12345678"}},
		{"over the limit", "123456789\nok\n", []string{"!", "ok"}},
		{"over the limit with CRLF", "123456789\r\nok\n", []string{"!", "ok"}},
		{"far over the limit", strings.Repeat("x", 1<<20) + "\nok\n" + strings.Repeat("y", 1<<20), []string{"!", "ok", "!"}},
		{"nothing", "", nil},
	}
	for _, tt := range tests {
		for _, r := range []struct {
			name string
			r    func(string) io.Reader
		}{
			{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
			{"a byte at a time", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
			{"half at a time", func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) }},
		} {
			fr := newFrameReader(r.r(tt.input), max)
			var got []string
			for {
				line, tooLong, err := fr.next()
				switch {
				case tooLong:
					got = append(got, "!")
				case line != nil:
					got = append(got, string(line))
				}
				if len(fr.buf) > max+2 {
					t.Errorf("%s, %s: holds %d bytes, more than the limit", tt.name, r.name, len(fr.buf))
				}
				if err != nil {
					if !errors.Is(err, io.EOF) {
						t.Errorf("%s, %s: %v", tt.name, r.name, err)
					}
					break
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("%s, %s: read %q, want %q", tt.name, r.name, got, tt.want)
			}
		}
	}
}

// Whatever a line holds, parseFrame returns a message the SDK can encode,
// or a parse error or invalid request whose answer is one JSON-RPC error
// line; it never panics.
func FuzzParseFrame(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"memory_list","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`,
		`5`, ``, "\xff", `{"jsonrpc":"2.0","id":1,"method":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, bad := parseFrame(line)
		if (msg == nil) == (bad == nil) {
			t.Fatalf("parseFrame(%q) = %v, %v: want a message or an error", line, msg, bad)
		}
		if bad != nil {
			if bad.code != jsonrpc.CodeParseError && bad.code != jsonrpc.CodeInvalidRequest {
				t.Fatalf("parseFrame(%q): code %d", line, bad.code)
			}
			data, err := bad.response()
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code int64 `json:"code"`
				} `json:"error"`
			}
			if err != nil || bytes.ContainsRune(data, '\n') || json.Unmarshal(data, &resp) != nil || resp.JSONRPC != "2.0" || resp.ID == nil {
				t.Fatalf("parseFrame(%q): the answer %s, %v", line, data, err)
			}
			return
		}
		if _, err := jsonrpc.EncodeMessage(msg); err != nil {
			t.Fatalf("parseFrame(%q): a message the SDK cannot encode: %v", line, err)
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "" {
			t.Fatalf("parseFrame(%q): a request without a method", line)
		}
	})
}

// gatedWriter holds every Write until open is closed.
type gatedWriter struct {
	open chan struct{}
	w    io.Writer
}

func (g gatedWriter) Write(p []byte) (int, error) {
	<-g.open
	return g.w.Write(p)
}

// handHook is a Transport whose connection reports each call it hands the
// SDK to onHand, and its waiting for room to onFull.
type handHook struct {
	*Transport
	onHand func(pending int)
	onFull func()
}

func (h handHook) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := h.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cc := c.(*conn)
	cc.mu.Lock()
	cc.onHand, cc.onFull = h.onHand, h.onFull
	cc.mu.Unlock()
	return c, nil
}

// A client that sends calls and reads no answer holds the server to
// maxPending calls in the SDK's hands: the transport reads no more until
// answers are written. The answers are held until the reader waits for
// room (or, were there no bound, until every call is pending); then every
// call is answered.
func TestTransportBoundsCallsInFlight(t *testing.T) {
	const calls = maxPending + 36
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	gate := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open)
	var peak atomic.Int64
	tr := handHook{
		Transport: &Transport{In: inR, Out: gatedWriter{gate, outW}},
		onHand: func(pending int) {
			if int64(pending) > peak.Load() {
				peak.Store(int64(pending))
			}
			if pending == calls {
				open()
			}
		},
		onFull: open, // the reader waits for room: let the answers out
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- server.Run(ctx, tr) }()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		<-served
	})
	go func() {
		for i := range calls {
			// Pings may come before initialize; each is a call to answer.
			if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i); err != nil {
				return
			}
		}
	}()
	lines := bufio.NewScanner(outR)
	answered := 0
	for answered < calls && lines.Scan() {
		answered++
	}
	if answered != calls {
		t.Fatalf("%d calls answered, want %d", answered, calls)
	}
	if p := peak.Load(); p != maxPending {
		t.Errorf("%d calls were pending at once, want %d", p, maxPending)
	}
}
