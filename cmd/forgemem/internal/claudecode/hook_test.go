package claudecode_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
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
	for _, in := range []string{"", "not json", "[]", `{"session_id":"x"}`, `{"hook_event_name":`, `"Stop"`} {
		if _, err := claudecode.ReadHookInput(strings.NewReader(in)); !errors.Is(err, claudecode.ErrHookInput) {
			t.Errorf("ReadHookInput(%q) = %v, want ErrHookInput", in, err)
		}
	}
}

// The UserPromptSubmit output has exactly the keys Claude Code accepts.
func TestWritePromptContext(t *testing.T) {
	var b bytes.Buffer
	if err := claudecode.WritePromptContext(&b, "<recalled_memories>\n& \"quoted\"\n</recalled_memories>"); err != nil {
		t.Fatal(err)
	}
	want := `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"<recalled_memories>\n& \"quoted\"\n</recalled_memories>"}}` + "\n"
	if b.String() != want {
		t.Errorf("output\n%s\nwant\n%s", b.String(), want)
	}
}
