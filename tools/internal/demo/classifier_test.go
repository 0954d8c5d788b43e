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

func TestClassifierKeepsWhatTheConversationSays(t *testing.T) {
	s3 := script[2].turns[1]
	prompt := "CONVERSATION (oldest first):\n\nUser: " + s3.user + "\n\nAssistant: " + s3.assistant + "\n" +
		"\nEXISTING MEMORIES (the only ids you may use; most relevant first):\n" +
		"- [mem_00000000-0000-4000-8000-000000000001] (repo/project-conventions) Database migrations live in db/migrations.\n" +
		"- [mem_00000000-0000-4000-8000-000000000002] (repo/architectural-decisions) User updates use optimistic locking: a version column.\n" +
		"\nReply with the JSON object."
	got := classify(t, prompt)
	if len(got) != 1 {
		t.Fatalf("%d memories, want 1: %+v", len(got), got)
	}
	m := got[0]
	if m.Supersedes != "mem_00000000-0000-4000-8000-000000000002" || m.Scope != "repo" ||
		m.Category != "architectural-decisions" || m.Content != s3.remember[0].content || m.Related == nil {
		t.Errorf("got %+v, want session 3's decision superseding the listed one", m)
	}
}

func TestClassifierKeepsNothingTwice(t *testing.T) {
	s1 := script[0].turns[0]
	prompt := "CONVERSATION (oldest first):\n\nUser: " + s1.user + "\n\nReply with the JSON object."
	if got := classify(t, prompt); len(got) != 1 || got[0].Supersedes != "" {
		t.Fatalf("first time: %+v, want one new memory", got)
	}
	listed := prompt[:len(prompt)-len("\nReply with the JSON object.")] +
		"\nEXISTING MEMORIES (the only ids you may use; most relevant first):\n" +
		"- [mem_00000000-0000-4000-8000-000000000001] (user/coding-preferences) " + firstLine(s1.remember[0].content) + "\n" +
		"\nReply with the JSON object."
	if got := classify(t, listed); len(got) != 0 {
		t.Errorf("with the memory listed: %+v, want none", got)
	}
	if got := classify(t, "CONVERSATION (oldest first):\n\nUser: hello\n\nReply with the JSON object."); len(got) != 0 {
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
