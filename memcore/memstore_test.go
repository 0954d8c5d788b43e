package memcore

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// MemStore normalises what it stores the way a file round trip would.
func TestMemStoreNormalises(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	m := sample(idA)
	berlin := time.FixedZone("CET", 3600)
	m.Meta.CreatedAt = time.Now().In(berlin) // with a monotonic reading, not in UTC
	m.Meta.UpdatedAt = time.Date(2025, 1, 15, 11, 30, 0, 5, berlin)
	m.Meta.Related = []RelatedMemory{}
	m.Meta.Extra = map[string]any{}
	if err := s.Write(ctx, m); err != nil {
		t.Fatal(err)
	}
	got, err := s.Read(ctx, idA)
	if err != nil {
		t.Fatal(err)
	}
	for name, tm := range map[string]time.Time{"CreatedAt": got.Meta.CreatedAt, "UpdatedAt": got.Meta.UpdatedAt} {
		if tm.Location() != time.UTC {
			t.Errorf("%s is in %v, want UTC", name, tm.Location())
		}
		if tm != tm.Round(0) {
			t.Errorf("%s keeps a monotonic clock reading: %v", name, tm)
		}
	}
	if !got.Meta.CreatedAt.Equal(m.Meta.CreatedAt) || got.Meta.UpdatedAt != time.Date(2025, 1, 15, 10, 30, 0, 5, time.UTC) {
		t.Errorf("times changed instant: %v, %v", got.Meta.CreatedAt, got.Meta.UpdatedAt)
	}
	if got.Meta.Related != nil || got.Meta.Extra != nil {
		t.Errorf("Related = %#v, Extra = %#v; want nil, nil", got.Meta.Related, got.Meta.Extra)
	}

	// What MemStore hands back is what a FileStore would hand back.
	fs := newTestStore(t)
	fm := m.Clone()
	fm.Meta.CreatedAt = fm.Meta.CreatedAt.Round(0) // files keep nanoseconds
	if err := fs.Write(ctx, fm); err != nil {
		t.Fatal(err)
	}
	fromFile, err := fs.Read(ctx, idA)
	if err != nil {
		t.Fatal(err)
	}
	if !equalMemory(fromFile, got) {
		t.Errorf("MemStore gives\n%+v\nFileStore gives\n%+v", got, fromFile)
	}
}

// Changing the memory after writing it, or a memory the store returned,
// does not change the store.
func TestMemStoreCopies(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	m := full()
	want := full()
	if err := s.Write(ctx, m); err != nil {
		t.Fatal(err)
	}
	mutate := func(c *MemoryFile) {
		c.Content = "changed"
		c.Meta.Version = 99
		*c.Meta.Supersedes = idE
		c.Meta.Related[0].ID = idE
		c.Meta.Extra["tags"].([]any)[0] = "changed"
		c.Meta.Extra["origin"].(map[string]any)["tool"] = "changed"
		c.Meta.Extra["new"] = true
	}
	mutate(m)
	for i := 0; i < 2; i++ {
		r, err := s.Read(ctx, idA)
		if err != nil {
			t.Fatal(err)
		}
		if !equalMemory(r, want) {
			t.Fatalf("pass %d: Read = %+v\nwant %+v", i, r, want)
		}
		mutate(r)
		all, err := s.List(ctx)
		if err != nil || len(all) != 1 {
			t.Fatalf("List = %v, %v", all, err)
		}
		if !equalMemory(all[0], want) {
			t.Fatalf("pass %d: List = %+v", i, all[0])
		}
		mutate(all[0])
	}
}

func TestMemStoreBehavesLikeFileStore(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	r1, u1, r2 := memory(ScopeRepo, 2, "r1"), memory(ScopeUser, 1, "u1"), memory(ScopeRepo, 0, "r2")
	for _, m := range []*MemoryFile{r1, u1, r2} {
		if err := s.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.List(ctx)
	if err != nil || !slices.Equal(ids(all), []string{r2.Meta.ID, u1.Meta.ID, r1.Meta.ID}) {
		t.Errorf("List = %v, %v", ids(all), err)
	}
	repo, err := s.ListByScope(ctx, ScopeRepo)
	if err != nil || !slices.Equal(ids(repo), []string{r2.Meta.ID, r1.Meta.ID}) {
		t.Errorf("ListByScope(repo) = %v, %v", ids(repo), err)
	}
	dup := r1.Clone()
	dup.Meta.Scope = ScopeUser
	dup.Content = "impostor"
	if err := s.Write(ctx, dup); !errors.Is(err, ErrAlreadyExists) {
		t.Errorf("duplicate Write = %v, want ErrAlreadyExists", err)
	}
	if got, _ := s.Read(ctx, r1.Meta.ID); got == nil || got.Content != "r1" {
		t.Errorf("the original changed: %+v", got)
	}
	bad := sample("../x")
	if err := s.Write(ctx, bad); !errors.Is(err, ErrInvalidID) {
		t.Errorf("Write with a bad id = %v, want ErrInvalidID", err)
	}
	blank := sample(idA)
	blank.Content = ""
	if err := s.Write(ctx, blank); !errors.Is(err, ErrInvalidMemory) {
		t.Errorf("Write of blank content = %v, want ErrInvalidMemory", err)
	}
	if _, err := s.Read(ctx, "../x"); !errors.Is(err, ErrInvalidID) {
		t.Errorf("Read of a bad id = %v, want ErrInvalidID", err)
	}
	if _, err := s.Read(ctx, idA); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read of a missing id = %v, want ErrNotFound", err)
	}
	if _, err := s.ListByScope(ctx, "team"); !errors.Is(err, ErrUnknownScope) {
		t.Errorf("ListByScope(team) = %v, want ErrUnknownScope", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Write(cancelled, memory(ScopeRepo, 5, "x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Write = %v, want context.Canceled", err)
	}
	if _, err := s.Read(cancelled, r1.Meta.ID); !errors.Is(err, context.Canceled) {
		t.Errorf("Read = %v, want context.Canceled", err)
	}
	if _, err := s.List(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("List = %v, want context.Canceled", err)
	}
	if _, err := s.ListByScope(cancelled, ScopeUser); !errors.Is(err, context.Canceled) {
		t.Errorf("ListByScope = %v, want context.Canceled", err)
	}
	if all, _ := s.List(ctx); len(all) != 3 {
		t.Errorf("refused writes were stored: %v", ids(all))
	}
}
