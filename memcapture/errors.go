package memcapture

import "errors"

// Errors returned by this package; match them with errors.Is.
var (
	// ErrInvalidConfig: a constructor argument or option is missing or out
	// of range. The message names every bad setting, the value given and the
	// values allowed, for example
	//
	//	memcapture: invalid capture config: WithCadence is 11, want 1–10
	//
	// Settings are never clamped silently.
	ErrInvalidConfig = errors.New("invalid capture config")
	// ErrClosed: the pipeline has been closed (or its Start context ended)
	// and cannot be started again.
	ErrClosed = errors.New("capture pipeline closed")
	// ErrAlreadyStarted: Start was called a second time.
	ErrAlreadyStarted = errors.New("capture pipeline already started")
	// ErrStalled: a provider call was abandoned because it had not
	// returned when its pass's deadline passed (the provider ignores its
	// context). Reported in Stats.LastFailure, wrapped together with the
	// context's error; whatever the call returns later is dropped.
	ErrStalled = errors.New("provider call abandoned: it did not return by the deadline")
)
