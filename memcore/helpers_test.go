package memcore

import (
	"math"
	"reflect"
	"testing"
	"time"
)

// Fixed ids used across the tests.
const (
	idA = "mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b"
	idB = "mem_0c9d2f4e-8a1b-4c3d-9e5f-6a7b8c9d0e1f"
	idC = "mem_77aa0b1c-2d3e-4f50-8162-738495a6b7c8"
	idD = "mem_88bb1c2d-3e4f-4a61-9273-8495a6b7c8d9"
	idE = "mem_99cc2d3e-4f50-4b72-a384-95a6b7c8d9ea"
)

var t0 = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)

// sample returns a valid memory with the given id, scope repo, version 1.
func sample(id string) *MemoryFile {
	return &MemoryFile{
		Meta: MemoryMeta{
			ID:        id,
			CreatedAt: t0,
			Version:   1,
			Scope:     ScopeRepo,
			Category:  CategoryCodingPreferences,
			SessionID: "session-1",
			Trigger:   TriggerCadence,
		},
		Content: "Prefers table-driven tests.",
	}
}

// full returns a valid memory with every field set.
func full() *MemoryFile {
	p := idB
	return &MemoryFile{
		Meta: MemoryMeta{
			ID:         idA,
			CreatedAt:  time.Date(2025, 3, 1, 8, 15, 30, 123456789, time.UTC),
			UpdatedAt:  time.Date(2025, 3, 2, 9, 0, 0, 0, time.UTC),
			Version:    2,
			Scope:      ScopeUser,
			Category:   CategoryArchitecturalDecisions,
			Supersedes: &p,
			Related: []RelatedMemory{
				{ID: idC, Relationship: RelationshipRefines},
				{ID: idD, Relationship: RelationshipContradicts},
				{ID: idE, Relationship: RelationshipRelatesTo},
			},
			SessionID:     "3f2a9c1e-session",
			Trigger:       TriggerCompaction,
			Retired:       true,
			RetiredReason: "replaced by the event log",
			Source:        SourceUser,
			Evidence:      &Evidence{Quote: "let's publish through an outbox", At: time.Date(2025, 3, 1, 8, 14, 0, 0, time.UTC)},
			Status:        StatusPending,
			StatusReason:  "review of every memory is on",
			Anchors: []Anchor{
				{Path: "internal/outbox/outbox.go", Blob: "3b18e512dba79e4c8300dd08aeb37f8e728b8dad", Commit: "9e77886b4c1cc9b8a6d1a1ef2bb4c3d9f1e0a2b7"},
				{Path: "internal/outbox", Symbol: "Publish"},
				{Symbol: "outbox.table"},
			},
			Extra: map[string]any{
				"reviewed": true,
				"priority": 3,
				"owner":    "Ada",
				"weight":   1.0,
				"nothing":  nil,
				"tags":     []any{"go", 42, 0.5},
				"origin":   map[string]any{"tool": "editor", "lines": []any{3, 7}},
			},
		},
		Content: "# Event bus\n\nWe publish domain events through an outbox table.",
	}
}

// equalMemory is reflect.DeepEqual for memories, except that NaN equals NaN
// inside Extra (a NaN read from ".nan" is still a NaN, but never == itself).
func equalMemory(a, b *MemoryFile) bool {
	if a == nil || b == nil {
		return a == b
	}
	ac, bc := *a, *b
	ac.Meta.Extra, bc.Meta.Extra = nil, nil
	if !reflect.DeepEqual(ac, bc) {
		return false
	}
	if (a.Meta.Extra == nil) != (b.Meta.Extra == nil) {
		return false
	}
	return equalValue(a.Meta.Extra, b.Meta.Extra)
}

func equalValue(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalValue(v, w) {
				return false
			}
		}
		return true
	case map[any]any:
		y, ok := b.(map[any]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if f, isF := k.(float64); isF && math.IsNaN(f) {
				continue // a NaN key cannot be looked up; the lengths agree
			}
			w, ok := y[k]
			if !ok || !equalValue(v, w) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(a, b)
	}
}

// mustSerialize is Serialize for set-up.
func mustSerialize(t testing.TB, m *MemoryFile) []byte {
	t.Helper()
	b, err := Serialize(m)
	if err != nil {
		t.Fatalf("Serialize: %v", err)
	}
	return b
}

// setNow replaces the package clock for one test.
func setNow(t *testing.T, tm time.Time) {
	t.Helper()
	old := now
	now = func() time.Time { return tm }
	t.Cleanup(func() { now = old })
}
