package anchor

import (
	"context"
	"testing"
)

func TestReplaceWord(t *testing.T) {
	tests := []struct{ text, old, new, want string }{
		{"see internal/db/queries.go.", "internal/db/queries.go", "internal/store/q.go", "see internal/store/q.go."},
		{"`internal/db/queries.go` and internal/db/queries.go_test", "internal/db/queries.go", "x.go", "`x.go` and internal/db/queries.go_test"},
		{"a/internal/db/queries.go", "internal/db/queries.go", "x.go", "a/internal/db/queries.go"},
		{"queries.go.bak and queries.go, queries.go", "queries.go", "orders.go", "queries.go.bak and orders.go, orders.go"},
	}
	for _, tt := range tests {
		if got, _ := replaceWord(tt.text, tt.old, tt.new); got != tt.want {
			t.Errorf("replaceWord(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestFixAppliesRenames(t *testing.T) {
	root, git := gitShop(t)
	c, err := New(DefaultConfig(root))
	if err != nil {
		t.Fatal(err)
	}
	text := "Call `GetOrder` from internal/db/queries.go (queries.go holds all SQL); migrations live in db/migrations."
	rec := c.Anchors(context.Background(), text, nil, nil).Anchors
	git("mv", "internal/db/queries.go", "internal/db/sql.go")
	git("mv", "db/migrations", "db/schema")
	r := c.Check(context.Background(), rec)
	fix, ok := c.Fix(context.Background(), text, r)
	if !ok {
		t.Fatalf("no fix for %s", r.Reason())
	}
	want := "Call `GetOrder` from internal/db/sql.go (sql.go holds all SQL); migrations live in db/schema."
	if fix.Content != want {
		t.Errorf("content %q, want %q", fix.Content, want)
	}
	if got := c.Check(context.Background(), fix.Anchors); got.Stale() || len(got.Findings) != 3 {
		t.Errorf("the fixed memory's anchors %s: %s", anchorsText(fix.Anchors), got.Reason())
	}
	// Nothing renamed, nothing to fix.
	if _, ok := c.Fix(context.Background(), want, c.Check(context.Background(), fix.Anchors)); ok {
		t.Error("a fix of a memory with no rename")
	}
}
