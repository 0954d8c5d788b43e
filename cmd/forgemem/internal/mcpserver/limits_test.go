package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/google/jsonschema-go/jsonschema"
)

// memory_remember takes a content of at most workspace.MaxContentRunes
// characters (Unicode code points), as the command does, and its input
// schema says so (maxLength): a client that checks the arguments against
// the schema and the server agree on every content, however many bytes
// its characters take. More is an error result saying the limit and what
// to do, and nothing is written.
func TestRememberRefusesTooMuchContent(t *testing.T) {
	tests := []struct {
		name    string
		content string
		// want is what the error says; nil for a content remembered.
		want []string
	}{
		{"at the limit", strings.Repeat("a", workspace.MaxContentRunes), nil},
		{"at the limit in 2-byte characters", strings.Repeat("é", workspace.MaxContentRunes), nil},
		{"at the limit in 4-byte characters", strings.Repeat("𝄞", workspace.MaxContentRunes), nil},
		{"one character over", strings.Repeat("a", workspace.MaxContentRunes+1),
			[]string{"memory_remember: invalid arguments: content is 65537 characters long, want at most 65536: a memory is one short statement",
				"remember the few statements worth keeping, each on its own, and leave the rest in a file of the repository",
				"content (string of at most 65536 characters, required)"}},
		{"one 4-byte character over", strings.Repeat("𝄞", workspace.MaxContentRunes+1),
			[]string{"content is 65537 characters long, want at most 65536: a memory is one short statement"}},
		{"over by spaces around it", " " + strings.Repeat("b", workspace.MaxContentRunes) + " ",
			[]string{"content is 65538 characters long, want at most 65536"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			args := map[string]any{"content": tt.content, "scope": "user", "category": "patterns"}
			schemaErr := f.inputSchema("memory_remember").Validate(args)
			text, isErr, _ := f.call("memory_remember", args)
			if isErr != (schemaErr != nil) {
				t.Errorf("the server's error %t, the schema's %v: they disagree\n%.300s", isErr, schemaErr, text)
			}
			if isErr != (tt.want != nil) {
				t.Fatalf("error %t, want %t: %.300s", isErr, tt.want != nil, text)
			}
			contains(t, "memory_remember", text, tt.want...)
			ms, err := f.other.List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case isErr && len(ms) != 0:
				t.Errorf("%d memories written", len(ms))
			case !isErr && (len(ms) != 1 || utf8.RuneCountInString(ms[0].Content) != workspace.MaxContentRunes):
				t.Errorf("%d memories read back, want 1 of %d characters", len(ms), workspace.MaxContentRunes)
			}
		})
	}
}

// memory_forget takes a reason of at most workspace.MaxReasonRunes
// characters, as the command does (forget --reason, review --reject
// --reason), and its input schema says so: the schema and the server
// agree on every reason. More is an error result saying the limit, and
// nothing is written.
func TestForgetRefusesTooLongAReason(t *testing.T) {
	tests := []struct {
		name   string
		reason string
		// want is what the error says; nil for a reason taken.
		want []string
	}{
		{"at the limit", strings.Repeat("a", workspace.MaxReasonRunes), nil},
		{"at the limit in 4-byte characters", strings.Repeat("𝄞", workspace.MaxReasonRunes), nil},
		{"one character over", strings.Repeat("a", workspace.MaxReasonRunes+1),
			[]string{"memory_forget: invalid arguments: reason is 1001 characters long, want at most 1000: say why in a sentence",
				"reason (string of at most 1000 characters, optional)"}},
		{"one 4-byte character over", strings.Repeat("𝄞", workspace.MaxReasonRunes+1),
			[]string{"reason is 1001 characters long, want at most 1000"}},
		{"what memory_remember takes", strings.Repeat("a", workspace.MaxContentRunes),
			[]string{"reason is 65536 characters long, want at most 1000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			_, st := f.ok("memory_remember", map[string]any{"content": "Prefers spaces.", "scope": "user", "category": "patterns"})
			args := map[string]any{"id": st["memory"].(map[string]any)["id"], "reason": tt.reason}
			schemaErr := f.inputSchema("memory_forget").Validate(args)
			text, isErr, _ := f.call("memory_forget", args)
			if isErr != (schemaErr != nil) {
				t.Errorf("the server's error %t, the schema's %v: they disagree\n%.300s", isErr, schemaErr, text)
			}
			if isErr != (tt.want != nil) {
				t.Fatalf("error %t, want %t: %.300s", isErr, tt.want != nil, text)
			}
			contains(t, "memory_forget", text, tt.want...)
			ms, err := f.other.List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case isErr && len(ms) != 1:
				t.Errorf("%d versions written", len(ms)-1)
			case !isErr && (len(ms) != 2 || ms[0].Meta.RetiredReason+ms[1].Meta.RetiredReason != tt.reason):
				t.Errorf("%d versions read back, want 2, one retired with the reason given", len(ms))
			}
		})
	}
}

// inputSchema is the input schema the server gives a client for the tool
// name, resolved to check arguments against.
func (f *fixture) inputSchema(name string) *jsonschema.Resolved {
	f.t.Helper()
	res, err := f.session.ListTools(context.Background(), nil)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name != name {
			continue
		}
		data, err := json.Marshal(tl.InputSchema)
		if err != nil {
			f.t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(data, &s); err != nil {
			f.t.Fatal(err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			f.t.Fatal(err)
		}
		return r
	}
	f.t.Fatalf("no tool %s", name)
	return nil
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

// memory_remember writes a memory too large for the injection token budget
// in force (memory.injection_token_budget), and its result tells the agent
// that it is never recalled into a prompt, and what to do; a memory that
// fits, with the budget in force, gets no such note.
func TestRememberNotesAMemoryOverTheInjectionBudget(t *testing.T) {
	tests := []struct {
		name  string
		env   []string
		runes int
		// want is what the note says; nil for no note.
		want []string
	}{
		{"under the default budget", nil, 3924, nil},
		{"over the default budget", nil, 7846, []string{
			"It is never recalled into a prompt with the injection token budget in force",
			"over memory.injection_token_budget (2000)",
			"supersede it with a shorter text and remember the rest as separate memories, or ask the user to raise memory.injection_token_budget"}},
		{"over the default budget, under a raised one", []string{"FORGEMEM_INJECTION_TOKEN_BUDGET=4000"}, 7846, nil},
		{"under the default budget, over a lowered one", []string{"FORGEMEM_INJECTION_TOKEN_BUDGET=500"}, 3924,
			[]string{"over memory.injection_token_budget (500)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixtureEnv(t, append([]string{"FORGEMEM_REVIEW=off"}, tt.env...)...)
			text, isErr, _ := f.call("memory_remember", map[string]any{"content": strings.Repeat("a", tt.runes), "scope": "user", "category": "patterns"})
			if isErr {
				t.Fatalf("error: %.300s", text)
			}
			if noted := strings.Contains(text, "never recalled"); noted != (tt.want != nil) {
				t.Fatalf("result %.300q, want the note %t", text, tt.want != nil)
			}
			contains(t, "memory_remember", text, tt.want...)
		})
	}
}

// memory_remember and memory_forget refuse text holding a control
// character other than tab and line breaks — a NUL makes git take the
// memory file for binary — or a bidirectional formatting or invisible
// character, with a tool error naming the character and where it is, and
// write nothing; line breaks are written "\n", and emoji joined by U+200D
// are text. Anchors holding a control character are not valid, and not
// recorded.
func TestControlCharactersAreRefused(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args map[string]any
		// want is what the result says; isErr whether it is an error.
		want  string
		isErr bool
		// content is what the memory folders hold after it, a version
		// each, in any order, a retired one with its reason.
		content []string
	}{
		{"a NUL in the content", "memory_remember", map[string]any{"content": "Prefers tabs in \x00Go.", "scope": "user", "category": "patterns"},
			"memory_remember: invalid input: the text to remember holds a control character U+0000 at character 17; remove it", true, []string{"Prefers spaces."}},
		{"an escape sequence in the content", "memory_remember", map[string]any{"content": "\x1b]0;title\x07Prefers tabs.", "scope": "user", "category": "patterns"},
			"the text to remember holds a control character U+001B at character 1; remove it", true, []string{"Prefers spaces."}},
		{"a C1 character in the content", "memory_remember", map[string]any{"content": "Prefers\u009btabs.", "scope": "user", "category": "patterns"},
			"the text to remember holds a control character U+009B at character 8; remove it", true, []string{"Prefers spaces."}},
		{"a right-to-left override in the content", "memory_remember", map[string]any{"content": "Admins are \u202eenon\u202c.", "scope": "user", "category": "patterns"},
			"memory_remember: invalid input: the text to remember holds a bidirectional formatting character U+202E at character 12; remove it", true, []string{"Prefers spaces."}},
		{"emoji joined by U+200D in the content", "memory_remember", map[string]any{"content": "The team 👨\u200d👩\u200d👧 ships.", "scope": "user", "category": "patterns"},
			"Remembered as mem_", false, []string{"Prefers spaces.", "The team 👨\u200d👩\u200d👧 ships."}},
		{"CRLF in the content", "memory_remember", map[string]any{"content": "Prefers tabs.\r\n\tIn Go too.", "scope": "user", "category": "patterns"},
			"Remembered as mem_", false, []string{"Prefers spaces.", "Prefers tabs.\n\tIn Go too."}},
		{"control characters in anchors", "memory_remember", map[string]any{"content": "Orders are read in one query.", "scope": "repo", "category": "patterns",
			"anchors": []map[string]any{{"path": "internal/\x00db.go"}, {"symbol": "Get\x1bOrder"}}},
			"2 anchors are not valid (a path relative to the repository root, without .., or a symbol), so not recorded.", false,
			[]string{"Prefers spaces.", "Orders are read in one query."}},
		{"a NUL in a forget's reason", "memory_forget", map[string]any{"reason": "no\x00longer true"},
			"memory_forget: invalid input: the reason holds a control character U+0000 at character 3; remove it", true, []string{"Prefers spaces."}},
		{"a zero-width space in a forget's reason", "memory_forget", map[string]any{"reason": "no\u200blonger true"},
			"memory_forget: invalid input: the reason holds an invisible character U+200B at character 3; remove it", true, []string{"Prefers spaces."}},
		{"CRLF in a forget's reason", "memory_forget", map[string]any{"reason": "no longer\r\ntrue"},
			"Forgot mem_", false, []string{"Prefers spaces.", "Prefers spaces. (forgotten: no longer\ntrue)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			_, st := f.ok("memory_remember", map[string]any{"content": "Prefers spaces.", "scope": "user", "category": "patterns"})
			if tt.tool == "memory_forget" {
				tt.args["id"] = st["memory"].(map[string]any)["id"]
			}
			text, isErr, _ := f.call(tt.tool, tt.args)
			if isErr != tt.isErr {
				t.Fatalf("error %t, want %t: %s", isErr, tt.isErr, text)
			}
			contains(t, tt.tool, text, tt.want)
			ms, err := f.other.List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ms {
				c := m.Content
				if m.Meta.Retired {
					c += " (forgotten: " + m.Meta.RetiredReason + ")"
				}
				if len(m.Meta.Anchors) > 0 {
					c += fmt.Sprintf(" %v", m.Meta.Anchors)
				}
				got = append(got, c)
			}
			slices.Sort(got)
			if want := slices.Sorted(slices.Values(tt.content)); !slices.Equal(got, want) {
				t.Errorf("the folders hold %q, want %q", got, want)
			}
		})
	}
}
