package fake

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// APIError is the fakes' native error, standing in for the API error type of
// a provider's SDK. A call made to fail with one of memcore's taxonomy
// sentinels returns an error that wraps both the sentinel and an *APIError,
// so callers can match the kind with errors.Is and reach the details with
// errors.As.
type APIError struct {
	// StatusCode is the HTTP status an API would have answered with:
	// 429, 401, 503, 413 or 400, or 200 for a reply that came back but
	// could not be used (memcore.ErrInvalidResponse).
	StatusCode int
	// Message is the API's explanation.
	Message string
}

// Error implements error.
func (e *APIError) Error() string {
	return fmt.Sprintf("fake api: status %d: %s", e.StatusCode, e.Message)
}

// nativeFailures maps each taxonomy sentinel to the native error an HTTP API
// would have returned for it.
var nativeFailures = map[error]APIError{
	memcore.ErrRateLimited:     {http.StatusTooManyRequests, "rate limit exceeded, retry later"},
	memcore.ErrUnauthenticated: {http.StatusUnauthorized, "invalid api key"},
	memcore.ErrUnavailable:     {http.StatusServiceUnavailable, "service temporarily unavailable"},
	memcore.ErrInputTooLarge:   {http.StatusRequestEntityTooLarge, "input exceeds the model's limit"},
	memcore.ErrInvalidRequest:  {http.StatusBadRequest, "malformed request"},
	memcore.ErrInvalidResponse: {http.StatusOK, "malformed response body"},
}

// failureError is the error a call of operation op reports for err: a
// taxonomy sentinel is wrapped together with its native *APIError, anything
// else is wrapped as it is.
func failureError(op string, err error) error {
	if native, ok := nativeFailures[err]; ok {
		return fmt.Errorf("fake: %s: %w: %w", op, err, &native)
	}
	return fmt.Errorf("fake: %s: %w", op, err)
}

// common is the state both fakes share: latency and scheduled failures.
type common struct {
	latency time.Duration

	mu    sync.Mutex
	fails []scheduledFailure
}

type scheduledFailure struct {
	remaining int
	err       error
}

// failNext schedules n failures with err, or, when n is negative or err is
// nil, schedules nothing and returns a *memcore.ConfigError that names
// method.
func (c *common) failNext(method string, n int, err error) error {
	if bad := failNextErr(method, n, err); bad != nil {
		return bad
	}
	c.scheduleFailures(n, err)
	return nil
}

// scheduleFailures makes the next n calls fail with err, after the failures
// already scheduled; n 0 (or less) schedules nothing.
func (c *common) scheduleFailures(n int, err error) {
	if n <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fails = append(c.fails, scheduledFailure{remaining: n, err: err})
}

// nextFailure consumes one scheduled failure and returns its error, or nil
// when none is scheduled.
func (c *common) nextFailure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.fails) == 0 {
		return nil
	}
	f := &c.fails[0]
	err := f.err
	f.remaining--
	if f.remaining == 0 {
		c.fails[0] = scheduledFailure{}
		c.fails = c.fails[1:]
	}
	return err
}

// wait sleeps for the configured latency, returning ctx.Err() as soon as ctx
// ends.
func (c *common) wait(ctx context.Context) error {
	if c.latency <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(c.latency)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
