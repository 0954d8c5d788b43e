package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	goopenai "github.com/sashabaranov/go-openai"
)

func TestStrictCompatible(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   bool
	}{
		{"flat closed object", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, true},
		{"no properties", `{"type":"object","properties":{},"additionalProperties":false}`, true},
		{"array of closed objects", `{"type":"object","properties":{"xs":{"type":"array","items":{"type":"object","properties":{"b":{"type":"integer"}},"required":["b"],"additionalProperties":false}}},"required":["xs"],"additionalProperties":false}`, true},
		{"anyOf of closed objects", `{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["x"],"additionalProperties":false}`, true},
		{"$defs with an open object", `{"type":"object","properties":{"x":{"$ref":"#/$defs/o"}},"required":["x"],"additionalProperties":false,"$defs":{"o":{"type":"object","properties":{"y":{"type":"string"}}}}}`, false},
		{"additionalProperties missing", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, false},
		{"additionalProperties true", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":true}`, false},
		{"additionalProperties a schema", `{"type":"object","properties":{},"additionalProperties":{"type":"string"}}`, false},
		{"a property not required", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}`, false},
		{"root is an array", `{"type":"array","items":{"type":"string"}}`, false},
		{"root type list", `{"type":["object","null"],"properties":{},"additionalProperties":false}`, false},
		{"allOf", `{"type":"object","properties":{},"additionalProperties":false,"allOf":[]}`, false},
		{"boolean sub-schema", `{"type":"object","properties":{"a":true},"required":["a"],"additionalProperties":false}`, false},
		{"not JSON", `{"type":`, false},
		{"null", `null`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strictCompatible(json.RawMessage(tt.schema)); got != tt.want {
				t.Errorf("strictCompatible(%s) = %t; want %t", tt.schema, got, tt.want)
			}
		})
	}
}

func TestStrictCompatibleBoundsDepth(t *testing.T) {
	inner := `{"type":"string"}`
	for range 40 {
		inner = `{"type":"object","properties":{"a":` + inner + `},"required":["a"],"additionalProperties":false}`
	}
	if strictCompatible(json.RawMessage(inner)) {
		t.Error("a schema nested 40 deep was judged strict-compatible; want the walk bounded and the answer false")
	}
}

func FuzzStrictCompatible(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`)
	f.Add(`{"type":"object","properties":{"a":{"anyOf":[{"type":"object"}]}}}`)
	f.Add(`{"type":"object","$defs":{"x":[]}}`)
	f.Fuzz(func(t *testing.T, schema string) {
		if !strictCompatible(json.RawMessage(schema)) {
			return
		}
		var root struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(schema), &root); err != nil || root.Type != "object" {
			t.Errorf("strictCompatible accepted %q, whose root is not an object schema", schema)
		}
	})
}

func FuzzPlace(f *testing.F) {
	f.Add(3, []byte{2, 0, 1})
	f.Add(2, []byte{0, 0})
	f.Add(1, []byte{})
	f.Add(4, []byte{3, 2, 1, 0, 5})
	f.Fuzz(func(t *testing.T, n int, indices []byte) {
		if n < 1 || n > 64 {
			return
		}
		data := make([]goopenai.Embedding, len(indices))
		for i, ix := range indices {
			data[i] = goopenai.Embedding{Index: int(ix), Embedding: []float32{float32(ix) + 1, 0}}
		}
		dst := make([][]float32, n)
		err := place(dst, data, 0)

		permutation := len(indices) == n
		seen := make(map[byte]bool)
		for _, ix := range indices {
			if int(ix) >= n || seen[ix] {
				permutation = false
			}
			seen[ix] = true
		}
		if (err == nil) != permutation {
			t.Fatalf("place(n=%d, indices %v) = %v; want success exactly when the indices are a permutation of 0..n-1", n, indices, err)
		}
		if err != nil {
			return
		}
		for i, v := range dst {
			if v == nil || v[0] != float32(i)+1 {
				t.Fatalf("dst[%d] = %v; want the vector with index %d", i, v, i)
			}
		}
	})
}

func TestPlaceChecksLengths(t *testing.T) {
	vec := func(ix, n int) goopenai.Embedding {
		return goopenai.Embedding{Index: ix, Embedding: make([]float32, n)}
	}
	tests := []struct {
		name string
		data []goopenai.Embedding
		want int
		ok   bool
	}{
		{"same length, none declared", []goopenai.Embedding{vec(0, 3), vec(1, 3)}, 0, true},
		{"declared length", []goopenai.Embedding{vec(1, 3), vec(0, 3)}, 3, true},
		{"differing lengths", []goopenai.Embedding{vec(0, 3), vec(1, 4)}, 0, false},
		{"not the declared length", []goopenai.Embedding{vec(0, 3), vec(1, 3)}, 4, false},
		{"empty vector", []goopenai.Embedding{vec(0, 0), vec(1, 0)}, 0, false},
	}
	for _, tt := range tests {
		err := place(make([][]float32, 2), tt.data, tt.want)
		if (err == nil) != tt.ok {
			t.Errorf("%s: place = %v; want ok=%t", tt.name, err, tt.ok)
		}
	}
}

func TestSetZeroTemperature(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{`{"model":"m","messages":[]}`, `{"model":"m","messages":[],"temperature":0}`, true},
		{`{}`, `{"temperature":0}`, true},
		{`{"model":"m","temperature":0.5}`, "", false},
		{`[1,2]`, "", false},
		{`not json`, "", false},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(http.MethodPost, "http://example.invalid/v1/chat/completions", strings.NewReader(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		err = setZeroTemperature(req)
		if (err == nil) != tt.ok {
			t.Errorf("setZeroTemperature(%s) = %v; want ok=%t", tt.in, err, tt.ok)
			continue
		}
		if err != nil {
			if !errors.Is(err, errLocal) {
				t.Errorf("setZeroTemperature(%s) = %v; want an error marked local", tt.in, err)
			}
			continue
		}
		got, _ := io.ReadAll(req.Body)
		if string(got) != tt.want || req.ContentLength != int64(len(tt.want)) {
			t.Errorf("body %s (Content-Length %d); want %s", got, req.ContentLength, tt.want)
		}
		again, err := req.GetBody()
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(again); !bytes.Equal(b, got) {
			t.Errorf("GetBody gives %s; want the rewritten body", b)
		}
	}
}

func FuzzClassifyStatus(f *testing.F) {
	f.Add(400, "context_length_exceeded", "", "")
	f.Add(429, "insufficient_quota", "insufficient_quota", "quota")
	f.Add(503, "", "", "upstream connect error")
	f.Add(302, "", "", "")
	f.Fuzz(func(t *testing.T, status int, code, typ, message string) {
		got := classifyStatus(status, code, typ, message)
		var want []error
		switch {
		case status == 401 || status == 403:
			want = []error{memcore.ErrUnauthenticated}
		case status == 429:
			want = []error{memcore.ErrRateLimited, memcore.ErrUnauthenticated}
		case status == 413:
			want = []error{memcore.ErrInputTooLarge}
		case status == 408 || status >= 500:
			want = []error{memcore.ErrUnavailable}
		case status >= 400:
			want = []error{memcore.ErrInvalidRequest, memcore.ErrInputTooLarge}
		default:
			want = []error{memcore.ErrInvalidResponse}
		}
		for _, w := range want {
			if got == w {
				return
			}
		}
		t.Errorf("classifyStatus(%d, %q, %q, %q) = %v; want one of %v", status, code, typ, message, got, want)
	})
}

// roundTripFunc answers requests without a network.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzEmbedResponse sends Embed's request to a transport that answers with
// an arbitrary status and body: the result must be vectors (for a 2xx) or
// an error matching exactly one sentinel of the taxonomy, never a panic.
func FuzzEmbedResponse(f *testing.F) {
	f.Add(200, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.6,0.8]}],"model":"m"}`)
	f.Add(200, `{"data":[{"index":1,"embedding":[1]}]}`)
	f.Add(200, `{"data":"x"}`)
	f.Add(400, `{"error":{"message":"maximum context length","type":"invalid_request_error","param":null,"code":null}}`)
	f.Add(400, `{"error":"the input length exceeds the context length"}`)
	f.Add(429, `Too Many Requests`)
	f.Add(503, ``)
	f.Fuzz(func(t *testing.T, status int, body string) {
		if status < 100 || status > 999 {
			return
		}
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{
				StatusCode: status,
				Status:     http.StatusText(status),
				Header:     http.Header{"Content-Type": {"application/json"}},
				Body:       io.NopCloser(strings.NewReader(body)),
				Request:    r,
			}, nil
		})}
		c, err := New(Config{BaseURL: "http://example.invalid/v1", EmbeddingModel: "e", HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		vecs, err := c.Embed(context.Background(), []string{"x"})
		if err == nil {
			if status < 200 || status > 299 || len(vecs) != 1 || len(vecs[0]) == 0 {
				t.Fatalf("status %d body %q gave %v and no error", status, body, vecs)
			}
			return
		}
		matched := 0
		for _, k := range []error{memcore.ErrRateLimited, memcore.ErrUnauthenticated, memcore.ErrUnavailable,
			memcore.ErrInputTooLarge, memcore.ErrInvalidRequest, memcore.ErrInvalidResponse} {
			if errors.Is(err, k) {
				matched++
			}
		}
		if matched != 1 {
			t.Fatalf("status %d body %q: error %q matches %d sentinels; want exactly 1", status, body, err, matched)
		}
	})
}
