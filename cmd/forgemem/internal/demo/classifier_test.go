package demo

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
)

// classify asks the scripted classifier about a prompt, as the pipeline
// does, and returns the memories of its reply.
func classify(t *testing.T, prompt string) []replyItem {
	t.Helper()
	resp, err := newClassifier(script).reply(context.Background(), memcore.CompletionRequest{
		Messages:       []memcore.Message{{Role: memcore.RoleUser, Content: prompt}},
		ResponseSchema: &memcore.Schema{Name: memcapture.ClassifierSchemaName},
	})
	if err != nil {
		t.Fatal(err)
	}
	var reply struct {
		Memories []replyItem `json:"memories"`
	}
	if err := json.Unmarshal([]byte(resp.Text), &reply); err != nil {
		t.Fatalf("reply %q: %v", resp.Text, err)
	}
	if reply.Memories == nil {
		t.Fatalf("reply %q has no memories list", resp.Text)
	}
	return reply.Memories
}

// The headings of the classifier's prompt, laid out as memcapture does:
// the existing memories, the conversation, the memories added since the
// first list was made, the closing line.
const (
	existingList = "EXISTING MEMORIES (most relevant first; with MEMORIES ADDED SINCE, the only ids you may use):\n"
	conversation = "CONVERSATION (oldest first):\n"
	addedSince   = "\nMEMORIES ADDED SINCE (written after the list above; newest first):\n"
	closing      = "\nReply with the JSON object."
)

func TestClassifierKeepsWhatTheConversationSays(t *testing.T) {
	s3 := script[2].turns[1]
	turn := "\nUser: " + s3.user + "\n\nAssistant: " + s3.assistant + "\n"
	locking := "- [mem_00000000-0000-4000-8000-000000000002] (repo/architectural-decisions) User updates use optimistic locking: a version column.\n"
	migrations := "- [mem_00000000-0000-4000-8000-000000000001] (repo/project-conventions) Database migrations live in db/migrations.\n"
	for name, prompt := range map[string]string{
		"listed before the conversation": existingList + migrations + locking + "\n" + conversation + turn + closing,
		"added since":                    existingList + migrations + "\n" + conversation + turn + addedSince + locking + closing,
	} {
		got := classify(t, prompt)
		if len(got) != 1 {
			t.Fatalf("%s: %d memories, want 1: %+v", name, len(got), got)
		}
		m := got[0]
		if m.Supersedes != "mem_00000000-0000-4000-8000-000000000002" || m.Scope != "repo" ||
			m.Category != "architectural-decisions" || m.Content != s3.remember[0].content || m.Related == nil {
			t.Errorf("%s: got %+v, want session 3's decision superseding the listed one", name, m)
		}
	}
}

func TestClassifierKeepsNothingTwice(t *testing.T) {
	s1 := script[0].turns[0]
	turn := "\nUser: " + s1.user + "\n"
	if got := classify(t, conversation+turn+closing); len(got) != 1 || got[0].Supersedes != "" {
		t.Fatalf("first time: %+v, want one new memory", got)
	}
	line := "- [mem_00000000-0000-4000-8000-000000000001] (user/coding-preferences) " + firstLine(s1.remember[0].content) + "\n"
	for name, prompt := range map[string]string{
		"listed before the conversation": existingList + line + "\n" + conversation + turn + closing,
		"added since":                    conversation + turn + addedSince + line + closing,
	} {
		if got := classify(t, prompt); len(got) != 0 {
			t.Errorf("with the memory %s: %+v, want none", name, got)
		}
	}
	if got := classify(t, conversation+"\nUser: hello\n"+closing); len(got) != 0 {
		t.Errorf("small talk: %+v, want none", got)
	}
}

func TestClassifierAnswersOnlyClassifierCalls(t *testing.T) {
	_, err := newClassifier(script).reply(context.Background(), memcore.CompletionRequest{
		Messages:       []memcore.Message{{Role: memcore.RoleUser, Content: "hi"}},
		ResponseSchema: &memcore.Schema{Name: "memory_hypotheses"},
	})
	if !errors.Is(err, memcore.ErrInvalidRequest) {
		t.Errorf("a hypothesis call: %v, want ErrInvalidRequest", err)
	}
}
