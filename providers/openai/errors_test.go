package openai_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/openai"
)

// taxonomy lists memcore's sentinels, to check that an error matches
// exactly one.
var taxonomy = []error{
	memcore.ErrRateLimited, memcore.ErrUnauthenticated, memcore.ErrUnavailable,
	memcore.ErrInputTooLarge, memcore.ErrInvalidRequest, memcore.ErrInvalidResponse,
}

// native is the go-openai error type an answer must surface as.
type native int

const (
	apiError     native = iota // *goopenai.APIError: a JSON error object
	requestError               // *goopenai.RequestError: any other body
	decodeError                // a JSON decoding error of a 2xx body
)

// call is one operation of the client, for running a case against both.
type call struct {
	name string
	do   func(ctx context.Context, c *openai.Client) error
}

var calls = []call{
	{"complete", func(ctx context.Context, c *openai.Client) error {
		_, err := c.Complete(ctx, memcore.CompletionRequest{Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "hi"}}})
		return err
	}},
	{"embed", func(ctx context.Context, c *openai.Client) error {
		_, err := c.Embed(ctx, []string{"hi"})
		return err
	}},
}

// checkKind checks that err matches want and no other sentinel, and that
// memcore.IsTransient agrees.
func checkKind(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("error %q does not match %v", err, want)
	}
	for _, other := range taxonomy {
		if other != want && errors.Is(err, other) {
			t.Errorf("error %q also matches %v", err, other)
		}
	}
	transient := want == memcore.ErrRateLimited || want == memcore.ErrUnavailable
	if memcore.IsTransient(err) != transient {
		t.Errorf("IsTransient(%q) = %t; want %t", err, !transient, transient)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %q matches a context error though the context is alive", err)
	}
}

// TestErrorMapping checks the mapping onto memcore's error taxonomy (the
// README's table of errors) for every status the API and the servers and
// proxies in front of it answer with, as JSON error objects and as plain
// text, for both operations.
func TestErrorMapping(t *testing.T) {
	tests := []struct {
		status int
		file   string
		want   error
		native native
	}{
		{401, "invalid_api_key_401.json", memcore.ErrUnauthenticated, apiError},
		{401, "plain_401.txt", memcore.ErrUnauthenticated, requestError},
		{403, "model_access_403.json", memcore.ErrUnauthenticated, apiError},
		{403, "plain_403.txt", memcore.ErrUnauthenticated, requestError},
		{404, "model_not_found_404.json", memcore.ErrInvalidRequest, apiError},
		{404, "ollama_model_404.json", memcore.ErrInvalidRequest, apiError},
		{404, "plain_404.txt", memcore.ErrInvalidRequest, requestError},
		{413, "nginx_413.html", memcore.ErrInputTooLarge, requestError},
		{400, "context_length_400.json", memcore.ErrInputTooLarge, apiError},
		{400, "embedding_too_long_400.json", memcore.ErrInputTooLarge, apiError},
		{400, "vllm_context_400.json", memcore.ErrInputTooLarge, requestError},
		{400, "llamacpp_context_400.json", memcore.ErrInputTooLarge, apiError},
		{400, "ollama_context_400.json", memcore.ErrInputTooLarge, requestError},
		{400, "invalid_schema_400.json", memcore.ErrInvalidRequest, apiError},
		{400, "plain_400.txt", memcore.ErrInvalidRequest, requestError},
		{422, "fastapi_422.json", memcore.ErrInvalidRequest, requestError},
		{429, "rate_limit_429.json", memcore.ErrRateLimited, apiError},
		{429, "plain_429.txt", memcore.ErrRateLimited, requestError},
		{429, "insufficient_quota_429.json", memcore.ErrUnauthenticated, apiError},
		{500, "server_error_500.json", memcore.ErrUnavailable, apiError},
		{500, "plain_500.txt", memcore.ErrUnavailable, requestError},
		{502, "nginx_502.html", memcore.ErrUnavailable, requestError},
		{503, "overloaded_503.json", memcore.ErrUnavailable, apiError},
		{503, "plain_503.txt", memcore.ErrUnavailable, requestError},
		{504, "nginx_504.html", memcore.ErrUnavailable, requestError},
		{408, "plain_400.txt", memcore.ErrUnavailable, requestError},
		{200, "malformed_200.json", memcore.ErrInvalidResponse, decodeError},
		{200, "truncated_200.json", memcore.ErrInvalidResponse, decodeError},
		{200, "captive_portal_200.html", memcore.ErrInvalidResponse, decodeError},
	}
	for _, tt := range tests {
		for _, op := range calls {
			t.Run(http.StatusText(tt.status)+"/"+tt.file+"/"+op.name, func(t *testing.T) {
				s, c := officialClient(t, nil)
				s.setFail(tt.status, tt.file)
				err := op.do(t.Context(), c)
				if err == nil {
					t.Fatal("no error")
				}
				checkKind(t, err, tt.want)
				if !strings.HasPrefix(err.Error(), "openai: "+op.name+": ") {
					t.Errorf("error %q does not start with openai: %s:", err, op.name)
				}
				var apiErr *goopenai.APIError
				var reqErr *goopenai.RequestError
				switch tt.native {
				case apiError:
					if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != tt.status {
						t.Errorf("errors.As does not reach an *openai.APIError with status %d in %q", tt.status, err)
					}
				case requestError:
					if !errors.As(err, &reqErr) || reqErr.HTTPStatusCode != tt.status {
						t.Errorf("errors.As does not reach an *openai.RequestError with status %d in %q", tt.status, err)
					}
				case decodeError:
					if errors.As(err, &apiErr) || errors.As(err, &reqErr) {
						t.Errorf("a 2xx body that does not decode surfaced as an HTTP error: %q", err)
					}
				}
			})
		}
	}
}

func TestInsufficientQuotaIsNotRetried(t *testing.T) {
	s, c := officialClient(t, nil)
	s.setFail(http.StatusTooManyRequests, "insufficient_quota_429.json")
	attempts := 0
	err := memcore.Retry(t.Context(), memcore.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond}, func(ctx context.Context) error {
		attempts++
		_, err := c.Embed(ctx, []string{"x"})
		return err
	})
	if !errors.Is(err, memcore.ErrUnauthenticated) || attempts != 1 {
		t.Errorf("after %d attempts: %v; want one attempt failing with ErrUnauthenticated", attempts, err)
	}
	var apiErr *goopenai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "insufficient_quota" {
		t.Errorf("the APIError with code insufficient_quota is not reachable: %v", err)
	}
}

func TestTransportFailures(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		base := srv.URL + "/v1"
		srv.Close()
		c, err := openai.New(openai.Config{BaseURL: base, Model: "m", EmbeddingModel: "e"})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range calls {
			err := op.do(t.Context(), c)
			checkKind(t, err, memcore.ErrUnavailable)
			var urlErr *url.Error
			if !errors.As(err, &urlErr) {
				t.Errorf("%s: *url.Error not reachable in %q", op.name, err)
			}
		}
	})

	// The server hijacks the connection, writes reply (perhaps nothing) and
	// closes it: the reply is cut off mid-body, or never starts.
	for _, tc := range []struct{ name, reply string }{
		{"connection closed mid-body", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"object\": \"list\", \"data\": ["},
		{"connection closed before the answer", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				conn, buf, err := w.(http.Hijacker).Hijack()
				if err != nil {
					return
				}
				defer conn.Close()
				_, _ = buf.WriteString(tc.reply)
				_ = buf.Flush()
			}))
			defer srv.Close()
			c, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "m", EmbeddingModel: "e"})
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range calls {
				checkKind(t, op.do(t.Context(), c), memcore.ErrUnavailable)
			}
		})
	}

	t.Run("HTTP client timeout", func(t *testing.T) {
		s := newAPIServer(t, "")
		s.configure(func(s *apiServer) { s.hold = true })
		c, err := openai.New(openai.Config{
			BaseURL: s.BaseURL(), Model: "m", EmbeddingModel: "e",
			HTTPClient: &http.Client{Timeout: 50 * time.Millisecond},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range calls {
			err := op.do(t.Context(), c)
			checkKind(t, err, memcore.ErrUnavailable)
			var urlErr *url.Error
			if !errors.As(err, &urlErr) || !urlErr.Timeout() {
				t.Errorf("%s: a timing-out *url.Error is not reachable in %q", op.name, err)
			}
			var netErr net.Error
			if !errors.As(err, &netErr) || !netErr.Timeout() {
				t.Errorf("%s: no net.Error reporting a timeout in %q", op.name, err)
			}
		}
	})
}

func TestContextEndsInFlight(t *testing.T) {
	for _, op := range calls {
		for _, want := range []error{context.Canceled, context.DeadlineExceeded} {
			t.Run(op.name+"/"+want.Error(), func(t *testing.T) {
				s, c := ollamaClient(t, nil)
				s.configure(func(s *apiServer) { s.hold = true })
				// The context ends 50ms into the call, while the server holds it.
				var ctx context.Context
				var cancel context.CancelFunc
				if want == context.Canceled {
					ctx, cancel = context.WithCancel(t.Context())
					timer := time.AfterFunc(50*time.Millisecond, cancel)
					defer timer.Stop()
				} else {
					ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
				}
				defer cancel()
				start := time.Now()
				err := op.do(ctx, c)
				if !errors.Is(err, want) {
					t.Errorf("error %v; want %v", err, want)
				}
				for _, k := range taxonomy {
					if errors.Is(err, k) {
						t.Errorf("a context error must not be classified; %q matches %v", err, k)
					}
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("returned %v after the call started; want promptly after the context ended", d)
				}
			})
		}
	}
}
