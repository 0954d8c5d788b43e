package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callOut calls a tool that must succeed and returns its text and its
// structured content decoded into out.
func callOut(t *testing.T, session *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, clip(text, 500))
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, clip(string(data), 300), err)
	}
	if len(text) > maxResultBytes || len(data) > maxResultBytes {
		t.Errorf("%s(%v): a text of %d bytes, a structured content of %d; want each at most %d", name, args, len(text), len(data), maxResultBytes)
	}
	return text
}

// A list of 1.9 MB of memories comes in pages under 64 KiB, each saying
// which offset gives the next; paging through them gives every memory
// once, oldest first.
func TestListComesInPages(t *testing.T) {
	ws, dir := openWorkspace(t)
	writeMemories(t, dir, listMemories)
	server, _ := build(ws, Options{Version: "test"})
	session := connect(t, server)
	var ids []string
	offset, pages := 0, 0
	for {
		var out listOut
		text := callOut(t, session, "memory_list", map[string]any{"offset": offset}, &out)
		pages++
		if out.Total != listMemories || out.Offset != offset || out.LeftOut != listMemories-offset-len(out.Memories) {
			t.Fatalf("page %d: total %d, offset %d, %d memories, %d left out", pages, out.Total, out.Offset, len(out.Memories), out.LeftOut)
		}
		for _, m := range out.Memories {
			ids = append(ids, m.ID)
		}
		if out.LeftOut == 0 {
			if out.Note != "" || strings.Contains(text, "call memory_list with offset") {
				t.Errorf("the last page has a note on the next: %q", out.Note)
			}
			break
		}
		next := fmt.Sprintf("call memory_list with offset %d", out.NextOffset)
		if out.NextOffset != offset+len(out.Memories) || !strings.Contains(text, next) || !strings.Contains(out.Note, next) {
			t.Fatalf("page %d: next offset %d, note %q", pages, out.NextOffset, out.Note)
		}
		offset = out.NextOffset
	}
	if pages < 2 {
		t.Errorf("%d pages, want the list cut", pages)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	if len(ids) != listMemories || len(seen) != listMemories {
		t.Errorf("%d memories listed, %d different, want %d", len(ids), len(seen), listMemories)
	}
	var out listOut
	text := callOut(t, session, "memory_list", map[string]any{"offset": listMemories}, &out)
	if !strings.Contains(text, "past the end") || len(out.Memories) != 0 {
		t.Errorf("an offset past the end: %q", text)
	}
}

// A search of 100 memories of 3 KB keeps under 64 KiB, best first, and
// says how many it left out; a memory of 900 KB is cut to 4 KiB.
func TestSearchIsCapped(t *testing.T) {
	ws, dir := openWorkspace(t)
	writeMemories(t, dir, 150)
	huge := writeMemory(t, dir, "Friday deploy runbook\n\n"+strings.Repeat("Deploy on Friday only with a rollback plan. ", 20000), "")
	server, _ := build(ws, Options{Version: "test"})
	session := connect(t, server)

	var out searchOut
	text := callOut(t, session, "memory_search", map[string]any{"query": "we deploy on Fridays", "limit": 100}, &out)
	if len(out.Hits) == 0 || out.LeftOut == 0 || len(out.Hits)+out.LeftOut != 100 ||
		!strings.Contains(out.Note, "left out to keep this result under 64 KiB") || !strings.Contains(text, out.Note) {
		t.Errorf("%d hits, %d left out, note %q; want a cut result that says so", len(out.Hits), out.LeftOut, out.Note)
	}

	text = callOut(t, session, "memory_search", map[string]any{"query": "Friday deploy runbook rollback plan", "limit": 1}, &out)
	if len(out.Hits) != 1 || out.Hits[0].Memory.ID != huge || !out.Hits[0].Memory.ContentCut ||
		len(out.Hits[0].Memory.Content) > maxHitContentBytes || !strings.Contains(text, "memory_show gives a memory in full") {
		t.Errorf("the 900 KB memory found: %d hits, text of %d bytes: %q", len(out.Hits), len(text), clip(text, 300))
	}
}

// The 64 KiB cap of memory_list and memory_search holds in bytes for the
// text and for the structured content as JSON (callOut checks both),
// header and notes included, whatever makes the JSON larger than the text:
// a list of many short memories (an item's JSON is about twice its line),
// a search of hits whose content JSON escapes (quotes, newlines, <, & and
// >). What is left out is counted: shown and left out add up to the total.
func TestResultsFitInBytes(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		count   int
		content func(i int) string
	}{
		{"a list of 401 short memories", "memory_list", map[string]any{}, 401,
			func(i int) string {
				return fmt.Sprintf("Convention number %d: %s item%d", i, strings.Repeat("the quick brown fox jumps over lazy dog ", 5), i)
			}},
		{"a list of 3000 tiny memories", "memory_list", map[string]any{"scope": "repo"}, 3000,
			func(i int) string { return fmt.Sprintf("m%d", i) }},
		{"a search of 30 memories of 6 KB", "memory_search", map[string]any{"query": "deploy rollback quick", "limit": 100}, 30,
			func(i int) string {
				return fmt.Sprintf("Deploy rule %d\n\n", i) + strings.Repeat("deploy \"rollback\" <quick> & fox\n", 200)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, dir := openWorkspace(t)
			for i := range tt.count {
				writeMemory(t, dir, tt.content(i), "")
			}
			session := connect(t, func() *mcp.Server { s, _ := build(ws, Options{Version: "test"}); return s }())
			switch tt.tool {
			case "memory_list":
				var out listOut
				text := callOut(t, session, tt.tool, tt.args, &out)
				if out.Total != tt.count || out.LeftOut == 0 || len(out.Memories)+out.LeftOut != out.Total ||
					!strings.Contains(text, fmt.Sprintf("%d more not shown, to keep this result under 64 KiB: call memory_list with offset %d", out.LeftOut, len(out.Memories))) {
					t.Errorf("%d shown, %d left out of %d; note %q", len(out.Memories), out.LeftOut, out.Total, out.Note)
				}
			case "memory_search":
				var out searchOut
				text := callOut(t, session, tt.tool, tt.args, &out)
				if out.LeftOut == 0 || len(out.Hits)+out.LeftOut != tt.count ||
					!strings.Contains(text, fmt.Sprintf("%d more matches left out to keep this result under 64 KiB", out.LeftOut)) {
					t.Errorf("%d hits, %d left out of %d; note %q", len(out.Hits), out.LeftOut, tt.count, out.Note)
				}
			}
		})
	}
}

// A memory of 900 KB is shown cut to 32 KiB, with the file that holds it
// whole, and one whose JSON escapes (quotes, newlines, <, & and >) is cut
// further; a chain of 1,000 versions shows its newest ones and counts the
// others. Each result is at most 64 KiB of text and of structured content
// (callOut checks both): the chain used to give 76,911 bytes of JSON.
func TestShowIsCapped(t *testing.T) {
	ws, dir := openWorkspace(t)
	huge := writeMemory(t, dir, strings.Repeat("A very long memory. ", 45000), "")
	escaped := writeMemory(t, dir, strings.Repeat("\"<&>\n", 20000), "")
	var head string
	for i := range 1000 {
		head = writeMemory(t, dir, fmt.Sprintf("Version %d of a memory that changed a thousand times, each time a little: %s", i+1, strings.Repeat("more text ", 20)), head)
	}
	server, _ := build(ws, Options{Version: "test"})
	session := connect(t, server)

	var out showOut
	callOut(t, session, "memory_show", map[string]any{"id": huge}, &out)
	if !out.Memory.ContentCut || len(out.Memory.Content) != maxShowContentBytes ||
		!strings.Contains(out.Note, "the first 32 KiB are shown") || !strings.Contains(out.Note, filepath.Join(dir, huge+".md")) {
		t.Errorf("show of 900 KB: cut %v, %d bytes shown, note %q", out.Memory.ContentCut, len(out.Memory.Content), out.Note)
	}

	out = showOut{}
	callOut(t, session, "memory_show", map[string]any{"id": escaped}, &out)
	data, _ := json.Marshal(out.Memory.Content)
	if !out.Memory.ContentCut || len(data)-2 > maxShowContentBytes || len(out.Memory.Content) < maxShowContentBytes/8 ||
		!strings.Contains(out.Note, fmt.Sprintf("the first %d bytes are shown", len(out.Memory.Content))) {
		t.Errorf("show of 100 KB that JSON escapes: cut %v, %d bytes shown, %d as JSON, note %q", out.Memory.ContentCut, len(out.Memory.Content), len(data), out.Note)
	}

	out = showOut{}
	text := callOut(t, session, "memory_show", map[string]any{"id": head}, &out)
	if out.LeftOut == 0 || out.VersionsLeftOut != out.LeftOut || out.LinksLeftOut != 0 || len(out.Chain)+out.LeftOut != 1000 ||
		out.Chain[len(out.Chain)-1].ID != head || !strings.Contains(text, fmt.Sprintf("(%d older versions left out)", out.LeftOut)) {
		t.Errorf("show of a chain of 1000: %d versions shown, %d left out (%d versions, %d links)", len(out.Chain), out.LeftOut, out.VersionsLeftOut, out.LinksLeftOut)
	}
	note := fmt.Sprintf("%d older versions were left out to keep this result under 64 KiB; forgemem show %s in a terminal shows them all.", out.LeftOut, head)
	if out.Note != note || !strings.Contains(text, note) {
		t.Errorf("show of a chain of 1000: note %q, want %q", out.Note, note)
	}
}

// writeMemory writes one memory with content into dir, a new version of
// supersedes when it is set, and returns its id.
func writeMemory(t *testing.T, dir, content, supersedes string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	version := 1
	if supersedes != "" {
		data, err := os.ReadFile(filepath.Join(dir, supersedes+".md"))
		if err != nil {
			t.Fatal(err)
		}
		prev, err := memcore.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		version = prev.Meta.Version + 1
	}
	m := &memcore.MemoryFile{Meta: memcore.MemoryMeta{ID: memcore.NewMemoryID(), CreatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(version) * time.Minute),
		Version: version, Scope: memcore.ScopeRepo, Category: memcore.CategoryPatterns, Trigger: memcore.TriggerManual},
		Content: content}
	if supersedes != "" {
		m.Meta.Supersedes = &supersedes
	}
	data, err := memcore.Serialize(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, m.Meta.ID+".md"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return m.Meta.ID
}

// whyForgotten says why a memory was forgotten in a sentence of its own,
// whatever the reason holds: parentheses of its own, a final period, line
// breaks; nothing for no reason.
func TestWhyForgotten(t *testing.T) {
	tests := []struct {
		reason, want string
	}{
		{"we moved to an event log", "Why it was forgotten: we moved to an event log."},
		{"wrong (see ADR 12 (superseded))", "Why it was forgotten: wrong (see ADR 12 (superseded))."},
		{"  no longer true.\n", "Why it was forgotten: no longer true."},
		{"no longer\ntrue", "Why it was forgotten: no longer\ntrue."},
		{"  ", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := whyForgotten(tt.reason); got != tt.want {
			t.Errorf("whyForgotten(%q) = %q, want %q", tt.reason, got, tt.want)
		}
	}
}
