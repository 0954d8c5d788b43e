package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/genai"

	"github.com/forgemem/forgemem/memcore"
)

// apiError carries the SDK's genai.APIError (which the SDK returns as a
// value) so that errors.As reaches it whether the caller's target is a
// genai.APIError or a *genai.APIError.
type apiError struct {
	err genai.APIError
}

func (e *apiError) Error() string { return e.err.Error() }

// Unwrap returns the genai.APIError value.
func (e *apiError) Unwrap() error { return e.err }

// As sets a *genai.APIError target to a copy of the error.
func (e *apiError) As(target any) bool {
	if p, ok := target.(**genai.APIError); ok {
		v := e.err
		*p = &v
		return true
	}
	return false
}

// wrapError maps err, returned by the SDK for operation op ("complete" or
// "embed"), to the memcore taxonomy:
//
//	fmt.Errorf("gemini: <op>: %w: %w", memcore.ErrX, native)
//
// Errors of the caller's context are passed through (still matching
// context.Canceled / context.DeadlineExceeded with errors.Is).
func wrapError(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(err, ctxErr) {
			return fmt.Errorf("gemini: %s: %w", op, err)
		}
		return fmt.Errorf("gemini: %s: %w: %w", op, ctxErr, err)
	}
	var ae genai.APIError
	if errors.As(err, &ae) {
		return fmt.Errorf("gemini: %s: %w: %w", op, classifyAPIError(ae), &apiError{err: ae})
	}
	var pae *genai.APIError
	if errors.As(err, &pae) && pae != nil {
		return fmt.Errorf("gemini: %s: %w: %w", op, classifyAPIError(*pae), &apiError{err: *pae})
	}
	kind := classifyOther(err)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		// A timeout of the HTTP client while the caller's context is
		// live: it must not look like the caller's deadline (which
		// memcore.IsTransient would take as final).
		err = &detachedError{err: err}
	}
	return fmt.Errorf("gemini: %s: %w: %w", op, kind, err)
}

// detachedError hides the context errors in err's chain from errors.Is
// while errors.As still reaches every error in it (*url.Error, net.Error).
type detachedError struct {
	err error
}

func (e *detachedError) Error() string { return e.err.Error() }

// As looks for target in the hidden chain.
func (e *detachedError) As(target any) bool { return errors.As(e.err, target) }

// classifyOther maps an error that is not an API error: one of the
// transport (the request never got an HTTP answer, or the answer broke
// off), of decoding a 2xx body, or of the SDK refusing the request before
// sending it.
func classifyOther(err error) error {
	var (
		urlErr    *url.Error
		netErr    net.Error
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &urlErr), errors.As(err, &netErr),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, context.DeadlineExceeded):
		// No usable answer: connection refused or reset, a timeout of the
		// HTTP client or of the SDK (the caller's context is still live
		// here), a body cut short.
		return memcore.ErrUnavailable
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr), errors.Is(err, io.EOF):
		return memcore.ErrInvalidResponse
	default:
		// What is left is the SDK refusing to build the request.
		return memcore.ErrInvalidRequest
	}
}

// sdkPanic is the error of a call during which the SDK panicked. The
// genai SDK does on some replies (v1.77.0 on a 2xx body of "null"), and a
// reply a server sends must not crash the program; the call fails with
// ErrInvalidResponse instead.
type sdkPanic struct {
	value any
}

func (e *sdkPanic) Error() string {
	return fmt.Sprintf("the genai SDK panicked on the reply: %v", e.value)
}

// guard calls f and turns a panic in it into an error wrapping
// ErrInvalidResponse.
func guard[T any](op string, f func() (T, error)) (result T, err error) {
	defer func() {
		if v := recover(); v != nil {
			var zero T
			result, err = zero, fmt.Errorf("gemini: %s: %w: %w", op, memcore.ErrInvalidResponse, &sdkPanic{value: v})
		}
	}()
	return f()
}

// grpcStatusCodes maps the Google API status names to HTTP codes, for
// error bodies that carry a status but no code.
var grpcStatusCodes = map[string]int{
	"INVALID_ARGUMENT":    http.StatusBadRequest,
	"FAILED_PRECONDITION": http.StatusBadRequest,
	"OUT_OF_RANGE":        http.StatusBadRequest,
	"UNAUTHENTICATED":     http.StatusUnauthorized,
	"PERMISSION_DENIED":   http.StatusForbidden,
	"NOT_FOUND":           http.StatusNotFound,
	"ABORTED":             http.StatusConflict,
	"ALREADY_EXISTS":      http.StatusConflict,
	"RESOURCE_EXHAUSTED":  http.StatusTooManyRequests,
	"CANCELLED":           499,
	"INTERNAL":            http.StatusInternalServerError,
	"UNKNOWN":             http.StatusInternalServerError,
	"DATA_LOSS":           http.StatusInternalServerError,
	"UNIMPLEMENTED":       http.StatusNotImplemented,
	"UNAVAILABLE":         http.StatusServiceUnavailable,
	"DEADLINE_EXCEEDED":   http.StatusGatewayTimeout,
}

// statusCode is the HTTP status of e: its Code, or else the code its
// Status names (a gRPC status name, or an HTTP status line such as
// "503 Service Unavailable" for plain-text bodies).
func statusCode(e genai.APIError) int {
	if e.Code != 0 {
		return e.Code
	}
	if c, ok := grpcStatusCodes[strings.ToUpper(strings.TrimSpace(e.Status))]; ok {
		return c
	}
	var code int
	if _, err := fmt.Sscanf(e.Status, "%d", &code); err == nil {
		return code
	}
	return 0
}

// classifyAPIError maps an error answer of the API to memcore's error
// taxonomy: 401 and 403, and a 400 reporting a wrong or expired key, are
// ErrUnauthenticated; 429 is ErrRateLimited; 413, and a 400 naming a size
// limit, ErrInputTooLarge; 408, 499 and 5xx ErrUnavailable; other 4xx
// ErrInvalidRequest; an answer without a usable status ErrInvalidResponse.
func classifyAPIError(e genai.APIError) error {
	code := statusCode(e)
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return memcore.ErrUnauthenticated
	case code == http.StatusTooManyRequests:
		return memcore.ErrRateLimited
	case code == http.StatusRequestEntityTooLarge:
		return memcore.ErrInputTooLarge
	case code == http.StatusRequestTimeout || code == 499 || code >= 500:
		return memcore.ErrUnavailable
	case code == http.StatusBadRequest:
		switch {
		case badAPIKey(e):
			// The Gemini API answers a wrong key with 400 INVALID_ARGUMENT.
			return memcore.ErrUnauthenticated
		case inputTooLarge(e.Message):
			return memcore.ErrInputTooLarge
		}
		return memcore.ErrInvalidRequest
	case code >= 400 && code < 500:
		// 404 unknown model, 409, 422, …
		return memcore.ErrInvalidRequest
	default:
		// An error without a usable status: the answer is not one we can
		// act on.
		return memcore.ErrInvalidResponse
	}
}

// badAPIKey reports whether a 400 is the Gemini API's answer to a wrong or
// expired key: reason API_KEY_INVALID in an ErrorInfo detail, or a message
// saying so.
func badAPIKey(e genai.APIError) bool {
	for _, d := range e.Details {
		if r, _ := d["reason"].(string); r == "API_KEY_INVALID" || r == "API_KEY_EXPIRED" {
			return true
		}
	}
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "api key not valid") || strings.Contains(m, "api key expired") ||
		strings.Contains(m, "api_key_invalid") || strings.Contains(m, "invalid api key")
}

// inputTooLargeHints are phrases of the API's 400 answers to inputs over a
// model's token, context or payload limits.
var inputTooLargeHints = []string{
	"token count",
	"maximum number of tokens",
	"too many tokens",
	"exceeds the maximum",
	"exceeds the limit",
	"exceeds the context",
	"context length",
	"context window",
	"input is too long",
	"too long",
	"too large",
	"payload size",
	"request size",
}

func inputTooLarge(message string) bool {
	m := strings.ToLower(message)
	for _, h := range inputTooLargeHints {
		if strings.Contains(m, h) {
			return true
		}
	}
	return false
}
