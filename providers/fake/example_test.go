package fake_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

func ExampleLLM() {
	llm, err := fake.NewLLM(fake.LLMConfig{Replies: []string{`{"memories": []}`, "second reply"}})
	if err != nil {
		panic(err)
	}

	resp, err := llm.Complete(context.Background(), memcore.CompletionRequest{
		System:   "Extract memories as JSON.",
		Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "I prefer tabs."}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Text, resp.Model, resp.Usage.Total())
	fmt.Println(llm.Calls(), llm.Requests()[0].Messages[0].Content)
	// Output:
	// {"memories": []} fake-llm 14
	// 1 I prefer tabs.
}

// Queued replies come first, then the reply function answers.
func ExampleLLMConfig() {
	shout := func(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		last := req.Messages[len(req.Messages)-1].Content
		return &memcore.CompletionResponse{Text: strings.ToUpper(last)}, nil
	}
	llm, err := fake.NewLLM(fake.LLMConfig{Replies: []string{"queued first"}, ReplyFunc: shout})
	if err != nil {
		panic(err)
	}
	for _, prompt := range []string{"one", "two"} {
		resp, err := llm.Complete(context.Background(), memcore.CompletionRequest{
			Messages: []memcore.Message{{Role: memcore.RoleUser, Content: prompt}},
		})
		if err != nil {
			panic(err)
		}
		fmt.Println(resp.Text)
	}
	// Output:
	// queued first
	// TWO
}

func ExampleLLM_FailNext() {
	llm, err := fake.NewLLM(fake.LLMConfig{Replies: []string{"ok"}})
	if err != nil {
		panic(err)
	}
	if err := llm.FailNext(1, memcore.ErrRateLimited); err != nil {
		panic(err)
	}

	req := memcore.CompletionRequest{Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "hi"}}}
	_, err = llm.Complete(context.Background(), req)
	var apiErr *fake.APIError
	fmt.Println(errors.Is(err, memcore.ErrRateLimited), memcore.IsTransient(err))
	fmt.Println(errors.As(err, &apiErr), apiErr.StatusCode)

	resp, err := llm.Complete(context.Background(), req)
	fmt.Println(resp.Text, err)
	// Output:
	// true true
	// true 429
	// ok <nil>
}

func ExampleEmbedder() {
	e, err := fake.NewEmbedder(fake.EmbedderConfig{})
	if err != nil {
		panic(err)
	}
	vecs, err := e.Embed(context.Background(), []string{
		"The build cache is stale.",
		"Stale build caches slow the CI.",
		"My cat likes fish.",
	})
	if err != nil {
		panic(err)
	}
	similarity := func(a, b []float32) (dot float32) {
		for i := range a {
			dot += a[i] * b[i] // the vectors have unit length
		}
		return dot
	}
	fmt.Println(e.Model(), len(vecs[0]))
	fmt.Println(similarity(vecs[0], vecs[1]) > similarity(vecs[0], vecs[2]))
	// Output:
	// fake-hash-v2-1024 1024
	// true
}

// An input larger than MaxBatch is embedded in several calls.
func ExampleEmbedderConfig() {
	e, err := fake.NewEmbedder(fake.EmbedderConfig{MaxBatch: 2, Dimension: 64})
	if err != nil {
		panic(err)
	}
	vecs, err := e.Embed(context.Background(), []string{"a", "b", "c", "d", "e"})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(vecs), e.Calls(), e.Inputs(), e.Model())
	// Output: 5 3 5 fake-hash-v2-64
}

// A field out of range is an error naming it and the values it accepts;
// every such field is reported at once.
func ExampleEmbedderConfig_Validate() {
	_, err := fake.NewEmbedder(fake.EmbedderConfig{Dimension: -1, MaxBatch: -1})
	fmt.Println(errors.Is(err, memcore.ErrInvalidConfig))
	fmt.Println(err)
	// Output:
	// true
	// fake: invalid config: Dimension is -1, want 1–65536 (0 means 1024); MaxBatch is -1, want at least 0 (0 means no limit)
}
