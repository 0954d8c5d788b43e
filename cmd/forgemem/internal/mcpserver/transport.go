package mcpserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxFrame is the longest message a [Transport] reads when its
// MaxFrame is 0: 1 MiB, above any call a model makes (the largest
// argument, a memory's content, is capped at 65,536 characters by its
// schema, and JSON takes at most 12 bytes a character, escaped as a
// surrogate pair: 768 KiB), and small enough that the calls a client can
// have waiting hold little memory.
const DefaultMaxFrame = 1 << 20

// maxPending is how many calls a Transport hands the SDK before their
// answers are written: past it, it reads no more until one is answered, so
// a client that sends calls faster than it reads the answers (or reads
// none) holds the server to maxPending calls and their answers. The
// server's own bound on tool calls (8 running, 32 waiting) is below it.
const maxPending = 64

// drainTimeout bounds how long the end of the input waits for the answers
// of the calls still running, so that a client that writes its requests
// and closes its end gets them, and a call that never ends does not keep
// the server alive.
const drainTimeout = 30 * time.Second

// Transport is the MCP transport of `forgemem mcp`: newline-delimited
// JSON-RPC messages over a byte stream (stdin and stdout), like the SDK's
// stdio transport, but one that a broken or hostile client cannot stop.
// Every line is read within MaxFrame bytes (a longer one is discarded as it
// streams, never held) and checked before the SDK sees it: a line that is
// not one JSON-RPC message — not UTF-8, not JSON, empty, a bare value, a
// batch, an id that is an object, an id already in use — is answered with a
// JSON-RPC error (parse error -32700 or invalid request -32600, with the id
// when it could be read, null otherwise) and the next line is served.
//
// At most 64 calls are in the SDK's hands unanswered; past that the
// transport reads on only as answers are written. At the end of the input
// the calls still running are answered (within 30 seconds) before the
// session ends.
type Transport struct {
	// In is the client's stream, one message per line. Connect reads it in
	// a goroutine of its own, which stays blocked in In.Read if In never
	// returns (as the SDK's stdio transport does); In is never closed.
	In io.Reader
	// Out receives the server's messages, one per line.
	Out io.Writer
	// MaxFrame is the longest line read, in bytes, without its line end;
	// 0 means DefaultMaxFrame.
	MaxFrame int
	// Logger receives a line for each message refused (nil: none).
	Logger *slog.Logger
}

// Connect implements mcp.Transport: it starts reading In.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	if t.In == nil || t.Out == nil {
		return nil, errors.New("mcpserver: a Transport needs both In and Out")
	}
	maxFrame := t.MaxFrame
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	logger := t.Logger
	if logger == nil {
		logger = discardLogger()
	}
	c := &conn{
		out:      t.Out,
		logger:   logger,
		incoming: make(chan incoming),
		closed:   make(chan struct{}),
		ids:      map[jsonrpc.ID]struct{}{},
	}
	go c.read(newFrameReader(t.In, maxFrame))
	return c, nil
}

// incoming is what the reading goroutine hands to Read: a message, or the
// error that ends the input.
type incoming struct {
	msg jsonrpc.Message
	err error
}

// conn is a connection of a Transport.
type conn struct {
	out    io.Writer
	logger *slog.Logger

	writeMu sync.Mutex

	incoming chan incoming

	closeOnce sync.Once
	closed    chan struct{}

	mu sync.Mutex
	// ids are the ids of the calls handed to the SDK whose answers are not
	// yet on their way: ids a new call may not use.
	ids map[jsonrpc.ID]struct{}
	// pending counts the calls handed to the SDK whose answers are not
	// yet written; a call leaves ids before its answer is written, and
	// pending after.
	pending int
	// drained, when set, is closed once pending is 0.
	drained chan struct{}
	// room, when set, is closed once pending is below maxPending.
	room chan struct{}
	// onHand and onFull, when set by a test, are called with the number
	// of calls pending each time a call is handed to the SDK, and when the
	// reader waits for room.
	onHand func(pending int)
	onFull func()
}

// read reads the input to its end, handing each good message to Read and
// answering each bad one.
func (c *conn) read(fr *frameReader) {
	for {
		if !c.waitRoom() {
			return
		}
		line, tooLong, err := fr.next()
		if line != nil || tooLong {
			var msg jsonrpc.Message
			var bad *frameError
			if tooLong {
				bad = invalidRequest(nil, fmt.Sprintf("the message is longer than %d bytes; it was discarded", fr.max))
			} else {
				msg, bad = c.check(line)
			}
			if bad != nil {
				c.refuse(bad)
			} else if !c.hand(incoming{msg: msg}) {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.drain()
			}
			c.hand(incoming{err: err})
			return
		}
	}
}

// check decodes one line, or says why it is not a message to serve. A call
// whose id is in use by another call in flight is refused here, since the
// SDK's answer to it would carry no id.
func (c *conn) check(line []byte) (jsonrpc.Message, *frameError) {
	msg, bad := parseFrame(line)
	if bad != nil {
		return nil, bad
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return msg, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, busy := c.ids[req.ID]; busy {
		return nil, invalidRequest(rawID(req.ID), "the id is already used by a request that has not been answered")
	}
	c.ids[req.ID] = struct{}{}
	c.pending++
	if c.onHand != nil {
		c.onHand(c.pending)
	}
	return msg, nil
}

// waitRoom waits until fewer than maxPending calls are pending; false
// when the connection closed first.
func (c *conn) waitRoom() bool {
	c.mu.Lock()
	if c.pending < maxPending {
		c.mu.Unlock()
		return true
	}
	c.room = make(chan struct{})
	room := c.room
	if c.onFull != nil {
		c.onFull()
	}
	c.mu.Unlock()
	select {
	case <-room:
		return true
	case <-c.closed:
		return false
	}
}

// hand gives in to Read; false when the connection closed first.
func (c *conn) hand(in incoming) bool {
	select {
	case c.incoming <- in:
		return true
	case <-c.closed:
		return false
	}
}

// drain waits until every call handed to the SDK has been answered, the
// connection closed, or drainTimeout passed.
func (c *conn) drain() {
	c.mu.Lock()
	if c.pending == 0 {
		c.mu.Unlock()
		return
	}
	c.drained = make(chan struct{})
	drained := c.drained
	c.mu.Unlock()
	timer := time.NewTimer(drainTimeout)
	defer timer.Stop()
	select {
	case <-drained:
	case <-c.closed:
	case <-timer.C:
		c.logger.Warn("the input ended; some calls were still running and are left unanswered")
	}
}

// refuse answers a line that is not a message to serve.
func (c *conn) refuse(bad *frameError) {
	c.logger.Warn("refused a message", "code", bad.code, "reason", bad.message)
	data, err := bad.response()
	if err == nil {
		err = c.writeLine(data)
	}
	if err != nil {
		c.logger.Warn("could not answer a refused message", "error", err)
	}
}

// Read implements mcp.Connection.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case in := <-c.incoming:
		return in.msg, in.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write implements mcp.Connection: one message, one line.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	resp, ok := msg.(*jsonrpc.Response)
	// The id is free once the answer is on its way: a client may use it
	// again as soon as it reads the answer. The call counts as pending
	// until its answer is written.
	answers := ok && c.freeID(resp.ID)
	err = c.writeLine(data)
	if answers {
		c.answered()
	}
	return err
}

// writeLine writes data and a newline in one write, so that messages
// written at once never interleave.
func (c *conn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// freeID frees the id of a call being answered; false when no call
// handed to the SDK has it.
func (c *conn) freeID(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.ids[id]
	delete(c.ids, id)
	return ok
}

// answered records that a call's answer was written.
func (c *conn) answered() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending--
	if c.pending < maxPending && c.room != nil {
		close(c.room)
		c.room = nil
	}
	if c.pending == 0 && c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
}

// Close implements mcp.Connection. It unblocks Read; it does not close In
// or Out, which belong to the caller.
func (c *conn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID implements mcp.Connection: a stream has no session id.
func (c *conn) SessionID() string { return "" }

// frameReader reads lines of at most max bytes.
type frameReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line end ("\n" or "\r\n"). A
// line longer than max is read to its end and dropped as it streams:
// tooLong is true and line nil. err is io.EOF at the end of the input, or
// what the reader failed with; a last line without a newline comes with
// io.EOF. line is nil when there is no line, and valid until the next call.
func (f *frameReader) next() (line []byte, tooLong bool, err error) {
	f.buf = f.buf[:0]
	for {
		chunk, err := f.br.ReadSlice('\n')
		if !tooLong && len(f.buf)+len(chunk) > f.max+len("\r\n") {
			tooLong, f.buf = true, nil // dropped: never held
		}
		if !tooLong {
			f.buf = append(f.buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		return f.line(err)
	}
}

// line is the line read into buf, ending with err.
func (f *frameReader) line(err error) ([]byte, bool, error) {
	if len(f.buf) == 0 && err != nil {
		return nil, false, err // the end, with no last line
	}
	line := f.buf
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	if len(line) > f.max {
		return nil, true, err
	}
	if cap(f.buf) > 1<<20 {
		f.buf = nil // a large frame's buffer is not kept for the next ones
	}
	if line == nil {
		line = []byte{}
	}
	return line, false, err
}
