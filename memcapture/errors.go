package memcapture

import (
	"errors"

	"github.com/forgemem/forgemem/memcore"
)

// Errors returned by this package; match them with errors.Is.
var (
	// ErrInvalidConfig is memcore.ErrInvalidConfig, the one sentinel every
	// configuration error of forgemem matches; it is kept here so that
	// errors.Is(err, memcapture.ErrInvalidConfig) goes on working. A
	// constructor argument missing or a [Config] field out of range is a
	// *memcore.ConfigError matching it, whose message names every bad
	// field, the value given and the values allowed, for example
	//
	//	memcapture: invalid config: Cadence is 11, want 1–10 (0 means 1)
	//
	// Settings are never clamped silently.
	ErrInvalidConfig = memcore.ErrInvalidConfig
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
