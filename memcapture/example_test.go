package memcapture_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// A pipeline with a scripted classifier writes one memory from a turn.
func Example() {
	ctx := context.Background()
	classifier, err := fake.NewLLM(fake.LLMConfig{Replies: []string{`{"memories": [{
		"content": "Prefers table-driven tests with t.Run subtests.\nSaid so while reviewing the parser tests.",
		"scope": "user", "category": "coding-preferences", "supersedes": "", "related": []}]}`}})
	if err != nil {
		panic(err)
	}
	store := memcore.NewMemStore()

	rebuilt := 0
	p, err := memcapture.NewPipeline(classifier, store, memcapture.Config{
		ClassifierModel: "small-model",
		Cadence:         1, // a pass after every turn, the default
		Rebuild:         func() { rebuilt++ },
	})
	if err != nil {
		panic(err)
	}
	if err := p.Start(ctx); err != nil {
		panic(err)
	}
	obs, err := memcapture.NewObserver(p)
	if err != nil {
		panic(err)
	}

	obs.OnTurnComplete([]memcore.Message{
		{Role: memcore.RoleUser, Content: "Please write these as table-driven tests with t.Run; I always want that."},
		{Role: memcore.RoleAssistant, Content: "Done: the parser tests are now one table with t.Run subtests."},
	}, "session-1")

	// Close drains what is waiting; a host calls it at shutdown.
	if err := p.Close(ctx); err != nil {
		panic(err)
	}
	memories, _ := store.List(ctx)
	for _, m := range memories {
		fmt.Printf("%s (%s/%s, trigger %s)\n", m.Title(), m.Meta.Scope, m.Meta.Category, m.Meta.Trigger)
	}
	fmt.Println("written:", p.Stats().MemoriesWritten, "rebuilds:", rebuilt)
	// Output:
	// Prefers table-driven tests with t.Run subtests. (user/coding-preferences, trigger cadence)
	// written: 1 rebuilds: 1
}

// An offline LLM serving both capture and retrieval tells the classifier
// call by its schema name.
func ExampleClassifierSchemaName() {
	ctx := context.Background()
	llm, err := fake.NewLLM(fake.LLMConfig{ReplyFunc: func(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		if req.ResponseSchema != nil && req.ResponseSchema.Name == memcapture.ClassifierSchemaName {
			return &memcore.CompletionResponse{Text: `{"memories": [{"content": "The build uses Bazel.",
				"scope": "repo", "category": "project-conventions", "supersedes": "", "related": []}]}`}, nil
		}
		return &memcore.CompletionResponse{Text: `{"hypotheses": []}`}, nil // another caller's request
	}})
	if err != nil {
		panic(err)
	}
	store := memcore.NewMemStore()
	p, err := memcapture.NewPipeline(llm, store, memcapture.Config{})
	if err != nil {
		panic(err)
	}
	if err := p.Start(ctx); err != nil {
		panic(err)
	}
	p.Enqueue(memcapture.TriggerEvent{Kind: memcore.TriggerCompaction, Messages: []memcore.Message{
		{Role: memcore.RoleUser, Content: "We build with Bazel here, never with go build directly."},
	}})
	if err := p.Close(ctx); err != nil {
		panic(err)
	}
	memories, _ := store.List(ctx)
	for _, m := range memories {
		fmt.Printf("%s (trigger %s)\n", m.Content, m.Meta.Trigger)
	}
	// Output:
	// The build uses Bazel. (trigger compaction)
}

// A field out of range is an error naming it and its range; every such
// field is named at once, and nothing is clamped.
func ExampleConfig_Validate() {
	cfg := memcapture.DefaultConfig()
	cfg.Cadence = 12
	cfg.PassTimeout = -time.Second
	err := cfg.Validate()
	fmt.Println(err)
	fmt.Println(errors.Is(err, memcore.ErrInvalidConfig))
	// Output:
	// memcapture: invalid config: Cadence is 12, want 1–10 (0 means 1); PassTimeout is -1s, want more than 0 (0 means 1m0s)
	// true
}
