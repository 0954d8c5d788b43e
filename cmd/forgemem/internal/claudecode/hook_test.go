package claudecode_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
	"github.com/forgemem/forgemem/memcore"
)

// The recorded payloads of the three events, with a field of a later
// version of Claude Code added: unknown fields are ignored.
func TestReadHookInputOfRecordedPayloads(t *testing.T) {
	tests := []struct {
		file string
		want claudecode.HookInput
	}{
		{"user_prompt_submit.json", claudecode.HookInput{HookEventName: claudecode.EventUserPromptSubmit, PermissionMode: "default",
			Prompt: "Add a lookup by email to package store, with tests."}},
		{"stop.json", claudecode.HookInput{HookEventName: claudecode.EventStop, PermissionMode: "acceptEdits",
			LastAssistantMessage: "Done: package store wraps errors with %w now, and the callers use errors.Is."}},
		{"pre_compact.json", claudecode.HookInput{HookEventName: claudecode.EventPreCompact, PermissionMode: "default", Trigger: "auto"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "hooks", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]any
			if err := json.Unmarshal(data, &obj); err != nil {
				t.Fatal(err)
			}
			obj["agent_id"], obj["future_field"] = "a1", map[string]any{"nested": []any{1, 2}}
			data, _ = json.Marshal(obj)
			got, err := claudecode.ReadHookInput(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.SessionID = "3f2a9c1e-7b4d-4c2a-9e8f-1a2b3c4d5e6f"
			want.TranscriptPath = "/home/dev/.claude/projects/-home-dev-shop/3f2a9c1e-7b4d-4c2a-9e8f-1a2b3c4d5e6f.jsonl"
			want.CWD = "/home/dev/shop"
			if *got != want {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestReadHookInputRefusesWhatIsNotAHookInput(t *testing.T) {
	// Each error says what is wrong in the input's terms, never Go's.
	for _, tt := range []struct{ in, want string }{
		{"", "nothing on standard input; want the hook event's JSON object"},
		{" \n", "nothing on standard input"},
		{"not json", "not valid JSON (at byte 2); want the hook event's JSON object"},
		{"[]", "want the hook event's JSON object, got an array"},
		{`"Stop"`, "want the hook event's JSON object, got a string"},
		{`{"session_id":"x"}`, "no hook_event_name"},
		{`{"hook_event_name":`, "not valid JSON"},
		{`{"hook_event_name":"UserPromptSubmit","prompt":42}`, "prompt: want a string, got a number"},
		{`{"hook_event_name":"Stop","session_id":{"a":1}}`, "session_id: want a string, got an object"},
	} {
		_, err := claudecode.ReadHookInput(strings.NewReader(tt.in))
		if !errors.Is(err, claudecode.ErrHookInput) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadHookInput(%q) = %v, want ErrHookInput saying %q", tt.in, err, tt.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "json:") || strings.Contains(err.Error(), "HookInput")) {
			t.Errorf("ReadHookInput(%q) = %v: Go's words", tt.in, err)
		}
	}
}

// The UserPromptSubmit output has exactly the keys Claude Code accepts:
// the prompt's context, a warning to the user (systemMessage), both, or
// nothing at all.
func TestWritePromptContext(t *testing.T) {
	var b bytes.Buffer
	if err := claudecode.WritePromptContext(&b, "<recalled_memories>\n& \"quoted\"\n</recalled_memories>"); err != nil {
		t.Fatal(err)
	}
	want := `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"<recalled_memories>\n& \"quoted\"\n</recalled_memories>"}}` + "\n"
	if b.String() != want {
		t.Errorf("output\n%s\nwant\n%s", b.String(), want)
	}
	for _, tt := range []struct{ text, warning, want string }{
		{"<recalled_memories/>", "run `forgemem validate` <now>",
			`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"<recalled_memories/>"},"systemMessage":"run ` + "`forgemem validate`" + ` <now>"}` + "\n"},
		{"", "a warning", `{"systemMessage":"a warning"}` + "\n"},
		{"", "", ""},
	} {
		var b bytes.Buffer
		if err := claudecode.WritePromptOutput(&b, tt.text, tt.warning); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("WritePromptOutput(%q, %q) wrote\n%s\nwant\n%s", tt.text, tt.warning, b.String(), tt.want)
		}
	}
}

// Claude Code runs the Stop hooks before it writes the reply's line: the
// reply comes from the payload when the transcript lacks it, and nothing
// the transcript holds is replaced.
func TestWithLastReply(t *testing.T) {
	u := func(s string) memcore.Message { return memcore.Message{Role: memcore.RoleUser, Content: s} }
	a := func(s string) memcore.Message { return memcore.Message{Role: memcore.RoleAssistant, Content: s} }
	const reply = "Right: optimistic locking with a version column, retried on conflict."
	tests := []struct {
		name   string
		window []memcore.Message
		reply  string
		want   []memcore.Message
	}{
		{"the transcript lacks the reply", []memcore.Message{u("How should user updates lock rows?")}, reply,
			[]memcore.Message{u("How should user updates lock rows?"), a(reply)}},
		{"a correction keeps the answer it corrects",
			[]memcore.Message{u("How should user updates lock rows?"), a("Use pessimistic locking: SELECT … FOR UPDATE."), u("no, use optimistic locking")}, reply,
			[]memcore.Message{u("How should user updates lock rows?"), a("Use pessimistic locking: SELECT … FOR UPDATE."), u("no, use optimistic locking"), a(reply)}},
		{"the transcript has an earlier text of the turn only", []memcore.Message{u("Fix the test."), a("I'll read the test first.")}, "Fixed: the test waits on a channel now.",
			[]memcore.Message{u("Fix the test."), a("I'll read the test first.\n\nFixed: the test waits on a channel now.")}},
		{"the transcript has the reply", []memcore.Message{u("Fix the test."), a("I'll read it.\n\nFixed: the test\nwaits on a channel now.")}, "Fixed: the test waits on a channel now.",
			[]memcore.Message{u("Fix the test."), a("I'll read it.\n\nFixed: the test\nwaits on a channel now.")}},
		{"no reply in the payload", []memcore.Message{u("Fix the test.")}, "  ", []memcore.Message{u("Fix the test.")}},
		{"nothing of the user's", nil, reply, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprint(tt.window)
			got := claudecode.WithLastReply(tt.window, tt.reply)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("window = %q\nwant     %q", got, tt.want)
			}
			if fmt.Sprint(tt.window) != before {
				t.Errorf("the window given changed: %q", tt.window)
			}
		})
	}
}

// FuzzReadHookInput checks that any hook input is read without a panic
// into an event with a name, or refused with an error wrapping
// ErrHookInput.
func FuzzReadHookInput(f *testing.F) {
	for _, name := range []string{"user_prompt_submit.json", "stop.json", "pre_compact.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "hooks", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"hook_event_name": "Stop", "stop_hook_active": "yes"}`))
	f.Add([]byte(`{"hook_event_name": "", "prompt": "x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := claudecode.ReadHookInput(bytes.NewReader(data))
		switch {
		case err != nil && !errors.Is(err, claudecode.ErrHookInput):
			t.Fatalf("error %v does not wrap ErrHookInput", err)
		case err == nil && in.HookEventName == "":
			t.Fatalf("read %+v, an event without a name", *in)
		}
	})
}
