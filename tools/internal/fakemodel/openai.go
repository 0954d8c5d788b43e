package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// chatRequest is the part of a chat completion request the server reads.
type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	ResponseFormat *struct {
		JSONSchema *struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// parse fills req from the chat completion request.
func (c *chatRequest) parse(req *Request) {
	req.Model, req.Stream = c.Model, c.Stream
	for _, m := range c.Messages {
		text := jsonStrings(m.Content)
		if m.Role == "system" || m.Role == "developer" {
			req.System += text
			continue
		}
		req.Messages = append(req.Messages, Message{Role: Role(m.Role), Text: text})
	}
	if rf := c.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		req.Schema = rf.JSONSchema.Name
	}
}

// chat answers POST /v1/chat/completions, without streaming.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var body chatRequest
	req := decode(w, r, APIChat, &body)
	if req == nil {
		return
	}
	body.parse(req)
	s.record(req)
	reply := s.script(APIChat)(req)
	if reply.Status != 0 {
		writeError(w, reply.Status, "fakemodel: scripted failure")
		return
	}
	if body.Stream {
		writeError(w, http.StatusBadRequest, "fakemodel: chat completions are answered without streaming")
		return
	}
	writeJSON(w, map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", req.Seq), "object": "chat.completion", "created": 0, "model": body.Model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": reply.Text},
		}},
		"usage": map[string]any{"prompt_tokens": tokens(req.Body), "completion_tokens": 1, "total_tokens": tokens(req.Body) + 1},
	})
}

// embeddings answers POST /v1/embeddings with the vectors of a
// deterministic hashing embedder (providers/fake): the same text always
// gets the same vector, and texts sharing words get close ones.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	req := decode(w, r, APIEmbeddings, &body)
	if req == nil {
		return
	}
	req.Model = body.Model
	var one string
	if json.Unmarshal(body.Input, &one) == nil {
		req.Inputs = []string{one}
	} else if err := json.Unmarshal(body.Input, &req.Inputs); err != nil {
		writeError(w, http.StatusBadRequest, "fakemodel: input is neither a text nor a list of texts")
		return
	}
	s.record(req)
	vecs, err := s.emb.Embed(r.Context(), req.Inputs)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "fakemodel: "+err.Error())
		return
	}
	data := make([]any, len(vecs))
	for i, v := range vecs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
	}
	writeJSON(w, map[string]any{"object": "list", "data": data, "model": body.Model,
		"usage": map[string]any{"prompt_tokens": tokens(req.Body), "total_tokens": tokens(req.Body)}})
}
