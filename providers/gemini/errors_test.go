package gemini

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/forgemem/forgemem/memcore"
)

var taxonomy = []error{
	memcore.ErrRateLimited, memcore.ErrUnauthenticated, memcore.ErrUnavailable,
	memcore.ErrInputTooLarge, memcore.ErrInvalidRequest, memcore.ErrInvalidResponse,
}

// checkKind fails t unless err matches want and no other sentinel of the
// taxonomy.
func checkKind(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("err = %v, want %v", err, want)
		return
	}
	for _, other := range taxonomy {
		if other != want && errors.Is(err, other) {
			t.Errorf("err %v also matches %v", err, other)
		}
	}
}

// TestErrorStatusMapping sends each documented error answer of the Gemini
// API, and plain-text answers of the proxies in front of it, to both
// operations, and checks the kind of memcore's error taxonomy it maps to
// (the README's table of errors) and that the SDK's APIError stays
// reachable.
func TestErrorStatusMapping(t *testing.T) {
	tests := []struct {
		fixture string
		want    error
	}{
		{"400_api_key_invalid.json", memcore.ErrUnauthenticated},
		{"401_unauthenticated.json", memcore.ErrUnauthenticated},
		{"403_permission_denied.json", memcore.ErrUnauthenticated},
		{"404_not_found.json", memcore.ErrInvalidRequest},
		{"400_invalid_argument.json", memcore.ErrInvalidRequest},
		{"400_batch_size.json", memcore.ErrInvalidRequest},
		{"400_token_limit.json", memcore.ErrInputTooLarge},
		{"400_payload_size.json", memcore.ErrInputTooLarge},
		{"413_request_too_large.html", memcore.ErrInputTooLarge},
		{"429_resource_exhausted.json", memcore.ErrRateLimited},
		{"429_plain.txt", memcore.ErrRateLimited},
		{"500_internal.json", memcore.ErrUnavailable},
		{"502_bad_gateway.txt", memcore.ErrUnavailable},
		{"503_unavailable.json", memcore.ErrUnavailable},
		{"503_plain.txt", memcore.ErrUnavailable},
		{"504_deadline_exceeded.json", memcore.ErrUnavailable},
	}
	ops := map[string]func(*Client) error{
		"complete": func(c *Client) error {
			_, err := c.Complete(context.Background(), memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}})
			return err
		},
		"embed": func(c *Client) error {
			_, err := c.Embed(context.Background(), []string{"hi"})
			return err
		},
	}
	for _, tt := range tests {
		for op, call := range ops {
			t.Run(tt.fixture+"/"+op, func(t *testing.T) {
				srv := newFakeServer(t)
				answer := fixtureError(t, tt.fixture)
				srv.failNext(1, answer)
				err := call(srv.client(t, Config{}))
				checkKind(t, err, tt.want)
				if got := memcore.IsTransient(err); got != (tt.want == memcore.ErrRateLimited || tt.want == memcore.ErrUnavailable) {
					t.Errorf("IsTransient = %t for %v", got, err)
				}
				var apiErr *genai.APIError
				if !errors.As(err, &apiErr) {
					t.Fatalf("errors.As(*genai.APIError) fails for %v", err)
				}
				if apiErr.Code != answer.status {
					t.Errorf("APIError.Code = %d, want the HTTP status %d", apiErr.Code, answer.status)
				}
			})
		}
	}
}

// TestClassifyAPIError covers the mapping rules on errors the server
// fixtures do not: no code but a status, a status line only, no status.
func TestClassifyAPIError(t *testing.T) {
	tests := []struct {
		name string
		err  genai.APIError
		want error
	}{
		{"status name only, exhausted", genai.APIError{Status: "RESOURCE_EXHAUSTED"}, memcore.ErrRateLimited},
		{"status name only, denied", genai.APIError{Status: "PERMISSION_DENIED"}, memcore.ErrUnauthenticated},
		{"status name only, unavailable", genai.APIError{Status: "UNAVAILABLE"}, memcore.ErrUnavailable},
		{"status name only, not found", genai.APIError{Status: "NOT_FOUND"}, memcore.ErrInvalidRequest},
		{"status line only", genai.APIError{Status: "502 Bad Gateway"}, memcore.ErrUnavailable},
		{"nothing to go on", genai.APIError{Message: "?"}, memcore.ErrInvalidResponse},
		{"408", genai.APIError{Code: 408}, memcore.ErrUnavailable},
		{"409", genai.APIError{Code: 409}, memcore.ErrInvalidRequest},
		{"422", genai.APIError{Code: 422}, memcore.ErrInvalidRequest},
		{"400 expired key", genai.APIError{Code: 400, Message: "API key expired. Please renew the API key."}, memcore.ErrUnauthenticated},
		{"400 key reason in details", genai.APIError{Code: 400, Message: "bad", Details: []map[string]any{{"reason": "API_KEY_INVALID"}}}, memcore.ErrUnauthenticated},
		{"400 context", genai.APIError{Code: 400, Message: "The request exceeds the model's context window."}, memcore.ErrInputTooLarge},
		{"400 other", genai.APIError{Code: 400, Message: "Please use a valid role: user, model."}, memcore.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classifyAPIError(tt.err); got != tt.want {
				t.Errorf("classifyAPIError(%+v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestNetworkErrorsAreUnavailable(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		c, err := New(Config{APIKey: testKey, BaseURL: "http://" + addr})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Embed(context.Background(), []string{"x"})
		checkKind(t, err, memcore.ErrUnavailable)
	})
	t.Run("connection dropped before the answer", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}))
		defer srv.Close()
		c, err := New(Config{APIKey: testKey, BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Complete(context.Background(), memcore.CompletionRequest{Messages: []memcore.Message{user("hi")}})
		checkKind(t, err, memcore.ErrUnavailable)
	})
	t.Run("body cut short", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"embeddings": [`))
		}))
		defer srv.Close()
		c, err := New(Config{APIKey: testKey, BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Embed(context.Background(), []string{"x"})
		checkKind(t, err, memcore.ErrUnavailable)
	})
	t.Run("HTTP client timeout", func(t *testing.T) {
		srv := newFakeServer(t)
		srv.holdRequests()
		c := srv.client(t, Config{HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}})
		_, err := c.Embed(context.Background(), []string{"x"})
		checkKind(t, err, memcore.ErrUnavailable)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a timeout of the HTTP client must not look like the caller's deadline: %v", err)
		}
		if !memcore.IsTransient(err) {
			t.Errorf("a timeout of the HTTP client must be transient: %v", err)
		}
		var urlErr *url.Error
		if !errors.As(err, &urlErr) || !urlErr.Timeout() {
			t.Errorf("the *url.Error timeout is not reachable in %v", err)
		}
	})
}

func TestContextErrorsPassThrough(t *testing.T) {
	srv := newFakeServer(t)
	srv.holdRequests()
	c := srv.client(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Embed(ctx, []string{"x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	for _, k := range taxonomy {
		if errors.Is(err, k) {
			t.Errorf("a context error was classified as %v: %v", k, err)
		}
	}
}
