package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"google.golang.org/genai"

	"github.com/forgemem/forgemem/memcore"
)

var update = flag.Bool("update", false, "rewrite the golden request bodies in testdata/golden")

// checkGolden compares the JSON document got with testdata/golden/name,
// both re-indented, or rewrites the file with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, got, "", "  "); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, got)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("request body differs from %s (run go test -update if the change is intended)\ngot:\n%s\nwant:\n%s", path, buf.Bytes(), want)
	}
}

func user(s string) memcore.Message { return memcore.Message{Role: memcore.RoleUser, Content: s} }
func assistant(s string) memcore.Message {
	return memcore.Message{Role: memcore.RoleAssistant, Content: s}
}

func ptr[T any](v T) *T { return &v }

// TestCompleteRequestBody checks the wire request of a call that uses
// every field: the system prompt (with a system message folded in), the
// roles, merged consecutive turns, the token cap, the temperature and the
// response schema.
func TestCompleteRequestBody(t *testing.T) {
	srv := newFakeServer(t)
	srv.respond = func(memcore.CompletionRequest) (string, error) { return `{"kind":"preference"}`, nil }
	c := srv.client(t, Config{Model: "gemini-2.5-flash"})
	resp, err := c.Complete(context.Background(), memcore.CompletionRequest{
		System: "You classify memories.",
		Messages: []memcore.Message{
			user("I prefer tabs."),
			{Role: memcore.RoleSystem, Content: "Answer in JSON."},
			user("Also, no trailing whitespace."),
			assistant("Noted."),
			user("Classify the above."),
		},
		MaxTokens:   256,
		Temperature: ptr(0.2),
		ResponseSchema: &memcore.Schema{
			Name:        "classification",
			Description: "The kind of memory.",
			Definition:  json.RawMessage(`{"type":"object","properties":{"kind":{"type":"string","enum":["preference","convention"]}},"required":["kind"]}`),
		},
	})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Text != `{"kind":"preference"}` {
		t.Errorf("Text = %q", resp.Text)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	if got, want := reqs[0].Path, "/v1beta/models/gemini-2.5-flash:generateContent"; got != want {
		t.Errorf("path %s, want %s", got, want)
	}
	if reqs[0].APIKey != testKey {
		t.Errorf("x-goog-api-key %q, want %q", reqs[0].APIKey, testKey)
	}
	checkGolden(t, "generate_content_request.json", reqs[0].Body)

	// The same facts, asserted one by one.
	var body struct {
		SystemInstruction wireContent   `json:"systemInstruction"`
		Contents          []wireContent `json:"contents"`
		GenerationConfig  struct {
			Temperature        float64        `json:"temperature"`
			MaxOutputTokens    int            `json:"maxOutputTokens"`
			ResponseMimeType   string         `json:"responseMimeType"`
			ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if got, want := body.SystemInstruction.text(), "You classify memories.\n\nAnswer in JSON."; got != want {
		t.Errorf("system instruction %q, want %q", got, want)
	}
	var roles []string
	for _, c := range body.Contents {
		roles = append(roles, c.Role)
	}
	if got, want := roles, []string{"user", "model", "user"}; !slices.Equal(got, want) {
		t.Errorf("roles %v, want %v (consecutive user messages merged, assistant as model)", got, want)
	}
	if n := len(body.Contents[0].Parts); n != 2 {
		t.Errorf("first turn has %d parts, want the 2 user messages", n)
	}
	gc := body.GenerationConfig
	if gc.Temperature != 0.2 || gc.MaxOutputTokens != 256 || gc.ResponseMimeType != "application/json" {
		t.Errorf("generationConfig %+v", gc)
	}
	if gc.ResponseJSONSchema["type"] != "object" || gc.ResponseJSONSchema["description"] != "The kind of memory." {
		t.Errorf("responseJsonSchema %v: want the schema with its description", gc.ResponseJSONSchema)
	}
}

func TestCompleteMinimalRequestBody(t *testing.T) {
	srv := newFakeServer(t)
	c := srv.client(t, Config{})
	if _, err := c.Complete(context.Background(), memcore.CompletionRequest{Messages: []memcore.Message{user("Say hello.")}}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "generate_content_minimal_request.json", srv.Requests()[0].Body)
}

func TestCompleteRequestModelOverridesConfig(t *testing.T) {
	srv := newFakeServer(t)
	c := srv.client(t, Config{Model: "gemini-2.5-pro"})
	resp, err := c.Complete(context.Background(), memcore.CompletionRequest{Model: "gemini-2.5-flash-lite", Messages: []memcore.Message{user("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := srv.Requests()[0].Path, "/v1beta/models/gemini-2.5-flash-lite:generateContent"; got != want {
		t.Errorf("path %s, want %s", got, want)
	}
	if resp.Model != "gemini-2.5-flash-lite" {
		t.Errorf("Model = %q, want the model that answered", resp.Model)
	}
}

func TestCompleteResponses(t *testing.T) {
	tests := []struct {
		fixture   string
		wantText  string
		wantUsage memcore.Usage
		wantModel string
		wantErr   error
	}{
		{"generate_content.json", "Hello! How can I help you today?", memcore.Usage{InputTokens: 8, OutputTokens: 10}, "gemini-2.0-flash", nil},
		// Thought parts are left out of the text; thinking tokens count as output.
		{"generate_content_thinking.json", "Hello there!", memcore.Usage{InputTokens: 9, OutputTokens: 15}, "gemini-2.5-flash", nil},
		{"generate_content_blocked.json", "", memcore.Usage{}, "", memcore.ErrInvalidResponse},
		{"generate_content_no_text.json", "", memcore.Usage{}, "", memcore.ErrInvalidResponse},
		{"generate_content_no_candidates.json", "", memcore.Usage{}, "", memcore.ErrInvalidResponse},
		{"malformed_truncated.txt", "", memcore.Usage{}, "", memcore.ErrInvalidResponse},
		{"malformed_html.html", "", memcore.Usage{}, "", memcore.ErrInvalidResponse},
		// genai v1.77.0 panics on this body; the panic must not escape.
		{"malformed_null.json", "", memcore.Usage{}, "", memcore.ErrInvalidResponse},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			srv := newFakeServer(t)
			srv.failNext(1, okFixture(t, tt.fixture))
			c := srv.client(t, Config{})
			resp, err := c.Complete(context.Background(), memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if memcore.IsTransient(err) {
					t.Errorf("%v is transient", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != tt.wantText || resp.Usage != tt.wantUsage || resp.Model != tt.wantModel {
				t.Errorf("got %+v, want text %q usage %+v model %q", resp, tt.wantText, tt.wantUsage, tt.wantModel)
			}
		})
	}
}

func TestCompleteBlockedPromptSaysWhy(t *testing.T) {
	srv := newFakeServer(t)
	srv.failNext(1, okFixture(t, "generate_content_blocked.json"))
	c := srv.client(t, Config{})
	_, err := c.Complete(context.Background(), memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}})
	if !errors.Is(err, memcore.ErrInvalidResponse) {
		t.Fatalf("err = %v, want ErrInvalidResponse", err)
	}
	if !bytes.Contains([]byte(err.Error()), []byte("SAFETY")) {
		t.Errorf("error %q does not give the block reason", err)
	}
}

// TestCompleteRefusesBadRequests checks that requests the API would refuse,
// or that cannot be expressed on its wire, fail with ErrInvalidRequest
// before anything is sent.
func TestCompleteRefusesBadRequests(t *testing.T) {
	tests := []struct {
		name string
		req  memcore.CompletionRequest
	}{
		{"no messages", memcore.CompletionRequest{System: "hi"}},
		{"only a system message", memcore.CompletionRequest{Messages: []memcore.Message{{Role: memcore.RoleSystem, Content: "x"}}}},
		{"tool message", memcore.CompletionRequest{Messages: []memcore.Message{user("hi"), {Role: memcore.RoleTool, Content: "{}"}}}},
		{"unknown role", memcore.CompletionRequest{Messages: []memcore.Message{{Role: "narrator", Content: "x"}}}},
		{"empty message", memcore.CompletionRequest{Messages: []memcore.Message{user("")}}},
		{"negative max tokens", memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}, MaxTokens: -1}},
		{"negative temperature", memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}, Temperature: ptr(-0.1)}},
		{"temperature above 2", memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}, Temperature: ptr(2.5)}},
		{"schema not JSON", memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}, ResponseSchema: &memcore.Schema{Name: "s", Definition: json.RawMessage(`{"type":`)}}},
		{"schema not an object", memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}, ResponseSchema: &memcore.Schema{Name: "s", Definition: json.RawMessage(`["object"]`)}}},
		{"schema empty", memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}, ResponseSchema: &memcore.Schema{Name: "s"}}},
		{"unknown model", memcore.CompletionRequest{Model: "claude-3", Messages: []memcore.Message{user("hi")}}},
		{"model with a query", memcore.CompletionRequest{Model: "gemini-2.5-flash?key=x", Messages: []memcore.Message{user("hi")}}},
	}
	// The Google endpoint, so that model names are checked, behind a
	// transport that sends nothing.
	var sent atomic.Int32
	c, err := New(Config{APIKey: testKey, HTTPClient: &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		sent.Add(1)
		return nil, errors.New("this test sends nothing")
	})}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Complete(context.Background(), tt.req)
			if !errors.Is(err, memcore.ErrInvalidRequest) {
				t.Errorf("err = %v, want ErrInvalidRequest", err)
			}
		})
	}
	if n := sent.Load(); n != 0 {
		t.Errorf("%d requests were sent for bad requests, want none", n)
	}
}

// TestCompleteNativeErrorReachable checks that errors.As finds the SDK's
// APIError both as a value and as a pointer.
func TestCompleteNativeErrorReachable(t *testing.T) {
	srv := newFakeServer(t)
	srv.failNext(1, fixtureError(t, "429_resource_exhausted.json"))
	c := srv.client(t, Config{})
	_, err := c.Complete(context.Background(), memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}})
	if !errors.Is(err, memcore.ErrRateLimited) {
		t.Fatalf("err = %v, want ErrRateLimited", err)
	}
	var byValue genai.APIError
	if !errors.As(err, &byValue) || byValue.Code != 429 || byValue.Status != "RESOURCE_EXHAUSTED" {
		t.Errorf("errors.As(genai.APIError) = %+v", byValue)
	}
	var byPointer *genai.APIError
	if !errors.As(err, &byPointer) || byPointer == nil || byPointer.Code != 429 {
		t.Errorf("errors.As(*genai.APIError) = %+v", byPointer)
	}
	if len(byValue.Details) == 0 {
		t.Error("the error details (quota, retry delay) were lost")
	}
}

// TestCompleteTemperatureZero: a temperature of 0 (deterministic) must be
// sent, not dropped as an empty value.
func TestCompleteTemperatureZero(t *testing.T) {
	srv := newFakeServer(t)
	c := srv.client(t, Config{})
	for _, temp := range []*float64{ptr(0.0), nil} {
		if _, err := c.Complete(context.Background(), memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}, Temperature: temp}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	for i, wantSent := range []bool{true, false} {
		var body struct {
			GenerationConfig map[string]json.RawMessage `json:"generationConfig"`
		}
		if err := json.Unmarshal(reqs[i].Body, &body); err != nil {
			t.Fatal(err)
		}
		got, sent := body.GenerationConfig["temperature"]
		if sent != wantSent || (sent && string(got) != "0") {
			t.Errorf("request %d: temperature %s (sent %t), want sent %t as 0", i, got, sent, wantSent)
		}
	}
}
