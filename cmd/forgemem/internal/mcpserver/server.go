package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name is the server's implementation name, as clients show it.
const Name = "forgemem"

// Options configure [New]. The zero value is ready to use.
type Options struct {
	// Version is the implementation version the server reports; "" means
	// the module version the binary was built with, or "dev".
	Version string
	// Logger receives the SDK's logs of the protocol and the server's own
	// (a call refused as busy, a handler that panicked); nil: none. It must
	// not write to the transport's stream: over stdio, stdout is the
	// protocol.
	Logger *slog.Logger
	// SessionID is recorded in the memories memory_remember writes; ""
	// means a new "mcp-…" id for the server's life.
	SessionID string
	// ToCommit returns the files to commit for the repository's other
	// clones to have a memory a tool just wrote, as the user names them:
	// of a repo memory, its new file and those of the earlier versions of
	// its chain that git neither tracks nor ignores, oldest first; none
	// otherwise. memory_remember and memory_forget then say so. nil: they
	// never do.
	ToCommit func(ctx context.Context, m workspace.Memory) []string
}

// instructions tell the client's model what the server is for.
const instructions = `forgemem is the user's long-term memory across coding sessions: their preferences, the
project's conventions, decisions with their reasons, and corrections they made, kept as
versioned markdown files (.forge/memory/ in the repository, ~/.forge/memory/ for the user).
Call memory_recall with the task at hand before you start work, and whenever the user asks
what you remember about something. Call memory_remember when the user says "remember that…"
or states a lasting preference, convention, decision or correction (not for facts about the
current task only). memory_search, memory_show, memory_list and memory_forget find, read,
list and retire memories by id.`

// New returns the MCP server over ws: the tools memory_recall,
// memory_search, memory_remember, memory_show, memory_forget and
// memory_list, each calling the workspace operation of the same purpose.
// The workspace, and with it the retrieval index, lives as long as the
// server; the index is rebuilt before a recall or search only when the
// memory folders changed, whoever changed them.
//
// Bad arguments and failed operations are tool results with IsError set
// and a message that says what to do, never protocol errors; the message
// is redacted. At most 8 tool calls run at once and 32 wait for a turn;
// a call beyond those is refused as busy. Results are capped in size (a
// list or a search at 64 KiB of text, with a note saying what was left
// out and how to get it). Serve it on a [Transport] to survive malformed
// messages.
func New(ws *workspace.Workspace, opts Options) *mcp.Server {
	s, _ := build(ws, opts)
	return s
}

// build is New, also returning the server's own state for tests.
func build(ws *workspace.Workspace, opts Options) (*mcp.Server, *server) {
	if opts.Version == "" {
		opts.Version = buildVersion()
	}
	if opts.SessionID == "" {
		opts.SessionID = newSessionID()
	}
	logger := opts.Logger
	if logger == nil {
		logger = discardLogger()
	}
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "forgemem memory", Version: opts.Version},
		&mcp.ServerOptions{Instructions: strings.ReplaceAll(instructions, "\n", " "), Logger: logger,
			// The tools never change, so the server announces no tool list
			// changes: the SDK would otherwise send one for the tools added
			// here, a few milliseconds later, to a client that connected
			// meanwhile — before it even initialized. Logging is the SDK's
			// default capability.
			Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{}}})
	srv := &server{tools: map[string]*toolInfo{}, limit: newCallLimit(maxRunning, maxWaiting), logger: logger}
	h := &handlers{ws: ws, session: opts.SessionID, toCommit: opts.ToCommit}
	h.register(s, srv)
	s.AddReceivingMiddleware(srv.middleware)
	return s, srv
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// buildVersion is the version of the main module, "dev" for a build from a
// working tree.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// newSessionID returns a session id for the memories a server writes.
func newSessionID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "mcp-" + hex.EncodeToString(b[:])
}

// server is what the middleware around the tools needs.
type server struct {
	tools  map[string]*toolInfo
	limit  *callLimit
	logger *slog.Logger
	// onRun, when set by a test, is called when a call starts running
	// (holding its place), and the function it returns when the call has
	// run (before the place is given back).
	onRun func(tool string) func()
}

// middleware runs every call of a known tool within the server's bounds,
// and turns what the SDK would answer with a protocol error — arguments
// that do not fit the input schema, a failure past the handler — into a
// tool result with IsError, which the model can act on. Other methods, and
// unknown tools, go to the SDK as they are.
func (srv *server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		t := srv.tools[call.Params.Name]
		if t == nil {
			return next(ctx, method, req)
		}
		return srv.call(ctx, t, func() (mcp.Result, error) { return next(ctx, method, req) }, call.Params), nil
	}
}

// call runs one call of t: its arguments checked, a place taken, the
// handler run, and any failure made a tool error.
func (srv *server) call(ctx context.Context, t *toolInfo, run func() (mcp.Result, error), params *mcp.CallToolParamsRaw) (res *mcp.CallToolResult) {
	if err := normalizeArguments(params); err != nil {
		return t.errorResult(err)
	}
	release, err := srv.limit.acquire(ctx)
	if err != nil {
		if errors.Is(err, errBusy) {
			srv.logger.Warn("a tool call was refused: every place is taken", "tool", t.name)
		}
		return t.errorResult(err)
	}
	defer release()
	if srv.onRun != nil {
		defer srv.onRun(t.name)()
	}
	defer func() {
		if p := recover(); p != nil {
			srv.logger.Error("a tool call panicked", "tool", t.name, "panic", p, "stack", string(debug.Stack()))
			res = t.errorResult(fmt.Errorf("internal error: %v", p))
		}
	}()
	r, err := run()
	if err != nil {
		return t.errorResult(sdkError(err, t.schema))
	}
	out, ok := r.(*mcp.CallToolResult)
	if !ok {
		return t.errorResult(fmt.Errorf("internal error: the handler returned %T", r))
	}
	return out
}

// normalizeArguments reads absent or null arguments as no arguments ({}),
// and refuses arguments that are not a JSON object.
func normalizeArguments(p *mcp.CallToolParamsRaw) error {
	args := strings.TrimSpace(string(p.Arguments))
	switch {
	case args == "" || args == "null":
		p.Arguments = nil
	case args[0] != '{':
		return fmt.Errorf("%w: the arguments are not a JSON object of named arguments", errArguments)
	}
	return nil
}

// errArguments marks arguments that do not fit the tool's input schema.
var errArguments = errors.New("invalid arguments")

// sdkError is the error the SDK's typed tool answered with: arguments that
// do not fit the input schema (invalid params) become errArguments, with
// the schema's complaint in words a model reads (see schemaComplaint).
func sdkError(err error, schema *jsonschema.Schema) error {
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		return err
	}
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, `validating "arguments": `); ok {
		msg = after
	}
	msg = strings.TrimPrefix(msg, "validating root: ")
	msg = strings.ReplaceAll(msg, "validating /properties/", "argument ")
	return fmt.Errorf("%w: %s", errArguments, schemaComplaint(msg, schema))
}

// The complaints of the schema's checks (github.com/google/jsonschema-go)
// about one argument, after sdkError's rewriting: a number out of its
// bounds ("minimum: 0/1 is less than 1.000000"), a string over its length
// (quoting all of it), an array over its length, a value of the wrong
// type or outside an enum (quoting all of it).
var (
	boundComplaint  = regexp.MustCompile(`^argument (\S+): (?:minimum|maximum): (-?\d+(?:/\d+)?) is (?:less|greater) than (-?[\d.]+)$`)
	lengthComplaint = regexp.MustCompile(`(?s)^argument (\S+): (?:maxLength|minLength): ".*" contains (\d+) Unicode code points, (more|fewer) than (\d+)$`)
	itemsComplaint  = regexp.MustCompile(`^argument (\S+): maxItems: array length (\d+) is greater than (\d+)$`)
	valueComplaint  = regexp.MustCompile(`(?s)^(argument \S+: (?:type|enum|const): )(.*?)( has type "[^"]*", want .*| does not equal .*)$`)
)

// maxQuotedRunes caps the rejected value a complaint quotes.
const maxQuotedRunes = 100

// overLength says what to do with an argument over its length, where
// there is more to it than making it shorter.
var overLength = map[string]string{
	"content": "a memory is one short statement recalled into an agent's context; remember the few statements worth keeping, each on its own, and leave the rest in a file of the repository",
	"reason":  "say why in a sentence",
}

// schemaComplaint is msg, a complaint of the schema's checks, in plain
// words: "limit is 0, want 1–100", "id is 230 characters long, want at
// most 128" (and what to do, from overLength); the value it quotes is cut
// to maxQuotedRunes characters. Another complaint is msg as it is.
func schemaComplaint(msg string, schema *jsonschema.Schema) string {
	if m := boundComplaint.FindStringSubmatch(msg); m != nil {
		value := m[2]
		if r, ok := new(big.Rat).SetString(value); ok {
			value = r.RatString()
		}
		var prop *jsonschema.Schema
		if schema != nil {
			prop = schema.Properties[m[1]]
		}
		want := "want " + m[3]
		if prop != nil {
			switch {
			case prop.Minimum != nil && prop.Maximum != nil:
				want = fmt.Sprintf("want %g–%g", *prop.Minimum, *prop.Maximum)
			case prop.Minimum != nil:
				want = fmt.Sprintf("want %g or more", *prop.Minimum)
			case prop.Maximum != nil:
				want = fmt.Sprintf("want at most %g", *prop.Maximum)
			}
		} else if f, err := strconv.ParseFloat(m[3], 64); err == nil {
			want = fmt.Sprintf("want %g", f)
		}
		return fmt.Sprintf("%s is %s, %s", m[1], value, want)
	}
	if m := lengthComplaint.FindStringSubmatch(msg); m != nil {
		bound := "at most"
		if m[3] == "fewer" {
			bound = "at least"
		}
		c := fmt.Sprintf("%s is %s characters long, want %s %s", m[1], m[2], bound, m[4])
		if advice := overLength[m[1]]; advice != "" && m[3] == "more" {
			c += ": " + advice
		}
		return c
	}
	if m := itemsComplaint.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s has %s items, want at most %s", m[1], m[2], m[3])
	}
	if m := valueComplaint.FindStringSubmatch(msg); m != nil {
		return m[1] + clip(m[2], maxQuotedRunes) + m[3]
	}
	return msg
}
