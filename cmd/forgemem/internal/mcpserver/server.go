package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name is the server's implementation name, as clients show it.
const Name = "forgemem"

// Options configure [New]. The zero value is ready to use.
type Options struct {
	// Version is the implementation version the server reports; "" means
	// the module version the binary was built with, or "dev".
	Version string
	// Logger receives the SDK's logs of the protocol (nil: none). It must
	// not write to the transport's stream: over stdio, stdout is the
	// protocol.
	Logger *slog.Logger
	// SessionID is recorded in the memories memory_remember writes; ""
	// means a new "mcp-…" id for the server's life.
	SessionID string
}

// instructions tell the client's model what the server is for.
const instructions = `forgemem is the user's long-term memory across coding sessions: their preferences, the
project's conventions, decisions with their reasons, and corrections they made, kept as
versioned markdown files (.forge/memory/ in the repository, ~/.forge/memory/ for the user).
Call memory_recall with the task at hand before you start work, to get what is remembered
about it. Call memory_remember when the user states a lasting preference, convention,
decision or correction (not for facts about the current task only). memory_search,
memory_show, memory_list and memory_forget look up, inspect and retire memories by id.`

// New returns the MCP server over ws: the tools memory_recall,
// memory_search, memory_remember, memory_show, memory_forget and
// memory_list, each calling the workspace operation of the same purpose.
// The workspace, and with it the retrieval index, lives as long as the
// server; the index is rebuilt before a recall or search only when the
// memory folders changed, whoever changed them.
//
// Bad arguments and failed operations are tool results with IsError set
// and a message that says what to do, never protocol errors.
func New(ws *workspace.Workspace, opts Options) *mcp.Server {
	if opts.Version == "" {
		opts.Version = buildVersion()
	}
	if opts.SessionID == "" {
		opts.SessionID = newSessionID()
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "forgemem memory", Version: opts.Version},
		&mcp.ServerOptions{Instructions: strings.ReplaceAll(instructions, "\n", " "), Logger: logger})
	h := &handlers{ws: ws, session: opts.SessionID}
	for _, t := range h.tools() {
		t.add(s)
	}
	return s
}

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

// tool is one tool of the server: its definition, how to check its
// arguments, and what it runs.
type tool struct {
	def *mcp.Tool
	// schema is the input schema, resolved for validation.
	schema *jsonschema.Resolved
	// run decodes the validated arguments and runs the tool: the text for
	// the model and the structured result, or an error for the model.
	run func(ctx context.Context, args json.RawMessage) (string, any, error)
}

// newTool makes a tool whose arguments are In, with the input schema
// inferred from In's fields and json and jsonschema tags, adjusted by
// adjust (enums, bounds), and run called with the decoded arguments.
func newTool[In any](def *mcp.Tool, adjust func(props map[string]*jsonschema.Schema), run func(ctx context.Context, in In) (string, any, error)) tool {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: the schema of %s: %v", def.Name, err))
	}
	if adjust != nil {
		adjust(schema.Properties)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: the schema of %s: %v", def.Name, err))
	}
	def.InputSchema = schema
	def.Description = strings.ReplaceAll(def.Description, "\n", " ") // one paragraph
	return tool{def: def, schema: resolved, run: func(ctx context.Context, args json.RawMessage) (string, any, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return "", nil, fmt.Errorf("%w: %v", errArguments, err)
		}
		return run(ctx, in)
	}}
}

// errArguments marks arguments that do not fit the tool's input schema.
var errArguments = errors.New("invalid arguments")

// add registers t on s. The handler never returns a protocol error: bad
// arguments and failures become tool results with IsError set.
func (t tool) add(s *mcp.Server) {
	s.AddTool(t.def, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := json.RawMessage(req.Params.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		if err := t.validate(args); err != nil {
			return t.failure(err), nil
		}
		text, structured, err := t.run(ctx, args)
		if err != nil {
			return t.failure(err), nil
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
		if structured != nil {
			res.StructuredContent = structured
		}
		return res, nil
	})
}

// validate checks args against the tool's input schema.
func (t tool) validate(args json.RawMessage) error {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return fmt.Errorf("%w: not JSON: %v", errArguments, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("%w: want an object of named arguments", errArguments)
	}
	if err := t.schema.Validate(v); err != nil {
		msg := strings.TrimPrefix(err.Error(), "validating root: ")
		msg = strings.ReplaceAll(msg, "validating /properties/", "argument ")
		return fmt.Errorf("%w: %s", errArguments, msg)
	}
	return nil
}

// failure is the tool result of err, for the model: what went wrong and
// what to do.
func (t tool) failure(err error) *mcp.CallToolResult {
	msg := fmt.Sprintf("%s failed: %v", t.def.Name, err)
	var amb *workspace.AmbiguousError
	switch {
	case errors.Is(err, errArguments):
		msg = fmt.Sprintf("%s: %v. It takes %s.", t.def.Name, err, t.usage())
	case errors.As(err, &amb):
		msg = fmt.Sprintf("%s: %v", t.def.Name, err)
	case errors.Is(err, memcore.ErrNotFound):
		msg = fmt.Sprintf("%s: %v. memory_search and memory_list give the ids of the memories.", t.def.Name, trimNotFoundHint(err))
	case errors.Is(err, workspace.ErrInvalidInput), errors.Is(err, workspace.ErrDuplicate):
		msg = fmt.Sprintf("%s: %v", t.def.Name, err)
	}
	// A provider's error may quote the API key: the model never sees it.
	msg, _ = redact.Text(msg)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// trimNotFoundHint drops the command-line advice of a not-found error,
// which names commands a model cannot run.
func trimNotFoundHint(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "; forgemem list"); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// usage describes the tool's arguments from its schema: each name, its
// type or values, and whether it is required.
func (t tool) usage() string {
	s := t.def.InputSchema.(*jsonschema.Schema)
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	var parts []string
	for _, n := range names {
		p := s.Properties[n]
		kind := p.Type
		if len(p.Enum) > 0 {
			var vals []string
			for _, e := range p.Enum {
				vals = append(vals, fmt.Sprintf("%q", e))
			}
			kind = "one of " + strings.Join(vals, ", ")
		}
		opt := "optional"
		if required[n] {
			opt = "required"
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", n, kind, opt))
	}
	if len(parts) == 0 {
		return "no arguments"
	}
	return strings.Join(parts, "; ")
}
