package fakemodel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/tools/internal/fakemodel"
	openai "github.com/sashabaranov/go-openai"
)

// start starts a server with opts, closed when the test ends.
func start(t *testing.T, opts fakemodel.Options) *fakemodel.Server {
	t.Helper()
	srv, err := fakemodel.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// post sends body as JSON to the server's path and returns the response's
// status and body.
func post(t *testing.T, srv *fakemodel.Server, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(srv.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// events returns the JSON data of each server-sent event of a stream, with
// its event name ("" when it has none) under "_event".
func events(t *testing.T, stream string) []map[string]any {
	t.Helper()
	var out []map[string]any
	name := ""
	sc := bufio.NewScanner(strings.NewReader(stream))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var v map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &v); err != nil {
				t.Fatalf("event data %q: %v", line, err)
			}
			v["_event"] = name
			out = append(out, v)
			name = ""
		}
	}
	return out
}

// at walks a decoded JSON value by object keys and array indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// The Messages API: a request's conversation (text, tool use, tool result
// as a string or blocks) is parsed, and a reply is streamed as Claude
// Code reads it — a text block, or a tool_use block whose input arrives as
// one JSON delta, with the matching stop reason — or sent whole.
func TestAnthropic(t *testing.T) {
	var got *fakemodel.Request
	srv := start(t, fakemodel.Options{Anthropic: func(r *fakemodel.Request) fakemodel.Reply {
		got = r
		if len(r.Results()) == 0 {
			return fakemodel.Call("mcp__forgemem__memory_search", map[string]any{"query": "errors"})
		}
		return fakemodel.Say("Found it.")
	}})
	status, body := post(t, srv, "/v1/messages?beta=true", `{"model":"claude-x","stream":true,
		"system":[{"type":"text","text":"You are helpful."}],
		"tools":[{"name":"Read"},{"name":"mcp__forgemem__memory_search"}],
		"messages":[{"role":"user","content":"How do we wrap errors?"}]}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	evs := events(t, body)
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e["_event"].(string))
	}
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	if at(evs[1], "content_block", "type") != "tool_use" || at(evs[1], "content_block", "name") != "mcp__forgemem__memory_search" ||
		at(evs[2], "delta", "partial_json") != `{"query":"errors"}` || at(evs[4], "delta", "stop_reason") != "tool_use" {
		t.Errorf("the tool call's events: %v", evs)
	}
	if got.Model != "claude-x" || !got.Stream || got.System != "You are helpful." || !got.HasTool("memory_search") ||
		len(got.Messages) != 1 || got.Messages[0].Text != "How do we wrap errors?" {
		t.Errorf("parsed %+v", got)
	}
	id := at(evs[1], "content_block", "id").(string)

	status, body = post(t, srv, "/v1/messages", `{"model":"claude-x","messages":[
		{"role":"user","content":"How do we wrap errors?"},
		{"role":"assistant","content":[{"type":"tool_use","id":"`+id+`","name":"mcp__forgemem__memory_search","input":{"query":"errors"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":[{"type":"text","text":"Errors are wrapped with %w."}]}]}]}`)
	var msg map[string]any
	if err := json.Unmarshal([]byte(body), &msg); err != nil || status != http.StatusOK {
		t.Fatalf("status %d, %v: %s", status, err, body)
	}
	if at(msg, "content", 0, "text") != "Found it." || msg["stop_reason"] != "end_turn" {
		t.Errorf("reply %s", body)
	}
	res, ok := got.ResultOf("memory_search")
	if !ok || res.ID != id || res.Text != "Errors are wrapped with %w." {
		t.Errorf("the tool's result: %+v, %v", res, ok)
	}
	if ex := got.Exchanges(); len(ex) != 1 || ex[0].Result == nil || ex[0].Result.ID != id {
		t.Errorf("exchanges %+v", ex)
	}
	// Token counts are logged but are no model turn.
	post(t, srv, "/v1/messages/count_tokens", `{"model":"claude-x","messages":[{"role":"user","content":"hi"}]}`)
	if n := len(srv.RequestsOf(fakemodel.APIAnthropic)); n != 2 {
		t.Errorf("RequestsOf gives %d turns, want 2", n)
	}
}

// The Responses API: function calls of a namespace's tools (Codex's MCP
// tools), Codex's client-side tool search, and what the search found
// offered from then on.
func TestResponses(t *testing.T) {
	var got *fakemodel.Request
	srv := start(t, fakemodel.Options{Responses: func(r *fakemodel.Request) fakemodel.Reply {
		got = r
		switch len(r.Results()) {
		case 0:
			return fakemodel.Call(fakemodel.ToolSearch, map[string]any{"query": "memory"})
		default:
			return fakemodel.Call(r.Tool("memory_recall"), map[string]any{"query": "errors"})
		}
	}})
	status, body := post(t, srv, "/v1/responses", `{"model":"gpt-x","stream":true,"instructions":"Be brief.",
		"tools":[{"type":"function","name":"exec_command"},{"type":"tool_search"}],
		"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"How do we wrap errors?"}]}]}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	evs := events(t, body)
	last := evs[len(evs)-1]
	if last["type"] != "response.completed" || at(last, "response", "output", 0, "type") != "tool_search_call" ||
		at(last, "response", "output", 0, "arguments", "query") != "memory" {
		t.Fatalf("events %v", evs)
	}
	if got.System != "Be brief." || !got.HasTool("tool_search") || got.HasTool("memory_recall") {
		t.Errorf("parsed %+v", got)
	}
	callID := at(last, "response", "output", 0, "call_id")
	status, body = post(t, srv, "/v1/responses", `{"model":"gpt-x","stream":true,
		"tools":[{"type":"function","name":"exec_command"},{"type":"tool_search"}],
		"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"How do we wrap errors?"}]},
		{"type":"tool_search_call","call_id":"`+callID.(string)+`","execution":"client","arguments":{"query":"memory"}},
		{"type":"tool_search_output","call_id":"`+callID.(string)+`","execution":"client","tools":[
			{"type":"namespace","name":"mcp__forgemem","tools":[{"type":"function","name":"memory_recall"}]}]}]}`)
	evs = events(t, body)
	last = evs[len(evs)-1]
	if status != http.StatusOK || at(last, "response", "output", 0, "namespace") != "mcp__forgemem" ||
		at(last, "response", "output", 0, "name") != "memory_recall" || at(last, "response", "output", 0, "arguments") != `{"query":"errors"}` {
		t.Fatalf("status %d, events %v", status, evs)
	}
	if res, ok := got.ResultOf(fakemodel.ToolSearch); !ok || res.Text != "mcp__forgemem.memory_recall" {
		t.Errorf("the tool search's result: %+v, %v", res, ok)
	}
	if got.Tool("memory_recall") != "mcp__forgemem.memory_recall" {
		t.Errorf("the tools found are not offered: %v", got.Tools)
	}
}

// The Gemini API: functionCall and functionResponse parts, streamed with
// alt=sse or sent whole; countTokens is answered and is no turn.
func TestGemini(t *testing.T) {
	var got *fakemodel.Request
	srv := start(t, fakemodel.Options{Gemini: func(r *fakemodel.Request) fakemodel.Reply {
		got = r
		if len(r.Results()) == 0 {
			return fakemodel.Call("mcp_forgemem_memory_recall", map[string]any{"query": "errors"})
		}
		return fakemodel.Say("Done.")
	}})
	status, body := post(t, srv, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", `{
		"systemInstruction":{"parts":[{"text":"Be brief."}]},
		"tools":[{"functionDeclarations":[{"name":"mcp_forgemem_memory_recall"}]}],
		"contents":[{"role":"user","parts":[{"text":"How do we wrap errors?"}]}]}`)
	evs := events(t, body)
	if status != http.StatusOK || len(evs) != 1 || at(evs[0], "candidates", 0, "content", "parts", 0, "functionCall", "name") != "mcp_forgemem_memory_recall" {
		t.Fatalf("status %d, events %v", status, evs)
	}
	if got.Model != "gemini-x" || !got.Stream || got.System != "Be brief." || !got.HasTool("memory_recall") {
		t.Errorf("parsed %+v", got)
	}
	status, body = post(t, srv, "/v1beta/models/gemini-x:generateContent", `{"contents":[
		{"role":"user","parts":[{"text":"How do we wrap errors?"}]},
		{"role":"model","parts":[{"functionCall":{"name":"mcp_forgemem_memory_recall","args":{"query":"errors"}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"mcp_forgemem_memory_recall","response":{"content":[{"type":"text","text":"Errors are wrapped."}]}}}]}]}`)
	var resp map[string]any
	if err := json.Unmarshal([]byte(body), &resp); err != nil || status != http.StatusOK || at(resp, "candidates", 0, "content", "parts", 0, "text") != "Done." {
		t.Fatalf("status %d, %v: %s", status, err, body)
	}
	if res, ok := got.ResultOf("memory_recall"); !ok || res.Name != "mcp_forgemem_memory_recall" || !strings.Contains(res.Text, "Errors are wrapped.") {
		t.Errorf("the function's response: %+v, %v", res, ok)
	}
	if status, body = post(t, srv, "/v1beta/models/gemini-x:countTokens", `{"contents":[]}`); status != http.StatusOK || !strings.Contains(body, "totalTokens") {
		t.Errorf("countTokens: %d %s", status, body)
	}
	if n := len(srv.RequestsOf(fakemodel.APIGemini)); n != 2 {
		t.Errorf("RequestsOf gives %d turns, want 2", n)
	}
}

// Chat completions and embeddings through a real OpenAI client, as
// forgemem's openai provider calls them.
func TestChatAndEmbeddings(t *testing.T) {
	srv := start(t, fakemodel.Options{Chat: func(r *fakemodel.Request) fakemodel.Reply {
		return fakemodel.Say(`{"memories":[]}`)
	}})
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = srv.URL() + "/v1"
	client := openai.NewClientWithConfig(cfg)
	ctx := context.Background()
	resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: "classifier",
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "Classify."},
			{Role: "user", Content: "CONVERSATION (oldest first):\nUser: hi"},
		},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: "json_schema", JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "memories", Schema: json.RawMessage(`{}`)}},
	})
	if err != nil || resp.Choices[0].Message.Content != `{"memories":[]}` {
		t.Fatalf("chat: %v, %+v", err, resp)
	}
	chat := srv.RequestsOf(fakemodel.APIChat)
	if len(chat) != 1 || chat[0].Schema != "memories" || chat[0].System != "Classify." || chat[0].UserTexts()[0] != "CONVERSATION (oldest first):\nUser: hi" {
		t.Errorf("chat requests %+v", chat)
	}
	emb, err := client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Model: "embedder", Input: []string{"wrap errors", "wrap errors", "deploy with helm"}})
	if err != nil || len(emb.Data) != 3 {
		t.Fatalf("embeddings: %v, %+v", err, emb)
	}
	if !reflect.DeepEqual(emb.Data[0].Embedding, emb.Data[1].Embedding) || reflect.DeepEqual(emb.Data[0].Embedding, emb.Data[2].Embedding) {
		t.Error("the same text got different vectors, or different texts the same")
	}
	if in := srv.RequestsOf(fakemodel.APIEmbeddings); len(in) != 1 || len(in[0].Inputs) != 3 {
		t.Errorf("embedding requests %+v", in)
	}
}

// A scripted failure is an HTTP error with an error body; an endpoint the
// server does not serve is a 404, logged.
func TestFailuresAndUnknownEndpoints(t *testing.T) {
	srv := start(t, fakemodel.Options{Anthropic: func(*fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Status: http.StatusTooManyRequests} }})
	if status, body := post(t, srv, "/v1/messages", `{"model":"m","messages":[]}`); status != http.StatusTooManyRequests || !strings.Contains(body, `"error"`) {
		t.Errorf("scripted failure: %d %s", status, body)
	}
	if status, _ := post(t, srv, "/v1/models/list", `{}`); status != http.StatusNotFound {
		t.Errorf("unknown endpoint: %d", status)
	}
	if other := srv.RequestsOf(fakemodel.APIOther); len(other) != 1 || other[0].Path != "/v1/models/list" {
		t.Errorf("unknown requests logged: %+v", other)
	}
	srv.Reset()
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests after Reset", n)
	}
}

// As a proxy the server refuses every request for another host, by
// CONNECT (https) or absolute URL (http), and logs the host.
func TestProxyRefusesOtherHosts(t *testing.T) {
	srv := start(t, fakemodel.Options{})
	proxy, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	resp, err := client.Get("http://telemetry.example.invalid/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("http through the proxy: %d", resp.StatusCode)
	}
	_, err = client.Get("https://updates.example.invalid/latest")
	if err == nil {
		t.Error("https through the proxy went through")
	}
	var hosts []string
	for _, r := range srv.RequestsOf(fakemodel.APIProxy) {
		hosts = append(hosts, r.Method+" "+r.Host)
	}
	want := []string{"GET telemetry.example.invalid", "CONNECT updates.example.invalid:443"}
	if !reflect.DeepEqual(hosts, want) {
		t.Errorf("refused %v, want %v", hosts, want)
	}
}

// ToolIs matches a tool's name with the prefixes agents give an MCP
// server's tools, and nothing else.
func TestToolIs(t *testing.T) {
	for _, tc := range []struct {
		full string
		want bool
	}{
		{"memory_recall", true},
		{"mcp__forgemem__memory_recall", true},
		{"mcp_forgemem_memory_recall", true},
		{"mcp__forgemem.memory_recall", true},
		{"xmemory_recall", false},
		{"memory_recall_all", false},
	} {
		if got := fakemodel.ToolIs(tc.full, "memory_recall"); got != tc.want {
			t.Errorf("ToolIs(%q) = %v", tc.full, got)
		}
	}
}

// Call refuses arguments that are no JSON value.
func TestCallPanicsOnBadArguments(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("no panic")
		} else if !strings.Contains(r.(string), "f") {
			t.Errorf("panic %v", r)
		}
	}()
	fakemodel.Call("f", map[string]any{"c": make(chan int)})
}
