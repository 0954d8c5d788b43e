package memcore

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"
)

// chainStore holds memories with real ids: p1 ← p2 ← p3 (linear), f1 with
// two successors f2a (version 2) and f2b (version 3), a 2-cycle c1 ⇄ c2, and
// d2 superseding the missing d1, superseded by d3.
type chainIDs struct {
	p1, p2, p3, f1, f2a, f2b, c1, c2, d1, d2, d3 string
}

// newChainStore writes the chains into store. A store refuses a second
// successor of one version, so f2b, which forks f1's chain, is put in place
// with the FileStore's folders by hand, as a git merge would; with any
// other store it is left out.
func newChainStore(t *testing.T, store MemoryStore) chainIDs {
	t.Helper()
	var c chainIDs
	for _, p := range []*string{&c.p1, &c.p2, &c.p3, &c.f1, &c.f2a, &c.f2b, &c.c1, &c.c2, &c.d1, &c.d2, &c.d3} {
		*p = NewMemoryID()
	}
	mk := func(id string, v int, sup string) *MemoryFile {
		m := sample(id)
		m.Meta.Version = v
		m.Meta.CreatedAt = t0.Add(time.Duration(v) * time.Hour)
		if sup != "" {
			m.Meta.Supersedes = &sup
		}
		m.Content = "memory " + id
		return m
	}
	for _, m := range []*MemoryFile{
		mk(c.p1, 1, ""), mk(c.p2, 2, c.p1), mk(c.p3, 3, c.p2),
		mk(c.f1, 1, ""), mk(c.f2a, 2, c.f1), mk(c.f2b, 3, c.f1),
		mk(c.c1, 1, c.c2), mk(c.c2, 2, c.c1),
		mk(c.d2, 2, c.d1), mk(c.d3, 3, c.d2),
	} {
		if m.Meta.ID == c.f2b {
			if fs, ok := store.(*FileStore); ok {
				handWrite(t, fs, m)
			}
			continue
		}
		if err := store.Write(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// handWrite puts m in its scope's folder of s without Write, as a person
// or a git merge would.
func handWrite(t *testing.T, s *FileStore, m *MemoryFile) {
	t.Helper()
	if err := os.WriteFile(s.path(m.Meta.Scope, m.Meta.ID), mustSerialize(t, m), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestVersionChain(t *testing.T) {
	stores := map[string]func(t *testing.T) MemoryStore{
		"MemStore":  func(*testing.T) MemoryStore { return NewMemStore() },
		"FileStore": func(t *testing.T) MemoryStore { return newTestStore(t).FileStore },
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			store := newStore(t)
			c := newChainStore(t, store)
			ctx := context.Background()
			tests := []struct {
				name     string
				id       string
				maxDepth int
				want     []string
				wantErr  error
			}{
				{"whole chain from the head", c.p3, 0, []string{c.p1, c.p2, c.p3}, nil},
				{"no limit (negative)", c.p3, -1, []string{c.p1, c.p2, c.p3}, nil},
				{"limit above the length", c.p3, 10, []string{c.p1, c.p2, c.p3}, nil},
				{"limit 2", c.p3, 2, []string{c.p2, c.p3}, nil},
				{"limit 1", c.p3, 1, []string{c.p3}, nil},
				{"from the middle: toward the root only", c.p2, 0, []string{c.p1, c.p2}, nil},
				{"root", c.p1, 0, []string{c.p1}, nil},
				{"fork branch", c.f2a, 0, []string{c.f1, c.f2a}, nil},
				{"2-cycle terminates", c.c2, 0, []string{c.c1, c.c2}, nil},
				{"2-cycle, limit 1", c.c1, 1, []string{c.c1}, nil},
				{"dangling link: partial chain", c.d3, 0, []string{c.d2, c.d3}, ErrNotFound},
				{"dangling link beyond the limit", c.d3, 2, []string{c.d2, c.d3}, nil},
				{"missing id", NewMemoryID(), 0, nil, ErrNotFound},
				{"invalid id", "../x", 0, nil, ErrInvalidID},
			}
			for _, tt := range tests {
				got, err := VersionChain(ctx, store, tt.id, tt.maxDepth)
				if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("%s: err = %v, want %v", tt.name, err, tt.wantErr)
				}
				if !slices.Equal(ids(got), tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
					t.Errorf("%s: VersionChain = %v, want %v", tt.name, ids(got), tt.want)
				}
			}
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := VersionChain(cancelled, store, c.p3, 0); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled: err = %v", err)
			}
		})
	}
}

func TestLatestVersion(t *testing.T) {
	store := newTestStore(t).FileStore
	c := newChainStore(t, store)
	ctx := context.Background()
	tests := []struct {
		id, want string
		wantErr  error
	}{
		{c.p1, c.p3, nil},
		{c.p2, c.p3, nil},
		{c.p3, c.p3, nil},
		{c.f1, c.f2b, nil},  // fork: the highest version
		{c.f2a, c.f2b, nil}, // every branch of a fork has the chain's head
		{c.c1, c.c2, nil},   // cycle: terminates, at its best member
		{c.c2, c.c2, nil},
		{c.d2, c.d3, nil},
		{c.d1, "", ErrNotFound}, // named by a link, but not stored
		{NewMemoryID(), "", ErrNotFound},
		{"mem_../../x", "", ErrInvalidID},
		{"", "", ErrInvalidID},
	}
	for _, tt := range tests {
		got, err := LatestVersion(ctx, store, tt.id)
		if got != tt.want || tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
			t.Errorf("LatestVersion(%s) = %q, %v; want %q, %v", tt.id, got, err, tt.want, tt.wantErr)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := LatestVersion(cancelled, store, c.p1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

func TestNewVersion(t *testing.T) {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	setNow(t, at)
	pred := full()
	before := pred.Clone()
	next := NewVersion(pred, "session-2", TriggerManual)

	if err := ValidateID(next.Meta.ID); err != nil || next.Meta.ID == pred.Meta.ID {
		t.Errorf("ID = %q (%v), want a new valid id", next.Meta.ID, err)
	}
	p := pred.Meta.ID
	want := MemoryMeta{
		ID: next.Meta.ID, CreatedAt: at, UpdatedAt: at, Version: pred.Meta.Version + 1,
		Scope: pred.Meta.Scope, Category: pred.Meta.Category, Supersedes: &p,
		Related: pred.Meta.Related, SessionID: "session-2", Trigger: TriggerManual,
	}
	if !equalMemory(next, &MemoryFile{Meta: want}) {
		t.Errorf("NewVersion =\n%+v\nwant\n%+v", next.Meta, want)
	}
	// The carried-forward edges are a copy.
	next.Meta.Related[0].ID = idE
	next.Meta.Related = append(next.Meta.Related, rel(idB, RelationshipRefines))
	*next.Meta.Supersedes = idE
	if !equalMemory(pred, before) {
		t.Errorf("changing the new version changed its predecessor: %+v", pred.Meta)
	}
	// With content it can be written next to its predecessor.
	next = NewVersion(pred, "s", TriggerCadence)
	next.Content = "changed my mind"
	store := NewMemStore()
	ctx := context.Background()
	for _, m := range []*MemoryFile{pred, next} {
		if err := store.Write(ctx, m); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	if head, err := LatestVersion(ctx, store, pred.Meta.ID); err != nil || head != next.Meta.ID {
		t.Errorf("LatestVersion = %q, %v; want the new version", head, err)
	}

	noEdges := NewVersion(sample(idA), "", TriggerCompaction)
	if noEdges.Meta.Related != nil || noEdges.Meta.Version != 2 || noEdges.Content != "" {
		t.Errorf("NewVersion of a memory without edges = %+v", noEdges)
	}
}

// The package clock gives UTC whole seconds, as files store them.
func TestNowIsUTCSeconds(t *testing.T) {
	got := now()
	if got.Location() != time.UTC || got.Nanosecond() != 0 || time.Since(got) > time.Minute || got != got.Round(0) {
		t.Errorf("now() = %v", got)
	}
}
