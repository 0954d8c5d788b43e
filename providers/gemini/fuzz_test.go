package gemini

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/forgemem/forgemem/memcore"
)

// answering is an HTTP client whose transport answers every request with
// status and body, without a network.
func answering(status int, contentType string, body []byte) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		return &http.Response{
			StatusCode: status,
			Status:     fmt.Sprintf("%d %s", status, http.StatusText(status)),
			Header:     http.Header{"Content-Type": {contentType}},
			Body:       io.NopCloser(bytes.NewReader(body)),
			Request:    r,
		}, nil
	})}
}

// addFixtureSeeds adds every fixture in testdata, under each status, to f.
func addFixtureSeeds(f *testing.F, statuses ...int) {
	f.Helper()
	var files []string
	for _, pattern := range []string{"testdata/*.*", "testdata/errors/*.*"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range statuses {
			f.Add(s, b)
		}
	}
	f.Add(200, []byte(`{"embeddings":[{"values":[1e39]}]}`))
	f.Add(200, []byte(`{"embeddings":[{"values":[0,0]}]}`))
	f.Add(200, []byte(`{"embeddings":[null]}`))
	f.Add(200, []byte(`{"candidates":[null]}`))
	f.Add(200, []byte(`{"candidates":[{"content":{"parts":[null,{"text":"x"}]}}]}`))
	f.Add(200, []byte(`null`))
	f.Add(200, []byte(``))
	f.Add(400, []byte(`{"error":{}}`))
	f.Add(500, []byte(`{"error":null}`))
}

// checkOutcome fails t unless err is nil or matches exactly one sentinel of
// the taxonomy and no context error.
func checkOutcome(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var kinds []string
	for _, k := range taxonomy {
		if errors.Is(err, k) {
			kinds = append(kinds, k.Error())
		}
	}
	if len(kinds) != 1 {
		t.Fatalf("error matches %d kinds %v, want exactly one: %v", len(kinds), kinds, err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error of a live context matches a context error: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "gemini: ") {
		t.Fatalf("error %q does not say where it comes from", err)
	}
}

// FuzzEmbedReply feeds arbitrary answers to Embed: it must return one
// finite unit-length vector per text, or an error of exactly one kind.
func FuzzEmbedReply(f *testing.F) {
	addFixtureSeeds(f, 200, 400, 503)
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 999 {
			t.Skip()
		}
		c, err := New(Config{APIKey: "k", BaseURL: "http://gemini.invalid", EmbeddingModel: "e", HTTPClient: answering(status, "application/json", body)})
		if err != nil {
			t.Fatal(err)
		}
		vecs, err := c.Embed(context.Background(), []string{"a", "b"})
		checkOutcome(t, err)
		if err != nil {
			return
		}
		if status < 200 || status > 299 {
			t.Fatalf("status %d gave vectors and no error", status)
		}
		if len(vecs) != 2 {
			t.Fatalf("%d vectors for 2 texts", len(vecs))
		}
		for i, v := range vecs {
			if n := norm(v); math.IsNaN(n) || math.Abs(n-1) > 1e-3 || len(v) != len(vecs[0]) {
				t.Fatalf("vector %d: norm %v, length %d", i, n, len(v))
			}
		}
	})
}

// FuzzCompleteReply feeds arbitrary answers to Complete: it must return a
// non-empty text, or an error of exactly one kind.
func FuzzCompleteReply(f *testing.F) {
	addFixtureSeeds(f, 200, 400, 429)
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 999 {
			t.Skip()
		}
		c, err := New(Config{APIKey: "k", BaseURL: "http://gemini.invalid", Model: "m", HTTPClient: answering(status, "application/json", body)})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Complete(context.Background(), memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}})
		checkOutcome(t, err)
		if err != nil {
			return
		}
		if status < 200 || status > 299 {
			t.Fatalf("status %d gave a reply and no error", status)
		}
		if resp == nil || resp.Text == "" {
			t.Fatalf("reply %+v without an error", resp)
		}
	})
}

// FuzzClassifyAPIError: every API error maps to exactly one kind.
func FuzzClassifyAPIError(f *testing.F) {
	f.Add(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", "API_KEY_INVALID")
	f.Add(0, "503 Service Unavailable", "upstream", "")
	f.Add(0, "", "", "")
	f.Add(429, "RESOURCE_EXHAUSTED", "quota", "")
	f.Fuzz(func(t *testing.T, code int, status, message, reason string) {
		e := genai.APIError{Code: code, Status: status, Message: message}
		if reason != "" {
			e.Details = []map[string]any{{"reason": reason}}
		}
		got := classifyAPIError(e)
		found := false
		for _, k := range taxonomy {
			found = found || got == k
		}
		if !found {
			t.Fatalf("classifyAPIError(%+v) = %v, not a taxonomy sentinel", e, got)
		}
	})
}
