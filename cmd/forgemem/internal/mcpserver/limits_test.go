package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
)

// memory_remember takes at most workspace.MaxContentBytes of content,
// as the command does: more is an error result saying the limit and what
// to do, and nothing is written.
func TestRememberRefusesTooMuchContent(t *testing.T) {
	f := newFixture(t)
	text, isErr, _ := f.call("memory_remember", map[string]any{
		"content": strings.Repeat("a", workspace.MaxContentBytes+1), "scope": "user", "category": "patterns",
	})
	if !isErr {
		t.Fatalf("content over the limit was remembered: %.200s", text)
	}
	contains(t, "memory_remember", text, "memory_remember: invalid input: the text to remember is 65537 bytes, over the limit of 65536 bytes (64 KiB)",
		"remember the few statements worth keeping, each on its own")
	text, _ = f.ok("memory_list", map[string]any{})
	contains(t, "memory_list", text, "No memories")

	f.ok("memory_remember", map[string]any{"content": strings.Repeat("b", workspace.MaxContentBytes), "scope": "user", "category": "patterns"})
}

// memory_forget needs at least four hexadecimal digits of an id, even when
// a shorter prefix matches the only memory; memory_show takes any prefix.
func TestForgetRefusesShortPrefixes(t *testing.T) {
	f := newFixture(t)
	_, st := f.ok("memory_remember", map[string]any{"content": "Prefers tabs.", "scope": "user", "category": "coding-preferences"})
	id := st["memory"].(map[string]any)["id"].(string)
	for _, ref := range []string{"mem_", id[:len("mem_")+3], id[len("mem_") : len("mem_")+1]} {
		text, isErr, _ := f.call("memory_forget", map[string]any{"id": ref})
		if !isErr {
			t.Fatalf("memory_forget(%q) forgot the only memory: %s", ref, text)
		}
		contains(t, "memory_forget", text, "too short a prefix to forget a memory by: give at least 4 hexadecimal digits")
	}
	f.ok("memory_show", map[string]any{"id": id[:len("mem_")+1]})
	text, _ := f.ok("memory_forget", map[string]any{"id": id[:len("mem_")+4]})
	contains(t, "memory_forget", text, "Forgot "+id)
}
