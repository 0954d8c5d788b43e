package quickstart_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
	"github.com/forgemem/forgemem/settings"
	"github.com/forgemem/forgemem/tools/internal/quickstart"
)

// The quick start's loop, run offline: two sessions of an agent whose
// models are fakes. The first states a preference, which capture keeps;
// the second gets it back without being told.
func Example() {
	root, _ := os.MkdirTemp("", "quickstart-")
	defer os.RemoveAll(root)
	repo, home := filepath.Join(root, "repo"), filepath.Join(root, "home")
	_ = os.MkdirAll(filepath.Join(repo, ".git"), 0o750)
	s, err := settings.Load(settings.Options{WorkDir: repo, Home: home}) // the fake provider by default
	if err != nil {
		panic(err)
	}
	// The classifier a real model plays: it keeps the preference once.
	llm, err := fake.NewLLM(fake.LLMConfig{ReplyFunc: func(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		reply := `{"memories": []}`
		if req.ResponseSchema != nil && req.ResponseSchema.Name == memcapture.ClassifierSchemaName &&
			strings.Contains(req.Messages[0].Content, "indent with tabs") {
			reply = `{"memories": [{"content": "Indent Go code with tabs.", "scope": "user", "category": "coding-preferences", "supersedes": "", "related": [],
				"evidence": {"messages": [1], "quote": "indent with tabs"}}]}`
		}
		return &memcore.CompletionResponse{Text: reply}, nil
	}})
	if err != nil {
		panic(err)
	}
	embedder, err := fake.NewEmbedder(fake.EmbedderConfig{})
	if err != nil {
		panic(err)
	}
	ask := func(_ context.Context, msgs []memcore.Message) (string, error) {
		last := msgs[len(msgs)-1].Content
		if strings.Contains(last, "<recalled_memories>") {
			fmt.Println("the agent is reminded:", strings.Contains(last, "Indent Go code with tabs."))
		}
		return "OK.", nil
	}
	for _, turns := range [][]string{{"Always indent with tabs, please."}, {"Reformat the Go code in main.go."}} {
		ch := make(chan string, len(turns))
		for _, t := range turns {
			ch <- t
		}
		close(ch)
		if err := quickstart.Loop(context.Background(), s, llm, embedder, ask, ch); err != nil {
			panic(err)
		}
	}
	// Output:
	// the agent is reminded: true
}
