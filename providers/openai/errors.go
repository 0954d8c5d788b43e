package openai

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/forgemem/forgemem/memcore"
	goopenai "github.com/sashabaranov/go-openai"
)

// wrapError turns an error of go-openai (or of the HTTP client under it)
// into one that matches a memcore taxonomy sentinel with errors.Is and still
// reaches the native error (*goopenai.APIError, *goopenai.RequestError,
// *url.Error, …) with errors.As. op names the operation ("complete",
// "embed"). When ctx has ended, the context's error is passed through
// instead of a taxonomy error.
func wrapError(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(err, ctxErr) {
			return fmt.Errorf("openai: %s: %w", op, err)
		}
		return fmt.Errorf("openai: %s: %w: %w", op, ctxErr, err)
	}
	kind := classify(err)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		// The caller's context is alive, so the deadline was the HTTP
		// client's own Timeout (or a cancellation below us). Hide the
		// context error from errors.Is: it would make memcore.IsTransient
		// call this permanent, while a provider timeout is worth retrying.
		err = &transportTimeout{err: err}
	}
	return fmt.Errorf("openai: %s: %w: %w", op, kind, err)
}

// classify picks the memcore sentinel for err, which is not a context error
// of the caller.
func classify(err error) error {
	// RequestError first: when an error body is JSON but not an error
	// object go-openai understands (Ollama's {"error": "text"}), it wraps an
	// empty *APIError without a status inside the *RequestError.
	var reqErr *goopenai.RequestError
	if errors.As(err, &reqErr) {
		return classifyStatus(reqErr.HTTPStatusCode, "", "", string(reqErr.Body))
	}
	var apiErr *goopenai.APIError
	if errors.As(err, &apiErr) {
		return classifyStatus(apiErr.HTTPStatusCode, apiErrorCode(apiErr), apiErr.Type, apiErr.Message)
	}
	if isTransportError(err) {
		return memcore.ErrUnavailable
	}
	if errors.Is(err, errLocal) {
		return memcore.ErrInvalidRequest
	}
	// What is left came after a 2xx answer: the body could not be decoded.
	return memcore.ErrInvalidResponse
}

// errLocal marks errors go-openai reports before sending anything (its own
// model and parameter checks), which are invalid requests.
var errLocal = errors.New("rejected before sending")

// localErrors are go-openai's own request checks.
var localErrors = []error{
	goopenai.ErrChatCompletionInvalidModel,
	goopenai.ErrChatCompletionStreamNotSupported,
	goopenai.ErrContentFieldsMisused,
	goopenai.ErrReasoningEffortUnsupported,
	goopenai.ErrReasoningToolsRequireResponses,
	goopenai.ErrReasoningSamplingUnsupported,
	goopenai.ErrReasoningModelMaxTokensDeprecated,
	goopenai.ErrReasoningModelLimitationsLogprobs,
	goopenai.ErrReasoningModelLimitationsOther,
	goopenai.ErrO1BetaLimitationsMessageTypes,
	goopenai.ErrO1BetaLimitationsTools,
}

// markLocal adds errLocal to err when it is one of go-openai's own checks.
func markLocal(err error) error {
	for _, l := range localErrors {
		if errors.Is(err, l) {
			return fmt.Errorf("%w: %w", errLocal, err)
		}
	}
	return err
}

// classifyStatus maps an HTTP error status (with the OpenAI error code,
// type and message when the body carried them, or the raw body) to a
// memcore sentinel; see the README's error table.
func classifyStatus(status int, code, typ, message string) error {
	switch {
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return memcore.ErrUnauthenticated
	case status == http.StatusTooManyRequests:
		if code == "insufficient_quota" || typ == "insufficient_quota" {
			// The account is out of credit: no retry will help.
			return memcore.ErrUnauthenticated
		}
		return memcore.ErrRateLimited
	case status == http.StatusRequestEntityTooLarge:
		return memcore.ErrInputTooLarge
	case status == http.StatusRequestTimeout:
		return memcore.ErrUnavailable
	case status >= 500:
		return memcore.ErrUnavailable
	case status >= 400:
		if tooLarge(code + " " + typ + " " + message) {
			return memcore.ErrInputTooLarge
		}
		return memcore.ErrInvalidRequest
	default:
		// 1xx or an unfollowed 3xx: not an answer the API gives.
		return memcore.ErrInvalidResponse
	}
}

// tooLargeMarkers are phrases with which OpenAI and OpenAI-compatible
// servers (vLLM, llama.cpp, Ollama, LiteLLM) report an input that exceeds
// the model's context or a request's token limit.
var tooLargeMarkers = []string{
	"context_length_exceeded",
	"context length",
	"maximum context",
	"context window",
	"context size",
	"exceed_context_size",
	"too many tokens",
	"tokens per request",
	"input is too long",
	"input too long",
	"too large",
	"string_above_max_length",
}

// tooLarge reports whether the text of an error (code, type and message, or
// a raw body) names an input that exceeds a limit.
func tooLarge(text string) bool {
	text = strings.ToLower(text)
	for _, m := range tooLargeMarkers {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

// apiErrorCode returns the APIError's code as a string ("" when absent).
func apiErrorCode(e *goopenai.APIError) string {
	switch c := e.Code.(type) {
	case nil:
		return ""
	case string:
		return c
	default:
		return fmt.Sprint(c)
	}
}

// isTransportError reports whether err is a failure to reach the server or
// to read its answer: connection refused or reset, timeouts, a body cut
// short.
func isTransportError(err error) bool {
	var bre *bodyReadError
	if errors.As(err, &bre) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}

// bodyReadError marks a failure while reading a response body (the
// connection broke), as opposed to a body that arrived whole but could not
// be decoded.
type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return "reading response body: " + e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

// transportTimeout wraps a timeout of the HTTP client while the caller's
// context is still alive. errors.As reaches the wrapped error (for example
// *url.Error) but errors.Is does not see context.DeadlineExceeded, so the
// error reads as memcore.ErrUnavailable, which is transient.
type transportTimeout struct{ err error }

func (e *transportTimeout) Error() string { return e.err.Error() }

// As lets errors.As reach the errors inside the timeout.
func (e *transportTimeout) As(target any) bool { return errors.As(e.err, target) }

// Timeout reports true, as net.Error does for timeouts.
func (e *transportTimeout) Timeout() bool { return true }

// invalidResponse builds an ErrInvalidResponse error for a reply that
// decoded but cannot be used.
func invalidResponse(op, format string, args ...any) error {
	return fmt.Errorf("openai: %s: %w: %s", op, memcore.ErrInvalidResponse, fmt.Sprintf(format, args...))
}

// invalidRequest builds an ErrInvalidRequest error for a request this
// package refuses to send.
func invalidRequest(op, format string, args ...any) error {
	return fmt.Errorf("openai: %s: %w: %s", op, memcore.ErrInvalidRequest, fmt.Sprintf(format, args...))
}
