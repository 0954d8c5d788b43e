package workspace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
)

// goInternals are what an error about a conversation line must not show:
// the words of encoding/json and time about Go's types and layouts.
var goInternals = regexp.MustCompile(`Go (value|struct)|json: |\*string|time\.Time|2006-01-02`)

// FuzzReadConversation checks that a conversation, whatever it holds, is
// read without a panic into messages of the four roles, which written back
// as JSON Lines read as the same; or refused with an error wrapping
// ErrBadConversation that names the line and says what is wrong without
// Go's words for it.
func FuzzReadConversation(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"a"}` + "\n\n" + `{"role":"assistant","content":"b","at":"2025-01-15T09:29:41+01:00"}`))
	f.Add([]byte("\xef\xbb\xbf{\"role\":\"system\",\"content\":\"s\"}\r\n{\"Role\":\"tool\",\"Content\":\"t\",\"at\":null}"))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{"role":"user","content":"x","at":"yesterday"}`))
	f.Add([]byte(`{"role":5,"content":["x"]} {}`))
	f.Add([]byte("  User: h\xffi"))
	f.Add([]byte(`{"role":"user","content":"a"}` + "\n" + `{"role":"user","content":"b"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := workspace.ReadConversation(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, workspace.ErrBadConversation) {
				t.Fatalf("error %v does not wrap ErrBadConversation", err)
			}
			if !strings.Contains(err.Error(), ": line ") {
				t.Fatalf("error %q names no line", err)
			}
			if m := goInternals.FindString(err.Error()); m != "" {
				t.Fatalf("error %q shows Go's %q", err, m)
			}
			return
		}
		var back bytes.Buffer
		for _, m := range msgs {
			if !slices.Contains([]memcore.Role{memcore.RoleUser, memcore.RoleAssistant, memcore.RoleSystem, memcore.RoleTool}, m.Role) {
				t.Fatalf("a message of role %q", m.Role)
			}
			line := map[string]string{"role": string(m.Role), "content": m.Content}
			if !m.At.IsZero() {
				line["at"] = m.At.Format(time.RFC3339Nano)
			}
			js, err := json.Marshal(line)
			if err != nil {
				t.Fatal(err)
			}
			back.Write(append(js, '\n'))
		}
		again, err := workspace.ReadConversation(&back)
		if err != nil {
			t.Fatalf("the messages written back do not read: %v\n%s", err, back.Bytes())
		}
		if len(again) != len(msgs) {
			t.Fatalf("read back %d messages, want %d", len(again), len(msgs))
		}
		for i := range msgs {
			if again[i].Role != msgs[i].Role || again[i].Content != msgs[i].Content || !again[i].At.Equal(msgs[i].At) {
				t.Fatalf("message %d read back as %+v, want %+v", i+1, again[i], msgs[i])
			}
		}
	})
}
