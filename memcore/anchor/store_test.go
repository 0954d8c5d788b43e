package anchor

import (
	"context"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

func TestStoreRecordsAnchors(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	inner := memcore.NewMemStore()
	s := NewStore(inner, newChecker(t, root))
	ctx := context.Background()
	write := func(scope memcore.Scope, text string, proposed ...memcore.Anchor) *memcore.MemoryFile {
		t.Helper()
		m := &memcore.MemoryFile{Meta: memcore.MemoryMeta{ID: memcore.NewMemoryID(), CreatedAt: time.Now(), Version: 1,
			Scope: scope, Category: memcore.CategoryPatterns, Anchors: proposed}, Content: text}
		if err := s.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
		if len(m.Meta.Anchors) != len(proposed) {
			t.Errorf("Write changed the caller's memory: %+v", m.Meta.Anchors)
		}
		got, err := inner.Read(ctx, m.Meta.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	m := write(memcore.ScopeRepo, "Migrations live in db/migrations.",
		memcore.Anchor{Path: "internal/db/queries.go", Symbol: "GetOrder"}, memcore.Anchor{Path: "invented.go"})
	if got := anchorsText(m.Meta.Anchors); got != "internal/db/queries.go#GetOrder\ndb/migrations\n" {
		t.Errorf("repo memory's anchors:\n%s", got)
	}
	if m.Meta.Anchors[0].Blob == "" {
		t.Errorf("no blob recorded: %+v", m.Meta.Anchors[0])
	}
	u := write(memcore.ScopeUser, "Prefers db/migrations style.", memcore.Anchor{Path: "internal/db/queries.go"})
	if len(u.Meta.Anchors) != 0 {
		t.Errorf("user memory's anchors: %+v", u.Meta.Anchors)
	}
	if got := s.Stale(ctx, m); got != "" {
		t.Errorf("Stale = %q", got)
	}
	rm(t, root, "db")
	if got := s.Stale(ctx, m); got != "db/migrations no longer exists" {
		t.Errorf("Stale = %q", got)
	}
}
