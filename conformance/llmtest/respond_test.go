package llmtest

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// TestRespondAnswersTheSuitesRequests checks that the reference model gives
// the answer each case of the suite expects, and does not when the part of
// the request the case is about is missing.
func TestRespondAnswersTheSuitesRequests(t *testing.T) {
	const cw = "QUARTZ-0042"
	withoutSystem := systemPromptRequest(cw)
	withoutSystem.System = ""
	lastOnly := historyRequest(cw)
	lastOnly.Messages = lastOnly.Messages[len(lastOnly.Messages)-1:]
	withoutSchema := jsonRequest(cw, 7)
	withoutSchema.ResponseSchema = nil

	tests := []struct {
		name string
		req  memcore.CompletionRequest
		want string
	}{
		{"greeting", greetingRequest(), greetingReply},
		{"system prompt", systemPromptRequest(cw), cw},
		{"system prompt dropped", withoutSystem, unknownCodewordReply},
		{"history", historyRequest(cw), cw},
		{"history dropped", lastOnly, unknownCodewordReply},
		{"repeat codeword", repeatCodewordRequest(cw), cw},
		{"JSON schema", jsonRequest(cw, 7), `{"codeword":"QUARTZ-0042","count":7}`},
		{"JSON schema dropped", withoutSchema,
			"Sure! Here is the JSON object you asked for:\n\n```json\n{\"codeword\":\"QUARTZ-0042\",\"count\":7}\n```"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Respond(tt.req)
			if err != nil {
				t.Fatalf("Respond: %v", err)
			}
			if got != tt.want {
				t.Errorf("Respond = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRespondRejectsRequestsItCannotAnswer(t *testing.T) {
	schema := func(def string) *memcore.Schema {
		return &memcore.Schema{Name: "s", Definition: json.RawMessage(def)}
	}
	ask := []memcore.Message{userMessage(`Reply with a JSON object in which "a" is 1.`)}
	tests := []struct {
		name string
		req  memcore.CompletionRequest
	}{
		{"no messages", memcore.CompletionRequest{System: "hi"}},
		{"last message not the user's", memcore.CompletionRequest{Messages: []memcore.Message{
			userMessage("hi"), {Role: memcore.RoleAssistant, Content: "hello"}}}},
		{"schema not JSON", memcore.CompletionRequest{Messages: ask, ResponseSchema: schema(`{`)}},
		{"schema not an object", memcore.CompletionRequest{Messages: ask, ResponseSchema: schema(`{"type":"string"}`)}},
		{"no value for a property", memcore.CompletionRequest{Messages: ask,
			ResponseSchema: schema(`{"type":"object","properties":{"a":{},"b":{}}}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Respond(tt.req)
			if !errors.Is(err, memcore.ErrInvalidRequest) {
				t.Errorf("Respond = %q, %v; want an error matching memcore.ErrInvalidRequest", got, err)
			}
		})
	}
}

func TestRespondUsesTheLastCodewordAndStatement(t *testing.T) {
	req := memcore.CompletionRequest{
		System: `The codeword is AMBER-1111 and "n" is 1.`,
		Messages: []memcore.Message{
			userMessage(`Actually the codeword is CEDAR-2222 and "n" is "two".`),
			userMessage("What is the codeword?"),
		},
	}
	if got, err := Respond(req); err != nil || got != "CEDAR-2222" {
		t.Errorf("Respond = %q, %v; want the later codeword CEDAR-2222", got, err)
	}
	req.Messages[1] = userMessage("Reply with the JSON object.")
	req.ResponseSchema = &memcore.Schema{Name: "n", Definition: json.RawMessage(`{"type":"object","properties":{"n":{}}}`)}
	if got, err := Respond(req); err != nil || got != `{"n":"two"}` {
		t.Errorf("Respond = %q, %v; want the later value \"two\"", got, err)
	}
}

func TestNewCodewordsAreDistinctAndRecognised(t *testing.T) {
	const n = 200
	cws := newCodewords(n)
	seen := make(map[string]bool)
	for _, cw := range cws {
		if seen[cw] {
			t.Errorf("codeword %s repeated", cw)
		}
		seen[cw] = true
		if got := codewordPattern.FindString("say " + cw + "."); got != cw {
			t.Errorf("codeword %s not recognised by the pattern (found %q)", cw, got)
		}
	}
	if len(cws) != n {
		t.Errorf("newCodewords(%d) returned %d", n, len(cws))
	}
}

func TestDecodeObject(t *testing.T) {
	tests := []struct {
		text string
		ok   bool
	}{
		{`{"a":1}`, true},
		{" \n{\"a\": 1}\n", true},
		{`{"a":1} trailing`, false},
		{`{"a":1}{"b":2}`, false},
		{"```json\n{\"a\":1}\n```", false},
		{`[1]`, false},
		{`null`, false},
		{``, false},
	}
	for _, tt := range tests {
		_, err := decodeObject(tt.text)
		if (err == nil) != tt.ok {
			t.Errorf("decodeObject(%q) error = %v, want ok=%t", tt.text, err, tt.ok)
		}
	}
}
