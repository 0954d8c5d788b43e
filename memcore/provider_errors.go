package memcore

import "errors"

// The provider error taxonomy. Providers wrap their native error with one of
// these, for example
//
//	fmt.Errorf("openai: embed: %w: %w", memcore.ErrRateLimited, apiErr)
//
// so callers match the kind with errors.Is and still reach the native error
// with errors.As. Context cancellation and deadline errors are passed through
// unwrapped (context.Canceled, context.DeadlineExceeded).
var (
	// ErrRateLimited: the provider asked us to slow down (HTTP 429). Transient.
	ErrRateLimited = errors.New("rate limited")
	// ErrUnauthenticated: the credentials are missing, wrong or lack
	// permission (HTTP 401, 403). Permanent.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrUnavailable: the provider or the network failed in a way that may
	// pass (HTTP 5xx, connection errors, timeouts of the provider itself).
	// Transient.
	ErrUnavailable = errors.New("provider unavailable")
	// ErrInputTooLarge: the input exceeds the model's context or input
	// limit (HTTP 413, or a 400 naming the context length). Permanent.
	ErrInputTooLarge = errors.New("input too large")
	// ErrInvalidRequest: the provider rejected the request (HTTP 400, 404
	// unknown model, 422). Permanent.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrInvalidResponse: the provider answered with something that cannot
	// be used (malformed body, wrong number of vectors, empty reply).
	// Permanent.
	ErrInvalidResponse = errors.New("invalid response")
)

// IsTransient reports whether err is worth retrying: it matches
// [ErrRateLimited] or [ErrUnavailable] — even if it also wraps a context
// error, as when a provider reports its own HTTP timeout as unavailable (the
// caller's context is watched separately: [Retry] stops as soon as it ends).
// Bare context errors, the other taxonomy errors and errors outside the
// taxonomy are permanent: retrying what is not understood would only hide it.
func IsTransient(err error) bool {
	return errors.Is(err, ErrRateLimited) || errors.Is(err, ErrUnavailable)
}
