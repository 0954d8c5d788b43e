package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/forgemem/forgemem/conformance/llmtest"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// testKey is the API key the test servers expect.
const testKey = "sk-test-4321"

// apiServer is an httptest server speaking OpenAI's chat-completions and
// embeddings wire format. It checks every request it receives (method,
// path, headers, JSON body, fields), records it, and answers by playing the
// model with llmtest.Respond and an embedding function, unless told to fail.
type apiServer struct {
	t   *testing.T
	srv *httptest.Server

	// prefix is the path of the API root ("/v1").
	prefix string
	// wantKey is the expected bearer token; "" means no Authorization
	// header may be sent.
	wantKey string

	mu       sync.Mutex
	requests []recorded
	// fail, when set, answers every request.
	fail *failure
	// hold makes every request wait until the client goes away.
	hold bool
	// order, when set, gives the order in which the items of an
	// embeddings reply are listed (a permutation of 0..n-1); nil lists
	// them in input order.
	order func(n int) []int
	// embed computes the vectors of an embeddings request; nil means
	// hashEmbed with the requested dimensions (or 8).
	embed func(texts []string, dims int) [][]float32
	// chatReply, when set, replaces the reply to a chat request: it gets
	// the decoded request and returns status and body.
	chatReply func(req chatWire) (int, []byte)
	// embedReply, when set, replaces the reply to an embeddings request.
	embedReply func(req embedWire) (int, []byte)

	closed chan struct{}
}

// failure is a canned answer: status, content type and body.
type failure struct {
	status      int
	contentType string
	body        []byte
}

// recorded is one request the server received.
type recorded struct {
	Path   string
	Header http.Header
	Body   []byte
}

// chatWire is the chat-completions request body as OpenAI documents it
// (the fields this package may send).
type chatWire struct {
	Model               string        `json:"model"`
	Messages            []messageWire `json:"messages"`
	MaxTokens           *int          `json:"max_tokens"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	Temperature         *float64      `json:"temperature"`
	Stream              bool          `json:"stream"`
	ResponseFormat      *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Strict      bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

type messageWire struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// embedWire is the embeddings request body.
type embedWire struct {
	Input          []string `json:"input"`
	Model          string   `json:"model"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     *int     `json:"dimensions"`
	User           string   `json:"user"`
}

// newAPIServer starts a server expecting wantKey; it is closed when the
// test ends.
func newAPIServer(t *testing.T, wantKey string) *apiServer {
	s := &apiServer{t: t, prefix: "/v1", wantKey: wantKey, closed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Close releases held requests and stops the server. It may be called more
// than once.
func (s *apiServer) Close() {
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		return
	default:
		close(s.closed)
	}
	s.mu.Unlock()
	s.srv.Close()
}

// BaseURL is the server's API root, for Config.BaseURL.
func (s *apiServer) BaseURL() string { return s.srv.URL + s.prefix }

// Client returns an HTTP client that sends every request, whatever its
// host (api.openai.com included), to this server, so that tests can use the
// default BaseURL and never reach the network.
func (s *apiServer) Client() *http.Client {
	addr := s.srv.Listener.Addr().String()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	s.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: &plainHTTP{tr}}
}

// plainHTTP turns https requests into http ones (the test server does not
// speak TLS).
type plainHTTP struct{ next http.RoundTripper }

func (p *plainHTTP) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "https" {
		req = req.Clone(req.Context())
		req.URL.Scheme = "http"
	}
	return p.next.RoundTrip(req)
}

// Requests returns what the server has received so far.
func (s *apiServer) Requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.requests...)
}

// configure changes the server's settings under its lock.
func (s *apiServer) configure(f func(s *apiServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// setFail makes every later request fail with status and the fixture named
// file (under testdata/errors), sent as JSON or plain text by extension.
func (s *apiServer) setFail(status int, file string) {
	s.t.Helper()
	body := readFixture(s.t, filepath.Join("errors", file))
	ct := "application/json"
	switch filepath.Ext(file) {
	case ".txt":
		ct = "text/plain; charset=utf-8"
	case ".html":
		ct = "text/html"
	}
	s.mu.Lock()
	s.fail = &failure{status: status, contentType: ct, body: body}
	s.mu.Unlock()
}

// readFixture reads testdata/name.
func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	return b
}

// errorf reports a malformed request: a test failure, and a 400 in
// OpenAI's error format for the client.
func (s *apiServer) errorf(w http.ResponseWriter, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.t.Errorf("test server: bad request: %s", msg)
	writeAPIError(w, http.StatusBadRequest, "invalid_request_error", "", msg)
}

// writeAPIError writes an error in OpenAI's documented shape.
func writeAPIError(w http.ResponseWriter, status int, typ, code, msg string) {
	body := map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}}
	if code != "" {
		body["error"].(map[string]any)["code"] = code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away
	}
	s.mu.Lock()
	s.requests = append(s.requests, recorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	fail, hold := s.fail, s.hold
	s.mu.Unlock()

	if hold {
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
		return
	}
	if !s.checkHeaders(w, r) {
		return
	}
	if fail != nil {
		w.Header().Set("Content-Type", fail.contentType)
		w.WriteHeader(fail.status)
		_, _ = w.Write(fail.body)
		return
	}
	switch r.URL.Path {
	case s.prefix + "/chat/completions":
		s.serveChat(w, body)
	case s.prefix + "/embeddings":
		s.serveEmbeddings(w, body)
	default:
		s.errorf(w, "unexpected path %q", r.URL.Path)
	}
}

// checkHeaders checks the method and the headers every request must carry.
func (s *apiServer) checkHeaders(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case r.Method != http.MethodPost:
		s.errorf(w, "method %s, want POST", r.Method)
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		s.errorf(w, "Content-Type %q, want application/json", r.Header.Get("Content-Type"))
	case s.wantKey == "" && r.Header.Get("Authorization") != "":
		s.errorf(w, "Authorization header %q sent without an API key", r.Header.Get("Authorization"))
	case s.wantKey != "" && r.Header.Get("Authorization") != "Bearer "+s.wantKey:
		writeAPIError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.")
	default:
		return true
	}
	return false
}

// decodeStrict decodes a JSON body into v, refusing unknown fields and
// trailing data.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON object")
	}
	return nil
}

func (s *apiServer) serveChat(w http.ResponseWriter, body []byte) {
	var req chatWire
	if err := decodeStrict(body, &req); err != nil {
		s.errorf(w, "chat request body: %v", err)
		return
	}
	mreq, err := toCompletionRequest(req)
	if err != nil {
		s.errorf(w, "chat request: %v", err)
		return
	}
	s.mu.Lock()
	custom := s.chatReply
	s.mu.Unlock()
	if custom != nil {
		status, out := custom(req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(out)
		return
	}
	text, err := llmtest.Respond(mreq)
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, "invalid_request_error", "", err.Error())
		return
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += 4 + len(strings.Fields(m.Content))
	}
	out := chatCompletionBody(s.t, req.Model, text, prompt, max(1, len(strings.Fields(text))))
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// toCompletionRequest checks a chat request and turns it back into what
// the caller asked for, as the model sees it: leading system messages
// become the system prompt.
func toCompletionRequest(req chatWire) (memcore.CompletionRequest, error) {
	var out memcore.CompletionRequest
	if req.Model == "" {
		return out, errors.New("no model")
	}
	if req.Stream {
		return out, errors.New("stream requested")
	}
	if len(req.Messages) == 0 {
		return out, errors.New("no messages")
	}
	if req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 2) {
		return out, fmt.Errorf("temperature %v out of range 0..2", *req.Temperature)
	}
	if req.MaxTokens != nil && req.MaxCompletionTokens != nil {
		return out, errors.New("both max_tokens and max_completion_tokens")
	}
	var system []string
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "developer":
			if len(out.Messages) == 0 {
				system = append(system, m.Content)
				continue
			}
			out.Messages = append(out.Messages, memcore.Message{Role: memcore.RoleSystem, Content: m.Content})
		case "user":
			out.Messages = append(out.Messages, memcore.Message{Role: memcore.RoleUser, Content: m.Content})
		case "assistant":
			out.Messages = append(out.Messages, memcore.Message{Role: memcore.RoleAssistant, Content: m.Content})
		default:
			return out, fmt.Errorf("message %d: role %q", i, m.Role)
		}
	}
	out.System = strings.Join(system, "\n")
	if rf := req.ResponseFormat; rf != nil {
		if rf.Type != "json_schema" || rf.JSONSchema == nil {
			return out, fmt.Errorf("response_format %+v, want json_schema with a schema", rf)
		}
		js := rf.JSONSchema
		if js.Name == "" || len(js.Schema) == 0 || !json.Valid(js.Schema) {
			return out, fmt.Errorf("json_schema without a name or a valid schema: %+v", js)
		}
		out.ResponseSchema = &memcore.Schema{Name: js.Name, Description: js.Description, Definition: js.Schema}
	}
	return out, nil
}

// chatCompletionBody returns testdata/chat_completion.json with its model,
// reply and usage replaced.
func chatCompletionBody(t testing.TB, model, text string, prompt, completion int) []byte {
	var doc map[string]any
	if err := json.Unmarshal(readFixture(t, "chat_completion.json"), &doc); err != nil {
		t.Errorf("chat fixture: %v", err)
		return nil
	}
	doc["model"] = model
	choice := doc["choices"].([]any)[0].(map[string]any)
	choice["message"].(map[string]any)["content"] = text
	usage := doc["usage"].(map[string]any)
	usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"] = prompt, completion, prompt+completion
	out, err := json.Marshal(doc)
	if err != nil {
		t.Errorf("chat fixture: %v", err)
	}
	return out
}

func (s *apiServer) serveEmbeddings(w http.ResponseWriter, body []byte) {
	var req embedWire
	if err := decodeStrict(body, &req); err != nil {
		s.errorf(w, "embeddings request body: %v", err)
		return
	}
	switch {
	case req.Model == "":
		s.errorf(w, "embeddings request without a model")
		return
	case len(req.Input) == 0:
		s.errorf(w, "embeddings request without input")
		return
	case req.EncodingFormat != "float":
		s.errorf(w, "encoding_format %q, want float", req.EncodingFormat)
		return
	case req.Dimensions != nil && *req.Dimensions <= 0:
		s.errorf(w, "dimensions %d", *req.Dimensions)
		return
	}
	s.mu.Lock()
	custom, embed, permute := s.embedReply, s.embed, s.order
	s.mu.Unlock()
	if custom != nil {
		status, out := custom(req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(out)
		return
	}
	dims := nativeDims(req.Model)
	if req.Dimensions != nil {
		dims = *req.Dimensions
	}
	var vecs [][]float32
	if embed != nil {
		vecs = embed(req.Input, dims)
	} else {
		vecs = make([][]float32, len(req.Input))
		for i, text := range req.Input {
			vecs[i] = hashEmbed(text, dims)
		}
	}
	var order []int
	if permute != nil {
		order = permute(len(vecs))
	} else {
		order = make([]int, len(vecs))
		for i := range order {
			order[i] = i
		}
	}
	tokens := 0
	for _, text := range req.Input {
		tokens += len(strings.Fields(text))
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(embeddingsBody(s.t, req.Model, vecs, order, tokens))
}

// nativeDims is the vector length the server gives a model when the
// request sets no dimensions: OpenAI's for its models, compatDims for
// others.
func nativeDims(model string) int {
	switch model {
	case "text-embedding-3-small", "text-embedding-ada-002":
		return 1536
	case "text-embedding-3-large":
		return 3072
	}
	return compatDims
}

// compatDims is the vector length of every model but OpenAI's.
const compatDims = 64

// embeddingsBody returns testdata/embeddings.json with its items replaced
// by vecs, listed in the given order, each with its index.
func embeddingsBody(t testing.TB, model string, vecs [][]float32, order []int, tokens int) []byte {
	var doc map[string]any
	if err := json.Unmarshal(readFixture(t, "embeddings.json"), &doc); err != nil {
		t.Errorf("embeddings fixture: %v", err)
		return nil
	}
	data := make([]any, 0, len(order))
	for _, i := range order {
		data = append(data, map[string]any{"object": "embedding", "embedding": vecs[i], "index": i})
	}
	doc["data"] = data
	doc["model"] = model
	doc["usage"] = map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Errorf("embeddings fixture: %v", err)
	}
	return out
}

// hashEmbed is the embedding model the fake server plays: the deterministic
// hashing embedder of providers/fake at the requested dimension, so texts
// sharing words point in similar directions.
func hashEmbed(text string, dims int) []float32 {
	e, err := fake.NewEmbedder(fake.EmbedderConfig{Dimension: dims})
	if err != nil {
		panic(err) // dims outside the fake's range: a mistake in the test
	}
	vecs, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		panic(err) // the fake embedder fails only when told to
	}
	return vecs[0]
}
