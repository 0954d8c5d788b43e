package openai_test

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/openai"
)

// strictSchema meets OpenAI's strict-mode rules.
const strictSchema = `{"type":"object","properties":{"title":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["title","tags"],"additionalProperties":false}`

// looseSchema does not: "tags" is optional and extra properties are allowed.
const looseSchema = `{"type":"object","properties":{"title":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["title"]}`

func ptr[T any](v T) *T { return &v }

// lastChat decodes the last chat request s received, as a generic map.
func lastChat(t *testing.T, s *apiServer) (map[string]json.RawMessage, []byte) {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request received")
	}
	r := reqs[len(reqs)-1]
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path %q; want /v1/chat/completions", r.Path)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body, r.Body
}

// schemaReply answers every chat request with a fixed JSON document.
func schemaReply(s *apiServer) {
	s.configure(func(s *apiServer) {
		s.chatReply = func(req chatWire) (int, []byte) {
			return http.StatusOK, chatCompletionBody(s.t, req.Model, `{"tags":["go"],"title":"x"}`, 30, 9)
		}
	})
}

func TestCompleteRequestBody(t *testing.T) {
	s, c := officialClient(t, nil)
	schemaReply(s)
	resp, err := c.Complete(t.Context(), memcore.CompletionRequest{
		System: "Extract the memory.",
		Messages: []memcore.Message{
			{Role: memcore.RoleUser, Content: "Use tabs."},
			{Role: memcore.RoleAssistant, Content: "Noted."},
			{Role: memcore.RoleUser, Content: "Summarise."},
		},
		MaxTokens:      300,
		Temperature:    ptr(0.0),
		ResponseSchema: &memcore.Schema{Name: "memory", Description: "A memory.", Definition: json.RawMessage(strictSchema)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"tags":["go"],"title":"x"}` {
		t.Errorf("Text = %q", resp.Text)
	}
	body, raw := lastChat(t, s)

	var msgs []messageWire
	if err := json.Unmarshal(body["messages"], &msgs); err != nil {
		t.Fatal(err)
	}
	want := []messageWire{{"system", "Extract the memory."}, {"user", "Use tabs."}, {"assistant", "Noted."}, {"user", "Summarise."}}
	if !jsonEqual(msgs, want) {
		t.Errorf("messages %s; want the system prompt first, then the conversation: %v", body["messages"], want)
	}
	if string(body["temperature"]) != "0" {
		t.Errorf("temperature %s; want exactly 0", body["temperature"])
	}
	if string(body["max_completion_tokens"]) != "300" || body["max_tokens"] != nil {
		t.Errorf("max_completion_tokens %s, max_tokens %s; want 300 and absent for api.openai.com",
			body["max_completion_tokens"], body["max_tokens"])
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Strict      bool            `json:"strict"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(body["response_format"], &rf); err != nil {
		t.Fatal(err)
	}
	if rf.Type != "json_schema" || rf.JSONSchema.Name != "memory" || rf.JSONSchema.Description != "A memory." || !rf.JSONSchema.Strict {
		t.Errorf("response_format %s; want json_schema named memory, described, strict", body["response_format"])
	}
	if string(rf.JSONSchema.Schema) != strictSchema {
		t.Errorf("schema sent %s; want the caller's %s unchanged", rf.JSONSchema.Schema, strictSchema)
	}
	checkGolden(t, "chat_request.json", raw)
}

func TestCompleteSchemaStrictness(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		strict bool
	}{
		{"strict-compatible", strictSchema, true},
		{"optional property", looseSchema, false},
		{"open object", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, false},
		{"nested open object", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}}},"required":["a"],"additionalProperties":false}`, false},
		{"oneOf", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"integer"}]}},"required":["a"],"additionalProperties":false}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := officialClient(t, nil)
			schemaReply(s)
			_, err := c.Complete(t.Context(), memcore.CompletionRequest{
				Messages:       []memcore.Message{{Role: memcore.RoleUser, Content: "go"}},
				ResponseSchema: &memcore.Schema{Definition: json.RawMessage(tt.schema)},
			})
			if err != nil {
				t.Fatal(err)
			}
			body, _ := lastChat(t, s)
			var rf struct {
				JSONSchema struct {
					Name   string          `json:"name"`
					Schema json.RawMessage `json:"schema"`
					Strict bool            `json:"strict"`
				} `json:"json_schema"`
			}
			if err := json.Unmarshal(body["response_format"], &rf); err != nil {
				t.Fatal(err)
			}
			if rf.JSONSchema.Strict != tt.strict {
				t.Errorf("strict = %t; want %t", rf.JSONSchema.Strict, tt.strict)
			}
			if rf.JSONSchema.Name != "response" {
				t.Errorf("name %q for a schema without one; want the default \"response\"", rf.JSONSchema.Name)
			}
			if string(rf.JSONSchema.Schema) != tt.schema {
				t.Errorf("schema sent %s; want %s", rf.JSONSchema.Schema, tt.schema)
			}
		})
	}
}

func TestCompleteTemperature(t *testing.T) {
	tests := []struct {
		name string
		temp *float64
		want string // the raw JSON value, "" for absent
	}{
		{"unset", nil, ""},
		{"zero", ptr(0.0), "0"},
		{"0.7", ptr(0.7), "0.7"},
		{"2", ptr(2.0), "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := ollamaClient(t, nil)
			_, err := c.Complete(t.Context(), memcore.CompletionRequest{
				Messages:    []memcore.Message{{Role: memcore.RoleUser, Content: "hi"}},
				Temperature: tt.temp,
			})
			if err != nil {
				t.Fatal(err)
			}
			body, _ := lastChat(t, s)
			if got := string(body["temperature"]); got != tt.want {
				t.Errorf("temperature %q; want %q", got, tt.want)
			}
		})
	}
}

func TestCompleteMaxTokensField(t *testing.T) {
	tests := []struct {
		name      string
		official  bool
		model     string
		wantField string
	}{
		{"api.openai.com", true, "gpt-4o-mini", "max_completion_tokens"},
		{"compatible server", false, "llama3.2", "max_tokens"},
		{"compatible server, reasoning model", false, "o3-mini", "max_completion_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *apiServer
			var c *openai.Client
			if tt.official {
				s, c = officialClient(t, nil)
			} else {
				s, c = ollamaClient(t, nil)
			}
			_, err := c.Complete(t.Context(), memcore.CompletionRequest{
				Model:     tt.model,
				Messages:  []memcore.Message{{Role: memcore.RoleUser, Content: "hi"}},
				MaxTokens: 42,
			})
			if err != nil {
				t.Fatal(err)
			}
			body, _ := lastChat(t, s)
			if string(body[tt.wantField]) != "42" {
				t.Errorf("%s = %s in %v; want 42", tt.wantField, body[tt.wantField], body)
			}
			if string(body["model"]) != `"`+tt.model+`"` {
				t.Errorf("model %s; want %q", body["model"], tt.model)
			}
		})
	}
}

func TestCompleteUsesConfiguredModel(t *testing.T) {
	s, c := ollamaClient(t, nil)
	resp, err := c.Complete(t.Context(), memcore.CompletionRequest{Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := lastChat(t, s)
	if string(body["model"]) != `"llama3.2"` {
		t.Errorf("model %s; want Config.Model", body["model"])
	}
	if resp.Model != "llama3.2" {
		t.Errorf("resp.Model %q; want the model the server reports", resp.Model)
	}
}

func TestCompleteReportsUsage(t *testing.T) {
	s, c := officialClient(t, nil)
	s.configure(func(s *apiServer) {
		s.chatReply = func(chatWire) (int, []byte) { return http.StatusOK, readFixture(s.t, "chat_completion.json") }
	})
	resp, err := c.Complete(t.Context(), memcore.CompletionRequest{Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := memcore.CompletionResponse{
		Text:  "Hello! How can I help you today?",
		Model: "gpt-4o-mini-2024-07-18",
		Usage: memcore.Usage{InputTokens: 19, OutputTokens: 10},
	}
	if *resp != want {
		t.Errorf("response %+v; want %+v (from testdata/chat_completion.json)", *resp, want)
	}
}

func TestCompleteRejectsUnusableReplies(t *testing.T) {
	for _, file := range []string{"chat_refusal.json", "chat_no_choices.json"} {
		t.Run(file, func(t *testing.T) {
			s, c := officialClient(t, nil)
			s.configure(func(s *apiServer) {
				s.chatReply = func(chatWire) (int, []byte) { return http.StatusOK, readFixture(s.t, file) }
			})
			resp, err := c.Complete(t.Context(), memcore.CompletionRequest{Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "hi"}}})
			if !errors.Is(err, memcore.ErrInvalidResponse) || memcore.IsTransient(err) {
				t.Errorf("Complete = %v, %v; want a permanent ErrInvalidResponse", resp, err)
			}
		})
	}
}

func TestCompleteRejectsBadRequestsLocally(t *testing.T) {
	user := []memcore.Message{{Role: memcore.RoleUser, Content: "hi"}}
	tests := []struct {
		name string
		req  memcore.CompletionRequest
	}{
		{"no messages and no system prompt", memcore.CompletionRequest{}},
		{"tool message", memcore.CompletionRequest{Messages: []memcore.Message{{Role: memcore.RoleTool, Content: "{}"}}}},
		{"unknown role", memcore.CompletionRequest{Messages: []memcore.Message{{Role: "narrator", Content: "x"}}}},
		{"negative MaxTokens", memcore.CompletionRequest{Messages: user, MaxTokens: -1}},
		{"negative temperature", memcore.CompletionRequest{Messages: user, Temperature: ptr(-0.5)}},
		{"NaN temperature", memcore.CompletionRequest{Messages: user, Temperature: ptr(math.NaN())}},
		{"schema name with a space", memcore.CompletionRequest{Messages: user, ResponseSchema: &memcore.Schema{Name: "my schema", Definition: json.RawMessage(strictSchema)}}},
		{"schema that is not JSON", memcore.CompletionRequest{Messages: user, ResponseSchema: &memcore.Schema{Definition: json.RawMessage(`{"type":`)}}},
		{"schema that is an array", memcore.CompletionRequest{Messages: user, ResponseSchema: &memcore.Schema{Definition: json.RawMessage(`[]`)}}},
		{"model with a space", memcore.CompletionRequest{Model: "gpt 4o", Messages: user}},
		{"embedding model for chat on OpenAI", memcore.CompletionRequest{Model: "text-embedding-3-small", Messages: user}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := officialClient(t, nil)
			resp, err := c.Complete(t.Context(), tt.req)
			if !errors.Is(err, memcore.ErrInvalidRequest) {
				t.Errorf("Complete = %v, %v; want ErrInvalidRequest", resp, err)
			}
			if n := len(s.Requests()); n != 0 {
				t.Errorf("%d requests sent for a request refused locally", n)
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	s, c := officialClient(t, func(cfg *openai.Config) {
		cfg.Organization = "org-abc"
		cfg.Project = "proj_xyz"
		cfg.Headers = http.Header{"X-Tenant": {"team-a"}}
	})
	if _, err := c.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(t.Context(), memcore.CompletionRequest{Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Requests() {
		for name, want := range map[string]string{
			"Authorization":       "Bearer " + testKey,
			"OpenAI-Organization": "org-abc",
			"OpenAI-Project":      "proj_xyz",
			"X-Tenant":            "team-a",
		} {
			if got := r.Header.Get(name); got != want {
				t.Errorf("%s: header %s = %q; want %q", r.Path, name, got, want)
			}
		}
	}
}
