package memcore

import (
	"crypto/rand"
	"fmt"
)

const idPrefix = "mem_"

// idLen is len("mem_") + 36, the length of every valid id.
const idLen = len(idPrefix) + 36

// NewMemoryID returns a new random id: "mem_" followed by a UUID version 4
// made from crypto/rand.
func NewMemoryID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("mem_%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ValidateID returns nil if id has the shape of a memory id — "mem_"
// followed by 8-4-4-4-12 lower-case hexadecimal digits — and otherwise an
// error wrapping [ErrInvalidID] that says what is wrong. Any UUID version is
// accepted, so ids made by other tools work; upper-case hex is rejected so
// that one memory has exactly one file name.
func ValidateID(id string) error {
	if len(id) != idLen || id[:len(idPrefix)] != idPrefix {
		return fmt.Errorf("%w: %q: want %q followed by a UUID such as mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b", ErrInvalidID, clip(id), idPrefix)
	}
	for i := len(idPrefix); i < idLen; i++ {
		c := id[i]
		switch i - len(idPrefix) {
		case 8, 13, 18, 23:
			if c != '-' {
				return fmt.Errorf("%w: %q: want '-' at position %d", ErrInvalidID, id, i)
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return fmt.Errorf("%w: %q: want a lower-case hexadecimal digit at position %d", ErrInvalidID, id, i)
			}
		}
	}
	return nil
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
