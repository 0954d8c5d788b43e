package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Request is one request the server got, with its conversation parsed into
// the same shape for every API.
type Request struct {
	// Seq numbers the server's requests from 1, in the order they came.
	Seq int
	// API is the wire format the request was read as.
	API API
	// Method, Path and RawQuery are the request line's.
	Method, Path, RawQuery string
	// Host is the host a refused proxy request was for (APIProxy only).
	Host string
	// Header is the request's header, as sent.
	Header http.Header
	// Body is the request's body, as sent.
	Body []byte

	// Model is the model the request names.
	Model string
	// Stream is true when the request asked for server-sent events.
	Stream bool
	// System is the system prompt or instructions, as one text.
	System string
	// Messages is the conversation, oldest first: one Message per text,
	// tool call or tool result (a message of several content blocks or
	// parts is several Messages of the same role).
	Messages []Message
	// Tools are the names of the tools (functions) the request offers the
	// model, sorted.
	Tools []string
	// Schema is the name of the JSON schema a chat completion asks the
	// reply to follow (response_format), "" for none (APIChat only).
	Schema string
	// Inputs are the texts to embed (APIEmbeddings only).
	Inputs []string
	// Counting is true for a request that only counts the tokens of a
	// conversation (Anthropic's count_tokens, Gemini's countTokens): no
	// model turn, and no script is asked.
	Counting bool
}

// Role is the author of a message, in the words of the Anthropic and
// OpenAI APIs: Gemini's "model" is RoleAssistant.
type Role string

// The roles of a conversation's messages.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
)

// Message is one piece of a conversation: a text, a tool call the model
// made, or a tool's result.
type Message struct {
	// Role is who wrote it: the model's tool calls are RoleAssistant, tool
	// results RoleUser (as the Anthropic and Gemini APIs carry them).
	Role Role
	// Text is the text of a text message.
	Text string
	// Call is the model's tool call, for a tool call.
	Call *ToolCall
	// Result is a tool's result, for a tool result.
	Result *ToolResult
}

// ToolCall is a call of a tool by the model.
type ToolCall struct {
	// ID is the call's id (tool_use id, call_id, functionCall id); Gemini
	// may send none.
	ID string
	// Name is the tool's name, as the agent named it to the model.
	Name string
	// Args are the call's arguments, a JSON object.
	Args json.RawMessage
}

// ToolResult is the result of a tool call, as the agent sent it back.
type ToolResult struct {
	// ID is the id of the call it answers ("" when the API carries none).
	ID string
	// Name is the tool's name, where the API carries it (Gemini).
	Name string
	// Text is every string of the result, in order, one per line: the
	// result's text whatever structure the agent wrapped it in.
	Text string
	// IsError is true when the agent marked the result as an error.
	IsError bool
}

// Text is the request's text: its system text, then every message's text,
// tool call (name and arguments) and tool result, one per line.
func (r *Request) Text() string {
	var b strings.Builder
	if r.System != "" {
		b.WriteString(r.System)
		b.WriteByte('\n')
	}
	for _, m := range r.Messages {
		switch {
		case m.Call != nil:
			fmt.Fprintf(&b, "%s %s\n", m.Call.Name, m.Call.Args)
		case m.Result != nil:
			b.WriteString(m.Result.Text)
			b.WriteByte('\n')
		default:
			b.WriteString(m.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Results returns the tool results of the request, oldest first.
func (r *Request) Results() []ToolResult {
	var out []ToolResult
	for _, m := range r.Messages {
		if m.Result != nil {
			out = append(out, *m.Result)
		}
	}
	return out
}

// Calls returns the tool calls of the request's conversation, oldest first.
func (r *Request) Calls() []ToolCall {
	var out []ToolCall
	for _, m := range r.Messages {
		if m.Call != nil {
			out = append(out, *m.Call)
		}
	}
	return out
}

// Exchange is a tool call of the conversation with its result, nil when
// the conversation does not hold it.
type Exchange struct {
	Call   ToolCall
	Result *ToolResult
}

// Exchanges returns the tool calls of the request's conversation with
// their results, oldest first: a result is matched to its call by id, or,
// when the call has none (Gemini may send none), as the next result
// after it that no other call claimed.
func (r *Request) Exchanges() []Exchange {
	var out []Exchange
	used := map[int]bool{}
	for i, m := range r.Messages {
		if m.Call == nil {
			continue
		}
		ex := Exchange{Call: *m.Call}
		for j := i + 1; j < len(r.Messages); j++ {
			res := r.Messages[j].Result
			if res != nil && !used[j] && (res.ID == m.Call.ID || m.Call.ID == "") {
				used[j] = true
				ex.Result = res
				break
			}
		}
		out = append(out, ex)
	}
	return out
}

// ResultOf returns the result of the last call in the request's
// conversation of the tool name (as ToolIs matches it), found by the
// call's id, or, when the call has none, as the first result after it.
func (r *Request) ResultOf(name string) (ToolResult, bool) {
	call := -1
	for i, m := range r.Messages {
		if m.Call != nil && ToolIs(m.Call.Name, name) {
			call = i
		}
	}
	if call < 0 {
		return ToolResult{}, false
	}
	id := r.Messages[call].Call.ID
	for _, m := range r.Messages[call+1:] {
		if m.Result != nil && (m.Result.ID == id || id == "") {
			return *m.Result, true
		}
	}
	return ToolResult{}, false
}

// Last returns the request's last message, the zero Message when it has
// none.
func (r *Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// UserTexts returns the texts of the user's messages, oldest first.
func (r *Request) UserTexts() []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == RoleUser && m.Call == nil && m.Result == nil {
			out = append(out, m.Text)
		}
	}
	return out
}

// HasTool reports whether the request offers a tool whose name is name or
// ends with name after a separator an agent puts between a server's name
// and its tool's ("mcp__forgemem__memory_recall", "forgemem__memory_recall",
// "forgemem_memory_recall").
func (r *Request) HasTool(name string) bool { return r.Tool(name) != "" }

// Tool returns the full name of the offered tool that HasTool finds for
// name, "" when there is none.
func (r *Request) Tool(name string) string {
	for _, t := range r.Tools {
		if ToolIs(t, name) {
			return t
		}
	}
	return ""
}

// ToolIs reports whether the tool name full is name, or name after a
// server prefix ("mcp__forgemem__", "forgemem__", "forgemem_").
func ToolIs(full, name string) bool {
	if full == name {
		return true
	}
	rest, ok := strings.CutSuffix(full, name)
	return ok && (strings.HasSuffix(rest, "_") || strings.HasSuffix(rest, "."))
}

// Reply is what a script answers: a text, or tool calls (with an optional
// text before them), or an HTTP error.
type Reply struct {
	// Text is the model's text.
	Text string
	// Calls are the tool calls the model makes; the agent runs them and
	// sends their results in its next request.
	Calls []ToolCall
	// Status, when not 0, makes the server answer with this HTTP status
	// and an error body instead.
	Status int
}

// Say is a reply of text.
func Say(text string) Reply { return Reply{Text: text} }

// Call is a reply that calls the tool name with args (marshalled to a JSON
// object; nil is {}).
func Call(name string, args any) Reply {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		panic(fmt.Sprintf("fakemodel.Call: the arguments of %s: %v", name, err))
	}
	return Reply{Calls: []ToolCall{{Name: name, Args: b}}}
}

// jsonStrings returns every string in a JSON value, in document order
// (object keys sorted), one per line, leaving out the values of "type"
// keys (content blocks' tags): the text of a tool result whatever
// structure wraps it.
func jsonStrings(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	var parts []string
	collectStrings(v, &parts)
	return strings.Join(parts, "\n")
}

func collectStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			collectStrings(e, out)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k != "type" {
				collectStrings(x[k], out)
			}
		}
	}
}
