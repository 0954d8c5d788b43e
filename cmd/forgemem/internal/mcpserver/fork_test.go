package mcpserver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// forkMemory is the n-th memory of a forked chain, created on day n.
func forkMemory(n int, content string, pred string) *memcore.MemoryFile {
	m := &memcore.MemoryFile{Meta: memcore.MemoryMeta{
		ID: fmt.Sprintf("mem_%08d-0000-4000-8000-%012d", n, n), CreatedAt: time.Date(2025, 3, n, 0, 0, 0, 0, time.UTC),
		Version: 1, Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions,
	}, Content: content}
	if pred != "" {
		m.Meta.Supersedes, m.Meta.Version = &pred, 2
	}
	return m
}

// memory_show of a forked chain — two versions supersede one, as a git
// merge of two branches that each changed the memory leaves them — shows
// the change not in force, marked, in the history of each version, and
// says of that change itself that it is a parallel one, not an earlier
// version.
func TestShowOfAForkedChain(t *testing.T) {
	f := newFixture(t)
	root := forkMemory(1, "Migrations are numbered sequentially.", "")
	lost := forkMemory(2, "Migrations are named by timestamp.", root.Meta.ID)
	head := forkMemory(3, "Migrations are made by goose create.", root.Meta.ID)
	for _, m := range []*memcore.MemoryFile{root, lost, head} {
		// Written by hand: a store writes one successor of a version, and
		// the merge brings the other branch's.
		data, err := memcore.Serialize(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.other.Dir(memcore.ScopeRepo), m.Meta.ID+".md"), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		id         string
		wantStatus string
		wantText   []string
	}{
		{lost.Meta.ID, "parallel change", []string{
			"version 2, created",
			"Status: a parallel change that is not in force: another change of the same version, " + head.Meta.ID + ", is current",
			"- version 2, " + lost.Meta.ID + ", 2025-03-02 (this one) (a parallel change, not in force): Migrations are named by timestamp.",
		}},
		{head.Meta.ID, "current", []string{
			"version 2 of 2, created",
			"Forked: " + lost.Meta.ID + " changed it in parallel",
			"- version 2, " + lost.Meta.ID + ", 2025-03-02 (a parallel change, not in force): Migrations are named by timestamp.",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.wantStatus, func(t *testing.T) {
			text, st := f.ok("memory_show", map[string]any{"id": tt.id})
			contains(t, "memory_show", text, tt.wantText...)
			if st["status"] != tt.wantStatus {
				t.Errorf("status %v, want %q", st["status"], tt.wantStatus)
			}
			chain, _ := st["chain"].([]any)
			var parallel []string
			for _, v := range chain {
				if v := v.(map[string]any); v["parallel"] == true {
					parallel = append(parallel, v["id"].(string))
				}
			}
			if len(chain) != 3 || strings.Join(parallel, ",") != lost.Meta.ID {
				t.Errorf("chain %v: want its 3 versions, %s the only parallel one", chain, lost.Meta.ID)
			}
		})
	}
}
