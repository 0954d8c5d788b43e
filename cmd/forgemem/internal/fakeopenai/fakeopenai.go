package fakeopenai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// ChatRequest is a chat completion request as the server received it.
type ChatRequest struct {
	Model    string
	Messages []memcore.Message
	// SchemaName is the name of the response_format's JSON schema, "" when
	// the request asked for none: memcapture.ClassifierSchemaName for the
	// capture classifier, memretrieve.HypothesisSchemaName for retrieval's
	// hypotheses.
	SchemaName string
}

// Text is the content of every message of the request, one per line.
func (r ChatRequest) Text() string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// ReplyFunc answers a chat request with the assistant's text.
type ReplyFunc func(req ChatRequest) string

// Server is the running server. Its methods are safe for concurrent use.
type Server struct {
	srv   *httptest.Server
	reply ReplyFunc
	emb   *fake.Embedder

	mu       sync.Mutex
	chats    []ChatRequest
	embedded []string
	status   int
}

// Start starts a server answering chat requests with reply. Close it.
func Start(reply ReplyFunc) (*Server, error) {
	emb, err := fake.NewEmbedder(fake.EmbedderConfig{})
	if err != nil {
		return nil, fmt.Errorf("fakeopenai: %w", err)
	}
	s := &Server{reply: reply, emb: emb}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	s.srv = httptest.NewServer(mux)
	return s, nil
}

// BaseURL is the API root to configure (memory.base_url).
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Requests returns the chat requests received so far, oldest first.
func (s *Server) Requests() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatRequest(nil), s.chats...)
}

// Embedded returns every text the server was asked to embed, in order.
func (s *Server) Embedded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.embedded...)
}

// FailWith makes every later request fail with the HTTP status code (an
// OpenAI error body); 0 makes them succeed again.
func (s *Server) FailWith(status int) {
	s.mu.Lock()
	s.status = status
	s.mu.Unlock()
}

// failing writes the error of FailWith, if one is set.
func (s *Server) failing(w http.ResponseWriter) bool {
	s.mu.Lock()
	status := s.status
	s.mu.Unlock()
	if status == 0 {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":"the test server fails with %d","type":"server_error","code":null}}`, status)
	return true
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		ResponseFormat *struct {
			JSONSchema *struct {
				Name string `json:"name"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := ChatRequest{Model: body.Model}
	for _, m := range body.Messages {
		req.Messages = append(req.Messages, memcore.Message{Role: memcore.Role(m.Role), Content: m.Content})
	}
	if rf := body.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		req.SchemaName = rf.JSONSchema.Name
	}
	s.mu.Lock()
	s.chats = append(s.chats, req)
	s.mu.Unlock()
	if s.failing(w) {
		return
	}
	text := s.reply(req)
	writeJSON(w, map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body.Model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": text},
		}},
		"usage": map[string]any{"prompt_tokens": len(req.Text()) / 4, "completion_tokens": len(text) / 4, "total_tokens": (len(req.Text()) + len(text)) / 4},
	})
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var texts []string
	if err := json.Unmarshal(body.Input, &texts); err != nil {
		var one string
		if err := json.Unmarshal(body.Input, &one); err != nil {
			http.Error(w, "input: want a string or an array of strings", http.StatusBadRequest)
			return
		}
		texts = []string{one}
	}
	s.mu.Lock()
	s.embedded = append(s.embedded, texts...)
	s.mu.Unlock()
	if s.failing(w) {
		return
	}
	vecs, err := s.emb.Embed(context.Background(), texts)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	data := make([]any, len(vecs))
	for i, v := range vecs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
	}
	writeJSON(w, map[string]any{"object": "list", "data": data, "model": body.Model,
		"usage": map[string]any{"prompt_tokens": 0, "total_tokens": 0}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// RejectKey returns a handler that answers every request as OpenAI answers
// a wrong API key: 401, with an error message that quotes the key — what a
// test needs to show that a provider's error never carries a secret any
// further.
func RejectKey(key string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": "Incorrect API key provided: " + key,
			"type":    "invalid_request_error",
			"code":    "invalid_api_key",
		}})
	})
}
