package embedserver_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/tools/internal/embedserver"
)

// embeddingsReply is OpenAI's embeddings answer, with the embedding kept raw
// so that float and base64 both decode.
type embeddingsReply struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     *int            `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// do sends a request to the server at baseURL (its /v1 URL) and returns the
// status, the headers and the body.
func do(t *testing.T, method, baseURL, path string, body io.Reader, header http.Header) (int, http.Header, []byte) {
	t.Helper()
	root := strings.TrimSuffix(baseURL, "/v1")
	req, err := http.NewRequestWithContext(t.Context(), method, root+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, data
}

// post sends an embeddings request with the JSON body.
func post(t *testing.T, baseURL, body string) (int, []byte) {
	t.Helper()
	status, _, data := do(t, http.MethodPost, baseURL, "/v1/embeddings", strings.NewReader(body),
		http.Header{"Content-Type": {"application/json"}})
	return status, data
}

// checkError checks that an answer is an error of OpenAI's shape with the
// status, type invalid_request_error, and the param and code when given.
func checkError(t *testing.T, what string, status int, header http.Header, body []byte, wantStatus int, wantParam, wantCode string) {
	t.Helper()
	if status != wantStatus {
		t.Errorf("%s: status %d, want %d; body %s", what, status, wantStatus, body)
		return
	}
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
	var raw map[string]map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Errorf("%s: the body must be OpenAI's JSON error object; %v in %s", what, err, body)
		return
	}
	e, ok := raw["error"]
	if !ok || len(raw) != 1 {
		t.Errorf(`%s: the body must be {"error": {...}} and nothing else; got %s`, what, body)
		return
	}
	for _, key := range []string{"message", "type", "param", "code"} {
		if _, ok := e[key]; !ok {
			t.Errorf("%s: the error must have the key %q; got %s", what, key, body)
		}
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Errorf("%s: the error message must be a non-empty string; got %s", what, body)
	}
	if e["type"] != "invalid_request_error" {
		t.Errorf("%s: type %v, want invalid_request_error", what, e["type"])
	}
	if wantParam != "" && e["param"] != wantParam {
		t.Errorf("%s: param %v, want %q", what, e["param"], wantParam)
	}
	if wantCode != "" && e["code"] != wantCode {
		t.Errorf("%s: code %v, want %q", what, e["code"], wantCode)
	}
}

func TestEmbeddingsErrors(t *testing.T) {
	base := mainServer.url(t)
	small := smallServer.url(t) // --max-inputs 3 --max-input-chars 4 --max-body-bytes 2048
	tooMany := `["` + strings.Repeat(`x","`, embedserver.MaxInputs) + `x"]`
	tests := []struct {
		name, baseURL, body string
		status              int
		param, code         string
	}{
		{"bad JSON", base, `{"model": "use-lite-512", "input": [`, 400, "", ""},
		{"not an object", base, `["use-lite-512"]`, 400, "", ""},
		{"no model", base, `{"input": "a"}`, 400, "model", ""},
		{"model not a string", base, `{"model": 1, "input": "a"}`, 400, "model", ""},
		{"unknown model", base, `{"model": "text-embedding-3-small", "input": "a"}`, 404, "model", "model_not_found"},
		{"no input", base, `{"model": "use-lite-512"}`, 400, "input", ""},
		{"null input", base, `{"model": "use-lite-512", "input": null}`, 400, "input", ""},
		{"empty string", base, `{"model": "use-lite-512", "input": ""}`, 400, "input", ""},
		{"empty array", base, `{"model": "use-lite-512", "input": []}`, 400, "input", ""},
		{"empty string in array", base, `{"model": "use-lite-512", "input": ["a", ""]}`, 400, "input", ""},
		{"number input", base, `{"model": "use-lite-512", "input": 42}`, 400, "input", ""},
		{"number in array", base, `{"model": "use-lite-512", "input": ["a", 1]}`, 400, "input", ""},
		{"token arrays", base, `{"model": "use-lite-512", "input": [[1, 2]]}`, 400, "input", ""},
		{"object input", base, `{"model": "use-lite-512", "input": {"text": "a"}}`, 400, "input", ""},
		{"unknown field", base, `{"model": "use-lite-512", "input": "a", "temperature": 0}`, 400, "temperature", ""},
		{"unknown encoding", base, `{"model": "use-lite-512", "input": "a", "encoding_format": "int8"}`, 400, "encoding_format", ""},
		{"other dimensions", base, `{"model": "use-lite-512", "input": "a", "dimensions": 256}`, 400, "dimensions", ""},
		{"user not a string", base, `{"model": "use-lite-512", "input": "a", "user": 7}`, 400, "user", ""},
		{"more inputs than the default limit", base, `{"model": "use-lite-512", "input": ` + tooMany + `}`, 400, "input", ""},
		{"more inputs than --max-inputs", small, `{"model": "use-lite-512", "input": ["a", "b", "c", "d"]}`, 400, "input", ""},
		{"input longer than --max-input-chars", small, `{"model": "use-lite-512", "input": ["abc", "abcde"]}`, 400, "input", "context_length_exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, header, body := do(t, http.MethodPost, tt.baseURL, "/v1/embeddings", strings.NewReader(tt.body), nil)
			checkError(t, tt.name, status, header, body, tt.status, tt.param, tt.code)
		})
	}
}

func TestLimitsAreInclusive(t *testing.T) {
	small := smallServer.url(t)
	// Three inputs of four characters each: at the limits. "ü日本🚀" is four
	// characters but five UTF-16 units and eleven bytes.
	status, body := post(t, small, `{"model": "use-lite-512", "input": ["abcd", "ü日本🚀", "a"]}`)
	if status != http.StatusOK {
		t.Fatalf("a request at --max-inputs and --max-input-chars must succeed; got %d %s", status, body)
	}
	var reply embeddingsReply
	if err := json.Unmarshal(body, &reply); err != nil || len(reply.Data) != 3 {
		t.Errorf("want 3 embeddings; got %s (%v)", body, err)
	}
}

func TestBodyTooLarge(t *testing.T) {
	small := smallServer.url(t) // --max-body-bytes 2048
	body := `{"model": "use-lite-512", "input": "` + strings.Repeat("a", 3000) + `"}`
	t.Run("Read", func(t *testing.T) {
		status, header, data := do(t, http.MethodPost, small, "/v1/embeddings", strings.NewReader(body), nil)
		checkError(t, "a body over --max-body-bytes", status, header, data, http.StatusRequestEntityTooLarge, "", "request_too_large")
	})
	t.Run("ExpectContinue", func(t *testing.T) {
		// Refused from its Content-Length alone, before it is sent.
		status, header, data := do(t, http.MethodPost, small, "/v1/embeddings", strings.NewReader(body),
			http.Header{"Expect": {"100-continue"}})
		checkError(t, "a body over --max-body-bytes announced with Expect: 100-continue",
			status, header, data, http.StatusRequestEntityTooLarge, "", "request_too_large")
	})
	t.Run("DefaultLimit", func(t *testing.T) {
		big := bytes.Repeat([]byte("a"), 4<<20+1)
		status, header, data := do(t, http.MethodPost, mainServer.url(t), "/v1/embeddings", bytes.NewReader(big), nil)
		checkError(t, "a body over 4 MiB", status, header, data, http.StatusRequestEntityTooLarge, "", "request_too_large")
	})
}

func TestRoutes(t *testing.T) {
	base := mainServer.url(t)
	tests := []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodGet, "/v1/embeddings", 405, "POST"},
		{http.MethodPut, "/v1/embeddings", 405, "POST"},
		{http.MethodPost, "/v1/models", 405, "GET"},
		{http.MethodDelete, "/health", 405, "GET"},
		{http.MethodGet, "/", 404, ""},
		{http.MethodPost, "/embeddings", 404, ""},
		{http.MethodPost, "/v1/chat/completions", 404, ""},
		{http.MethodGet, "/v1/models/text-embedding-3-small", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			status, header, body := do(t, tt.method, base, tt.path, strings.NewReader(`{}`), nil)
			checkError(t, tt.method+" "+tt.path, status, header, body, tt.status, "", "")
			if got := header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow header %q, want %q", got, tt.allow)
			}
		})
	}
}

func TestModelsAndHealth(t *testing.T) {
	base := mainServer.url(t)
	status, _, body := do(t, http.MethodGet, base, "/v1/models", nil, nil)
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); status != 200 || err != nil || list.Object != "list" ||
		len(list.Data) != 1 || list.Data[0].ID != embedserver.Model || list.Data[0].Object != "model" {
		t.Errorf("GET /v1/models must list the one model %q; got %d %s (%v)", embedserver.Model, status, body, err)
	}

	status, _, body = do(t, http.MethodGet, base, "/v1/models/"+embedserver.Model, nil, nil)
	var model struct{ ID, Object string }
	if err := json.Unmarshal(body, &model); status != 200 || err != nil || model.ID != embedserver.Model || model.Object != "model" {
		t.Errorf("GET /v1/models/%s must describe it; got %d %s (%v)", embedserver.Model, status, body, err)
	}

	status, _, body = do(t, http.MethodGet, base, "/health?probe=1", nil, nil)
	var health struct {
		Status     string
		Model      string
		Dimensions int
	}
	if err := json.Unmarshal(body, &health); status != 200 || err != nil || health.Status != "ok" ||
		health.Model != embedserver.Model || health.Dimensions != embedserver.Dimension {
		t.Errorf("GET /health must say ok; got %d %s (%v)", status, body, err)
	}
}

// embedRaw posts texts (a JSON value) and decodes the answer, checking its
// shape.
func embedRaw(t *testing.T, baseURL, input, format string) embeddingsReply {
	t.Helper()
	body := fmt.Sprintf(`{"model": %q, "input": %s, "encoding_format": %q}`, embedserver.Model, input, format)
	status, data := post(t, baseURL, body)
	if status != http.StatusOK {
		t.Fatalf("POST /v1/embeddings %s: status %d, want 200; %s", body, status, data)
	}
	var reply embeddingsReply
	if err := json.Unmarshal(data, &reply); err != nil {
		t.Fatalf("the answer must be OpenAI's embeddings list: %v in %.200s", err, data)
	}
	if reply.Object != "list" || reply.Model != embedserver.Model {
		t.Errorf(`the answer must have "object": "list" and "model": %q; got %q, %q`, embedserver.Model, reply.Object, reply.Model)
	}
	if reply.Usage.PromptTokens <= 0 || reply.Usage.TotalTokens != reply.Usage.PromptTokens {
		t.Errorf("usage must count the input tokens, prompt_tokens = total_tokens > 0; got %+v", reply.Usage)
	}
	for i, d := range reply.Data {
		if d.Object != "embedding" {
			t.Errorf(`data[%d].object = %q, want "embedding"`, i, d.Object)
		}
	}
	return reply
}

// vectors decodes the reply's embeddings, float or base64, after checking
// that item i has index i.
func vectors(t *testing.T, reply embeddingsReply) [][]float32 {
	t.Helper()
	out := make([][]float32, len(reply.Data))
	for i, d := range reply.Data {
		if d.Index == nil || *d.Index != i {
			t.Fatalf("data[%d] must have index %d, in input order; got %v", i, i, d.Index)
		}
		var v []float32
		var b64 string
		if err := json.Unmarshal(d.Embedding, &b64); err == nil {
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil || len(raw)%4 != 0 {
				t.Fatalf("data[%d]: bad base64 embedding: %v", i, err)
			}
			v = make([]float32, len(raw)/4)
			for j := range v {
				v[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
			}
		} else if err := json.Unmarshal(d.Embedding, &v); err != nil {
			t.Fatalf("data[%d]: the embedding is neither floats nor base64: %v", i, err)
		}
		if len(v) != embedserver.Dimension {
			t.Fatalf("data[%d] has %d dimensions, want %d", i, len(v), embedserver.Dimension)
		}
		out[i] = v
	}
	return out
}

func TestArrayInputInOrder(t *testing.T) {
	base := mainServer.url(t)
	texts := []string{
		"Run the unit tests before every commit.",
		"The ferry crosses the bay twice a day.",
		"Tabs, not spaces.",
		"Photosynthesis turns light into sugar.",
		"The invoice is due at the end of the month.",
	}
	input, _ := json.Marshal(texts)
	batch := embedRaw(t, base, string(input), "float")
	got := vectors(t, batch)
	if len(got) != len(texts) {
		t.Fatalf("%d inputs must give %d embeddings; got %d", len(texts), len(texts), len(got))
	}
	tokens := 0
	singles := make([][]float32, len(texts))
	for i, text := range texts {
		one, _ := json.Marshal(text) // a string, not an array
		reply := embedRaw(t, base, string(one), "float")
		tokens += reply.Usage.PromptTokens
		v := vectors(t, reply)
		if len(v) != 1 {
			t.Fatalf("a string input must give one embedding; got %d", len(v))
		}
		singles[i] = v[0]
	}
	// A batch's vectors differ from single ones in the last bits only.
	for i := range got {
		self := cosine(got[i], singles[i])
		if self < 0.9999 {
			t.Errorf("data[%d] must be the embedding of input %d: cosine %.6f with embedding it alone, want ≥ 0.9999", i, i, self)
		}
		for j := range singles {
			if j != i && cosine(got[i], singles[j]) >= self {
				t.Errorf("data[%d] must be the embedding of input %d, yet it is as close to input %d's", i, i, j)
			}
		}
	}
	if batch.Usage.PromptTokens != tokens {
		t.Errorf("usage of a batch must be the sum of its texts' (%d); got %d", tokens, batch.Usage.PromptTokens)
	}

	// base64 carries the same float32 values.
	b64 := vectors(t, embedRaw(t, base, string(input), "base64"))
	for i := range b64 {
		if !slices.Equal(b64[i], got[i]) {
			t.Errorf("the base64 embedding %d must equal the float one", i)
		}
	}
}

func TestListensOnLoopbackOnly(t *testing.T) {
	base := mainServer.url(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.1" || u.Path != "/v1" {
		t.Fatalf("the base URL must be http://127.0.0.1:PORT/v1; got %s", base)
	}
	port := u.Port()
	// The listening address itself answers...
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), 5*time.Second)
	if err != nil {
		t.Fatalf("dialling the server's own address: %v", err)
	}
	conn.Close()
	// ...and another loopback address, or IPv6's, does not: a server
	// bound to all addresses would answer there.
	others := []string{"127.0.0.2", "::1"}
	for _, host := range others {
		if conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), 2*time.Second); err == nil {
			conn.Close()
			t.Errorf("the server must listen on 127.0.0.1 only; %s:%s accepts connections", host, port)
		}
	}
}
