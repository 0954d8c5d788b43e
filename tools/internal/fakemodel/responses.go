package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// responsesRequest is the part of a Responses API request the server reads.
type responsesRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Tools        []responsesTool `json:"tools"`
}

// responsesTool is a tool offered: a function, or a namespace of them.
type responsesTool struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"`
}

// responsesItem is an input item.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments string          `json:"arguments"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	// Arguments of a tool_search_call are an object, not a string.
	SearchArguments json.RawMessage `json:"-"`
	Tools           []responsesTool `json:"tools"`
}

// UnmarshalJSON reads an item whose arguments are a string (a function
// call) or an object (a tool search call).
func (it *responsesItem) UnmarshalJSON(data []byte) error {
	type plain responsesItem
	var raw struct {
		plain
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*it = responsesItem(raw.plain)
	if err := json.Unmarshal(raw.Arguments, &it.Arguments); err != nil {
		it.SearchArguments = raw.Arguments
	}
	return nil
}

// parse fills req's conversation from the Responses API request.
func (b *responsesRequest) parse(req *Request) {
	req.Model, req.Stream, req.System = b.Model, b.Stream, b.Instructions
	var text string
	if json.Unmarshal(b.Input, &text) == nil {
		req.Messages = append(req.Messages, Message{Role: RoleUser, Text: text})
	}
	var items []responsesItem
	_ = json.Unmarshal(b.Input, &items)
	req.Tools = responsesToolNames("", b.Tools)
	for _, it := range items {
		req.Messages = append(req.Messages, it.messages()...)
		// The tools a tool search found are offered from then on.
		if it.Type == "tool_search_output" {
			req.Tools = append(req.Tools, responsesToolNames("", it.Tools)...)
		}
	}
	sort.Strings(req.Tools)
}

// messages are the Messages of one input item.
func (it responsesItem) messages() []Message {
	switch it.Type {
	case "message", "":
		role := Role(it.Role)
		if role == "developer" {
			role = RoleSystem
		}
		var s string
		if json.Unmarshal(it.Content, &s) == nil {
			return []Message{{Role: role, Text: s}}
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(it.Content, &parts)
		var out []Message
		for _, p := range parts {
			out = append(out, Message{Role: role, Text: p.Text})
		}
		return out
	case "function_call":
		name := it.Name
		if it.Namespace != "" {
			name = it.Namespace + namespaceSep + it.Name
		}
		return []Message{{Role: RoleAssistant, Call: &ToolCall{ID: it.CallID, Name: name, Args: json.RawMessage(it.Arguments)}}}
	case "function_call_output":
		return []Message{{Role: RoleUser, Result: &ToolResult{ID: it.CallID, Text: jsonStrings(it.Output)}}}
	case "tool_search_call":
		return []Message{{Role: RoleAssistant, Call: &ToolCall{ID: it.CallID, Name: ToolSearch, Args: it.SearchArguments}}}
	case "tool_search_output":
		return []Message{{Role: RoleUser, Result: &ToolResult{ID: it.CallID, Text: strings.Join(responsesToolNames("", it.Tools), "\n")}}}
	}
	return nil
}

// ToolSearch is the name of the Responses API's tool search tool (a tool of
// type "tool_search", which Codex runs itself): a Call of this name is a
// tool_search_call item, whose arguments are an object, and the result
// the agent sends back (tool_search_output) lists the tools found, which
// the request offers from then on.
const ToolSearch = "tool_search"

// namespaceSep joins a namespace's name and its function's name in a
// tool's name ("mcp__forgemem.memory_recall"): function names cannot hold
// a dot, so a Call of such a name is a call of the namespace's function.
const namespaceSep = "."

// responsesToolNames lists the function names of tools, a namespace's
// functions prefixed with its name and namespaceSep.
func responsesToolNames(prefix string, tools []responsesTool) []string {
	var out []string
	for _, t := range tools {
		if t.Type == "namespace" {
			out = append(out, responsesToolNames(prefix+t.Name+namespaceSep, t.Tools)...)
			continue
		}
		if t.Name != "" {
			out = append(out, prefix+t.Name)
		} else {
			out = append(out, t.Type) // a hosted tool: web_search, …
		}
	}
	return out
}

// responses answers POST /v1/responses.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	var body responsesRequest
	req := decode(w, r, APIResponses, &body)
	if req == nil {
		return
	}
	body.parse(req)
	s.record(req)
	reply := s.script(APIResponses)(req)
	if reply.Status != 0 {
		writeError(w, reply.Status, "fakemodel: scripted failure")
		return
	}
	id := fmt.Sprintf("resp_%d", req.Seq)
	output := responsesOutput(reply, req.Seq)
	usage := map[string]any{
		"input_tokens": tokens(req.Body), "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 1, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": tokens(req.Body) + 1,
	}
	done := map[string]any{"id": id, "object": "response", "created_at": 0, "status": "completed", "model": body.Model, "output": output, "usage": usage}
	if !body.Stream {
		writeJSON(w, done)
		return
	}
	st := newStream(w)
	seq := 0
	ev := func(name string, data map[string]any) {
		data["type"], data["sequence_number"] = name, seq
		seq++
		st.event(name, data)
	}
	ev("response.created", map[string]any{"response": map[string]any{"id": id, "object": "response", "created_at": 0, "status": "in_progress", "model": body.Model, "output": []any{}}})
	for i, item := range output {
		ev("response.output_item.added", map[string]any{"output_index": i, "item": item})
		if item["type"] == "message" {
			ev("response.output_text.delta", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0, "delta": reply.Text})
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	ev("response.completed", map[string]any{"response": done})
}

// responsesOutput is the reply's output items: a message, then one
// function call per tool call.
func responsesOutput(reply Reply, seq int) []map[string]any {
	var out []map[string]any
	if reply.Text != "" || len(reply.Calls) == 0 {
		out = append(out, map[string]any{
			"id": fmt.Sprintf("msg_%d", seq), "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}},
		})
	}
	for i, c := range reply.Calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", seq, i)
		}
		if c.Name == ToolSearch {
			out = append(out, map[string]any{
				"id": fmt.Sprintf("tsc_%d_%d", seq, i), "type": "tool_search_call", "status": "completed",
				"call_id": id, "execution": "client", "arguments": c.Args,
			})
			continue
		}
		item := map[string]any{
			"id": fmt.Sprintf("fc_%d_%d", seq, i), "type": "function_call", "status": "completed",
			"call_id": id, "name": c.Name, "arguments": string(c.Args),
		}
		if ns, name, ok := strings.Cut(c.Name, namespaceSep); ok {
			item["namespace"], item["name"] = ns, name
		}
		out = append(out, item)
	}
	return out
}
