package memcore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A file a person edited by hand that lacks created_at, or holds a related
// edge with an unknown relationship, is served repaired — the file's
// modification time as created_at, the edge dropped — and not skipped;
// Problems lists each repair as served; a Serialize of what was read writes
// the repaired memory; Parse stays strict.
func TestFileStoreRepairsHandEdits(t *testing.T) {
	modTime := time.Date(2025, 4, 2, 9, 15, 42, 700_000_000, time.FixedZone("CEST", 2*3600))
	wantCreated := time.Date(2025, 4, 2, 7, 15, 42, 0, time.UTC) // UTC, whole seconds
	base := func(id string) *MemoryFile {
		m := sample(id)
		m.Meta.Related = []RelatedMemory{{ID: idC, Relationship: RelationshipRefines}, {ID: idD, Relationship: RelationshipRelatesTo}}
		m.Meta.Extra = map[string]any{"reviewed_by": "ada"}
		return m
	}
	dropCreated := func(s string) string { return strings.Replace(s, "created_at: 2025-01-15T10:30:00Z\n", "", 1) }
	tests := []struct {
		name    string
		edit    func(string) string
		want    func(*MemoryFile) // what the store serves, from base
		repairs []string          // substrings of each repair, in order
	}{
		{
			name:    "created_at missing",
			edit:    dropCreated,
			want:    func(m *MemoryFile) { m.Meta.CreatedAt = wantCreated },
			repairs: []string{"created_at is missing: the file's modification time, 2025-04-02T07:15:42Z, is used"},
		},
		{
			name:    "created_at empty",
			edit:    func(s string) string { return strings.Replace(s, "created_at: 2025-01-15T10:30:00Z", "created_at:", 1) },
			want:    func(m *MemoryFile) { m.Meta.CreatedAt = wantCreated },
			repairs: []string{"created_at is missing"},
		},
		{
			name: "unknown relationship",
			edit: func(s string) string {
				return strings.Replace(s, "relationship: refines", "relationship: inspired-by", 1)
			},
			want: func(m *MemoryFile) { m.Meta.Related = m.Meta.Related[1:] },
			repairs: []string{`related[0]: relationship "inspired-by" is not one of refines, contradicts, relates-to: the edge to ` +
				idC + " is dropped"},
		},
		{
			name: "supersedes as a related relationship",
			edit: func(s string) string {
				return strings.Replace(s, "relationship: relates-to", "relationship: supersedes", 1)
			},
			want:    func(m *MemoryFile) { m.Meta.Related = m.Meta.Related[:1] },
			repairs: []string{`related[1]: relationship "supersedes"`},
		},
		{
			name: "every edge unknown, and no created_at",
			edit: func(s string) string {
				s = strings.Replace(s, "relationship: refines", "relationship: Refines", 1)
				return dropCreated(strings.Replace(s, "relationship: relates-to", "relationship: \"\"", 1))
			},
			want:    func(m *MemoryFile) { m.Meta.CreatedAt, m.Meta.Related = wantCreated, nil },
			repairs: []string{"created_at is missing", `related[0]: relationship "Refines"`, `related[1]: relationship ""`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			ts := newTestStore(t)
			id := NewMemoryID()
			edited := tt.edit(string(mustSerialize(t, base(id))))
			path := filepath.Join(ts.repo, id+".md")
			if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, modTime, modTime); err != nil {
				t.Fatal(err)
			}
			if _, err := Parse([]byte(edited)); !errors.Is(err, ErrInvalidMemory) {
				t.Errorf("Parse of the edited file = %v, want ErrInvalidMemory: Parse stays strict", err)
			}
			want := base(id)
			tt.want(want)

			listed := ts.mustList(t)
			if len(listed) != 1 || !equalMemory(listed[0], want) {
				t.Fatalf("List = %+v, want the repaired memory %+v", listed, want)
			}
			got, err := ts.Read(ctx, id)
			if err != nil || !equalMemory(got, want) {
				t.Fatalf("Read = %+v, %v; want the repaired memory", got, err)
			}
			probs, err := ts.Problems(ctx)
			if err != nil || len(probs) != len(tt.repairs) {
				t.Fatalf("Problems = %+v, %v; want %d repairs", probs, err, len(tt.repairs))
			}
			for i, p := range probs {
				if p.Path != path || p.Scope != ScopeRepo || !p.Served || !errors.Is(p.Err, ErrInvalidMemory) || !strings.Contains(p.Err.Error(), tt.repairs[i]) {
					t.Errorf("problem %d = {%s %s %v served %v}, want %s served, saying %q", i, p.Path, p.Scope, p.Err, p.Served, path, tt.repairs[i])
				}
			}
			if !strings.Contains(ts.logs.String(), path) {
				t.Errorf("no log line names the repaired file; logs:\n%s", ts.logs)
			}

			// What was read serializes to the repaired memory, and reads back.
			data, err := Serialize(got)
			if err != nil {
				t.Fatalf("Serialize of the repaired memory: %v", err)
			}
			back, err := Parse(data)
			if err != nil || !equalMemory(back, want) {
				t.Errorf("Parse(Serialize(read)) = %+v, %v; want %+v", back, err, want)
			}
			if !strings.Contains(string(data), "created_at: "+want.Meta.CreatedAt.Format(time.RFC3339Nano)+"\n") {
				t.Errorf("the serialized memory does not hold the created_at read:\n%s", data)
			}
			// Rewritten with what was read, the file is no longer a problem.
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if probs, err := ts.Problems(ctx); err != nil || len(probs) != 0 {
				t.Errorf("Problems after rewriting the file = %+v, %v; want none", probs, err)
			}
		})
	}
}

// What cannot be repaired is still skipped, and reported as not served; a
// repaired file follows its modification time.
func TestFileStoreRepairLimits(t *testing.T) {
	ctx := context.Background()
	ts := newTestStore(t)
	id := NewMemoryID()
	s := string(mustSerialize(t, sample(id)))
	s = strings.Replace(s, "created_at: 2025-01-15T10:30:00Z\n", "", 1)
	skipped := strings.Replace(s, "category: coding-preferences", "category: gossip", 1)
	bad := filepath.Join(ts.repo, id+".md")
	if err := os.WriteFile(bad, []byte(skipped), 0o600); err != nil {
		t.Fatal(err)
	}
	probs, err := ts.Problems(ctx)
	if err != nil || len(probs) != 1 || probs[0].Path != bad || probs[0].Served || !errors.Is(probs[0].Err, ErrInvalidMemory) ||
		!strings.Contains(probs[0].Err.Error(), "gossip") {
		t.Errorf("Problems = %+v, %v; want %s skipped for its category", probs, err, bad)
	}
	if ms := ts.mustList(t); len(ms) != 0 {
		t.Errorf("List served %v", ids(ms))
	}

	// Repaired: created_at is the modification time, whenever it changes.
	if err := os.WriteFile(bad, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{t0, t0.Add(48 * time.Hour)} {
		if err := os.Chtimes(bad, at, at); err != nil {
			t.Fatal(err)
		}
		ms := ts.mustList(t)
		if len(ms) != 1 || !ms[0].Meta.CreatedAt.Equal(at) {
			t.Errorf("List = %v, want created_at %v", ms, at)
		}
	}
	if slices.ContainsFunc(ts.mustList(t), func(m *MemoryFile) bool { return m.Meta.CreatedAt.Location() != time.UTC }) {
		t.Errorf("a repaired created_at is not in UTC")
	}
}
