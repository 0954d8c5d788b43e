package mcpserver_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// memory_remember records anchors (an agent's only when the repository
// has them); once the code goes, memory_show, memory_search and
// memory_recall say the memory may be outdated.
func TestOutdatedMemoriesAreLabelled(t *testing.T) {
	f := newFixture(t)
	root := filepath.Dir(filepath.Dir(f.other.Dir("repo")))
	file := filepath.Join(root, "internal", "db", "queries.go")
	if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("package db\n\nfunc GetOrder() {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text, _ := f.ok("memory_remember", map[string]any{
		"content": "Orders are read with GetOrder in internal/db/queries.go.", "scope": "repo", "category": "patterns",
		"anchors": []map[string]any{{"path": "internal/db/queries.go", "symbol": "GetOrder"}, {"path": "internal/db/invented.go"}},
	})
	contains(t, "memory_remember", text, "1 anchor is not in the repository, so not recorded.")
	id := regexp.MustCompile(`mem_[0-9a-f-]{36}`).FindString(text)

	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	const reason = "internal/db/queries.go no longer exists"
	show, _ := f.ok("memory_show", map[string]any{"id": id})
	contains(t, "memory_show", show, "Status: current, but may be outdated: "+reason+".")
	search, _ := f.ok("memory_search", map[string]any{"query": "GetOrder orders"})
	contains(t, "memory_search", search, "May be outdated: "+reason+".")
	recall, _ := f.ok("memory_recall", map[string]any{"query": "how are orders read with GetOrder"})
	contains(t, "memory_recall", recall, "May be outdated: "+reason+".")
}

// memory_remember tells the anchors it refuses as not valid (a path
// outside the repository, absolute, or neither a path nor a symbol) from
// those that are valid but not in the repository: both used to be "not in
// the repository".
func TestRememberTellsInvalidAnchorsFromMissingOnes(t *testing.T) {
	f := newFixture(t)
	text, st := f.ok("memory_remember", map[string]any{
		"content": "Orders are read in one query.", "scope": "repo", "category": "patterns",
		"anchors": []map[string]any{{"path": "../etc/passwd"}, {"path": "/abs"}, {"symbol": ""}, {"path": "internal/db/invented.go"}},
	})
	contains(t, "memory_remember", text,
		"3 anchors are not valid (a path relative to the repository root, without .., or a symbol), so not recorded.",
		"1 anchor is not in the repository, so not recorded.")
	if st["invalid_anchors"] != 3.0 || st["dropped_anchors"] != 1.0 {
		t.Errorf("invalid_anchors %v, dropped_anchors %v; want 3 and 1", st["invalid_anchors"], st["dropped_anchors"])
	}
}
