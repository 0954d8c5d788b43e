package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// anthropicRequest is the part of a Messages API request the server reads.
type anthropicRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// anthropicBlock is a content block of a message.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// anthropicBlocks reads a content that is a string or a list of blocks.
func anthropicBlocks(raw json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var blocks []anthropicBlock
	_ = json.Unmarshal(raw, &blocks)
	return blocks
}

// parse fills req's conversation from the Messages API request.
func (a *anthropicRequest) parse(req *Request) {
	req.Model, req.Stream = a.Model, a.Stream
	var sys []string
	for _, b := range anthropicBlocks(a.System) {
		sys = append(sys, b.Text)
	}
	req.System = strings.Join(sys, "\n")
	for _, m := range a.Messages {
		role := Role(m.Role)
		for _, b := range anthropicBlocks(m.Content) {
			switch b.Type {
			case "text":
				req.Messages = append(req.Messages, Message{Role: role, Text: b.Text})
			case "tool_use":
				req.Messages = append(req.Messages, Message{Role: role, Call: &ToolCall{ID: b.ID, Name: b.Name, Args: b.Input}})
			case "tool_result":
				req.Messages = append(req.Messages, Message{Role: role, Result: &ToolResult{ID: b.ToolUseID, Text: anthropicResultText(b.Content), IsError: b.IsError}})
			}
		}
	}
	for _, t := range a.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	sort.Strings(req.Tools)
}

// anthropicResultText is the text of a tool_result's content: a string, or
// blocks whose strings are taken (text blocks, and the references a tool
// search returns).
func anthropicResultText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	return jsonStrings(raw)
}

// anthropic answers POST /v1/messages.
func (s *Server) anthropic(w http.ResponseWriter, r *http.Request) {
	var body anthropicRequest
	req := decode(w, r, APIAnthropic, &body)
	if req == nil {
		return
	}
	body.parse(req)
	s.record(req)
	reply := s.script(APIAnthropic)(req)
	if reply.Status != 0 {
		writeError(w, reply.Status, "fakemodel: scripted failure")
		return
	}
	id := fmt.Sprintf("msg_%d", req.Seq)
	content, stop := anthropicContent(reply, req.Seq)
	usage := map[string]any{"input_tokens": tokens(req.Body), "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !body.Stream {
		writeJSON(w, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": body.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	st := newStream(w)
	st.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": body.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	for i, c := range content {
		anthropicStreamBlock(st, i, c)
	}
	st.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 1}})
	st.event("message_stop", map[string]any{"type": "message_stop"})
}

// anthropicContent is the reply's content blocks and its stop reason.
func anthropicContent(reply Reply, seq int) ([]map[string]any, string) {
	var content []map[string]any
	if reply.Text != "" || len(reply.Calls) == 0 {
		content = append(content, map[string]any{"type": "text", "text": reply.Text})
	}
	for i, c := range reply.Calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("toolu_%d_%d", seq, i)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": id, "name": c.Name, "input": c.Args})
	}
	if len(reply.Calls) > 0 {
		return content, "tool_use"
	}
	return content, "end_turn"
}

// anthropicStreamBlock streams one content block: its start with an empty
// body, its text or input as one delta, and its stop.
func anthropicStreamBlock(st *stream, i int, c map[string]any) {
	start := map[string]any{"type": c["type"]}
	delta := map[string]any{}
	switch c["type"] {
	case "text":
		start["text"] = ""
		delta = map[string]any{"type": "text_delta", "text": c["text"]}
	case "tool_use":
		start["id"], start["name"], start["input"] = c["id"], c["name"], map[string]any{}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(c["input"].(json.RawMessage))}
	}
	st.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
	st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
	st.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}

// anthropicCountTokens answers POST /v1/messages/count_tokens.
func (s *Server) anthropicCountTokens(w http.ResponseWriter, r *http.Request) {
	var body anthropicRequest
	req := decode(w, r, APIAnthropic, &body)
	if req == nil {
		return
	}
	body.parse(req)
	req.Counting = true
	s.record(req)
	writeJSON(w, map[string]any{"input_tokens": tokens(req.Body)})
}
