package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
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

// This file is a stand-in for the Gemini Developer API: an httptest server
// that speaks its REST wire format (the request and response shapes of
// generateContent and batchEmbedContents, and Google's error envelope),
// answering from the fixtures in testdata/.

// testKey is the API key the fake server accepts.
const testKey = "test-key-for-the-fake-server"

// wireContent is a Content of the REST API.
type wireContent struct {
	Role  string `json:"role,omitempty"`
	Parts []struct {
		Text    string `json:"text"`
		Thought bool   `json:"thought,omitempty"`
	} `json:"parts"`
}

func (c wireContent) text() string {
	var b strings.Builder
	for _, p := range c.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// generateRequest is the body of models/{model}:generateContent.
type generateRequest struct {
	Contents          []wireContent `json:"contents"`
	SystemInstruction *wireContent  `json:"systemInstruction,omitempty"`
	GenerationConfig  *struct {
		Temperature        *float64        `json:"temperature,omitempty"`
		MaxOutputTokens    int             `json:"maxOutputTokens,omitempty"`
		ResponseMimeType   string          `json:"responseMimeType,omitempty"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
		ResponseSchema     json.RawMessage `json:"responseSchema,omitempty"`
	} `json:"generationConfig,omitempty"`
}

// embedRequest is the body of models/{model}:batchEmbedContents.
type embedRequest struct {
	Requests []struct {
		Model                string      `json:"model"`
		Content              wireContent `json:"content"`
		TaskType             string      `json:"taskType,omitempty"`
		OutputDimensionality int         `json:"outputDimensionality,omitempty"`
	} `json:"requests"`
}

// canned is a prepared answer: status, content type and body.
type canned struct {
	status      int
	contentType string
	body        []byte
}

// recorded is one request the server received.
type recorded struct {
	Method string
	Path   string
	Query  string
	APIKey string
	Body   []byte
}

// fakeServer is the fake Gemini API.
type fakeServer struct {
	srv *httptest.Server

	// respond plays the completion model; default llmtest.Respond.
	respond func(memcore.CompletionRequest) (string, error)
	// embed plays the embedding model: the vector of one text at dims
	// dimensions (dims is never 0); default hashVector.
	embed func(text string, dims int, task string) []float32
	// mutateEmbeddings, when set, changes the embeddings of each batch
	// reply before it is sent (shuffle, drop, …).
	mutateEmbeddings func(batch int, embs [][]float32) [][]float32

	// Fixtures, read when the server is made.
	badKey, batchTooBig canned
	genTemplate         []byte
	embedTemplate       []byte

	mu       sync.Mutex
	requests []recorded
	script   []canned // answers for the next requests, before any routing
	hold     bool     // hold every request until the client goes away
}

func newFakeServer(t testing.TB) *fakeServer {
	t.Helper()
	f := &fakeServer{
		respond: llmtest.Respond, embed: hashVector,
		badKey:        fixtureError(t, "400_api_key_invalid.json"),
		batchTooBig:   fixtureError(t, "400_batch_size.json"),
		genTemplate:   fixture(t, "generate_content.json"),
		embedTemplate: fixture(t, "batch_embed_contents.json"),
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// Close stops the server, first dropping held connections.
func (f *fakeServer) Close() {
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// URL is the server's base URL, for Config.BaseURL.
func (f *fakeServer) URL() string { return f.srv.URL }

// client returns a Client of the server, with cfg's other fields.
func (f *fakeServer) client(t testing.TB, cfg Config) *Client {
	t.Helper()
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	cfg.BaseURL = f.URL()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// failNext makes the next n requests get the answer c.
func (f *fakeServer) failNext(n int, c canned) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.script = append(f.script, c)
	}
}

// holdRequests makes the server hold every request until its client goes
// away.
func (f *fakeServer) holdRequests() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold = true
}

// Requests returns a copy of the requests received so far.
func (f *fakeServer) Requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, recorded{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		APIKey: r.Header.Get("x-goog-api-key"), Body: body,
	})
	hold := f.hold
	var next *canned
	if len(f.script) > 0 {
		next = &f.script[0]
		f.script = f.script[1:]
	}
	f.mu.Unlock()

	if hold {
		<-r.Context().Done()
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "Method not found.")
		return
	}
	if key := r.Header.Get("x-goog-api-key"); key != testKey {
		// What the Gemini API answers a wrong key with.
		writeCanned(w, f.badKey)
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Content-Type must be application/json")
		return
	}
	if next != nil {
		writeCanned(w, *next)
		return
	}
	model, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
	if !ok || !strings.HasPrefix(r.URL.Path, "/v1beta/models/") || model == "" || strings.Contains(model, "/") {
		writeError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("path %s is not a model method of API version v1beta", r.URL.Path))
		return
	}
	switch method {
	case "generateContent":
		f.generateContent(w, model, body)
	case "batchEmbedContents":
		f.batchEmbedContents(w, model, body)
	default:
		writeError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("method %q is not supported", method))
	}
}

func (f *fakeServer) generateContent(w http.ResponseWriter, model string, body []byte) {
	var req generateRequest
	if err := strictDecode(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return
	}
	if len(req.Contents) == 0 {
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified")
		return
	}
	mreq := memcore.CompletionRequest{Model: model}
	if si := req.SystemInstruction; si != nil {
		mreq.System = si.text()
	}
	for i, c := range req.Contents {
		var role memcore.Role
		switch c.Role {
		case "user":
			role = memcore.RoleUser
		case "model":
			role = memcore.RoleAssistant
		default:
			writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("Please use a valid role: user, model. (contents[%d].role %q)", i, c.Role))
			return
		}
		if len(c.Parts) == 0 {
			writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.", i))
			return
		}
		mreq.Messages = append(mreq.Messages, memcore.Message{Role: role, Content: c.text()})
	}
	if gc := req.GenerationConfig; gc != nil {
		if len(gc.ResponseSchema) > 0 {
			writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "this fake expects responseJsonSchema, not responseSchema")
			return
		}
		if len(gc.ResponseJSONSchema) > 0 {
			if gc.ResponseMimeType != "application/json" {
				writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "response_mime_type must be application/json when response_json_schema is set")
				return
			}
			mreq.ResponseSchema = &memcore.Schema{Definition: gc.ResponseJSONSchema}
		}
		mreq.MaxTokens = gc.MaxOutputTokens
		mreq.Temperature = gc.Temperature
	}
	reply, err := f.respond(mreq)
	if err != nil {
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", err.Error())
		return
	}
	var resp map[string]any
	if err := json.Unmarshal(f.genTemplate, &resp); err != nil {
		http.Error(w, "fixture generate_content.json: "+err.Error(), http.StatusInternalServerError)
		return
	}
	cand := resp["candidates"].([]any)[0].(map[string]any)
	cand["content"].(map[string]any)["parts"] = []any{map[string]any{"text": reply}}
	prompt := countTokens(mreq.System)
	for _, m := range mreq.Messages {
		prompt += countTokens(m.Content)
	}
	out := countTokens(reply)
	resp["usageMetadata"] = map[string]any{
		"promptTokenCount":     prompt,
		"candidatesTokenCount": out,
		"totalTokenCount":      prompt + out,
	}
	resp["modelVersion"] = model
	writeJSON(w, http.StatusOK, resp)
}

func (f *fakeServer) batchEmbedContents(w http.ResponseWriter, model string, body []byte) {
	var req embedRequest
	if err := strictDecode(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return
	}
	if len(req.Requests) > MaxBatchLimit {
		writeCanned(w, f.batchTooBig)
		return
	}
	if len(req.Requests) == 0 {
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "* BatchEmbedContentsRequest.requests: requests is not specified")
		return
	}
	embs := make([][]float32, len(req.Requests))
	for i, r := range req.Requests {
		if r.Model != "models/"+model {
			writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT",
				fmt.Sprintf("Model name in requests[%d] (%q) does not match the model in the URL (models/%s).", i, r.Model, model))
			return
		}
		if r.Content.text() == "" {
			writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("* BatchEmbedContentsRequest.requests[%d].content.parts: contents.parts must not be empty.", i))
			return
		}
		dims := r.OutputDimensionality
		if dims == 0 {
			dims = 3072
		}
		embs[i] = f.embed(r.Content.text(), dims, r.TaskType)
	}
	f.mu.Lock()
	mutate := f.mutateEmbeddings
	batch := len(f.requests) - 1
	f.mu.Unlock()
	if mutate != nil {
		embs = mutate(batch, embs)
	}
	var resp map[string]any
	if err := json.Unmarshal(f.embedTemplate, &resp); err != nil {
		http.Error(w, "fixture batch_embed_contents.json: "+err.Error(), http.StatusInternalServerError)
		return
	}
	list := make([]any, len(embs))
	for i, v := range embs {
		list[i] = map[string]any{"values": v}
	}
	resp["embeddings"] = list
	writeJSON(w, http.StatusOK, resp)
}

// strictDecode decodes body into v, refusing unknown fields as the real
// API does ("Invalid JSON payload received. Unknown name …").
func strictDecode(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func countTokens(s string) int { return len(strings.Fields(s)) + 1 }

// hashVector is the embedding model the fake server plays: the
// deterministic hashing embedder of providers/fake, given the task type with
// the text so that the vectors of the task types differ, and scaled off unit
// length as Gemini's vectors at reduced dimensionality are.
func hashVector(text string, dims int, task string) []float32 {
	e, err := fake.NewEmbedder(fake.EmbedderConfig{Dimension: dims})
	if err != nil {
		panic(err) // dims outside the fake's range: a mistake in the test
	}
	vecs, err := e.Embed(context.Background(), []string{task + " " + text})
	if err != nil {
		panic(err) // the fake embedder fails only when told to
	}
	v := vecs[0]
	for i := range v {
		v[i] *= 3
	}
	return v
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	w.Write(b)
}

// writeError answers in Google's error envelope.
func writeError(w http.ResponseWriter, code int, status, message string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}})
}

func writeCanned(w http.ResponseWriter, c canned) {
	if c.contentType != "" {
		w.Header().Set("Content-Type", c.contentType)
	}
	w.WriteHeader(c.status)
	w.Write(c.body)
}

// fixture reads testdata/name.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return b
}

// fixtureError is the canned answer of testdata/errors/name, whose name
// starts with its HTTP status; .json files are sent as JSON, .html as HTML
// and anything else as plain text.
func fixtureError(t testing.TB, name string) canned {
	t.Helper()
	var status int
	if _, err := fmt.Sscanf(name, "%d_", &status); err != nil {
		t.Fatalf("fixture %s: name does not start with a status: %v", name, err)
	}
	ct := "text/plain; charset=utf-8"
	switch filepath.Ext(name) {
	case ".json":
		ct = "application/json; charset=UTF-8"
	case ".html":
		ct = "text/html; charset=UTF-8"
	}
	return canned{status: status, contentType: ct, body: fixture(t, filepath.Join("errors", name))}
}

// okFixture is the canned 200 answer of testdata/name.
func okFixture(t testing.TB, name string) canned {
	t.Helper()
	ct := "application/json; charset=UTF-8"
	if !strings.HasSuffix(name, ".json") {
		ct = "text/html; charset=UTF-8"
	}
	return canned{status: http.StatusOK, contentType: ct, body: fixture(t, name)}
}
