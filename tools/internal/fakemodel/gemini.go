package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// geminiRequest is the part of a Gemini API request the server reads.
type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// geminiContent is a turn of the conversation.
type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

// geminiPart is a part of a turn.
type geminiPart struct {
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// parse fills req's conversation from the Gemini API request.
func (g *geminiRequest) parse(req *Request) {
	if g.SystemInstruction != nil {
		var sys []string
		for _, p := range g.SystemInstruction.Parts {
			sys = append(sys, p.Text)
		}
		req.System = strings.Join(sys, "\n")
	}
	for _, c := range g.Contents {
		role := RoleUser
		if c.Role == "model" {
			role = RoleAssistant
		}
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				req.Messages = append(req.Messages, Message{Role: role, Call: &ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: p.FunctionCall.Args}})
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				req.Messages = append(req.Messages, Message{Role: role, Result: &ToolResult{ID: fr.ID, Name: fr.Name, Text: jsonStrings(fr.Response)}})
			case !p.Thought:
				req.Messages = append(req.Messages, Message{Role: role, Text: p.Text})
			}
		}
	}
	for _, t := range g.Tools {
		for _, f := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, f.Name)
		}
	}
	sort.Strings(req.Tools)
}

// gemini answers POST /{version}/models/{model}:{method}: generateContent,
// streamGenerateContent and countTokens.
func (s *Server) gemini(w http.ResponseWriter, r *http.Request) {
	model, method := modelOf(r.PathValue("call"))
	switch method {
	case "generateContent", "streamGenerateContent", "countTokens":
	default:
		s.other(w, r)
		return
	}
	var body geminiRequest
	req := decode(w, r, APIGemini, &body)
	if req == nil {
		return
	}
	req.Model, req.Stream = model, method == "streamGenerateContent"
	body.parse(req)
	if method == "countTokens" {
		req.Counting = true
		s.record(req)
		writeJSON(w, map[string]any{"totalTokens": tokens(req.Body)})
		return
	}
	s.record(req)
	reply := s.script(APIGemini)(req)
	if reply.Status != 0 {
		writeError(w, reply.Status, "fakemodel: scripted failure")
		return
	}
	resp := geminiResponse(reply, req, model)
	if !req.Stream {
		writeJSON(w, resp)
		return
	}
	newStream(w).event("", resp)
}

// geminiResponse is the reply as one GenerateContentResponse.
func geminiResponse(reply Reply, req *Request, model string) map[string]any {
	var parts []any
	if reply.Text != "" || len(reply.Calls) == 0 {
		parts = append(parts, map[string]any{"text": reply.Text})
	}
	for i, c := range reply.Calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", req.Seq, i)
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": id, "name": c.Name, "args": c.Args}})
	}
	return map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": tokens(req.Body), "candidatesTokenCount": 1, "totalTokenCount": tokens(req.Body) + 1},
		"modelVersion":  model,
		"responseId":    fmt.Sprintf("resp_%d", req.Seq),
	}
}
