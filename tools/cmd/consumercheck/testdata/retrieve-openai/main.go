// Command retrieve-openai imports memcore, memretrieve and providers/openai,
// as an agent that recalls memories with an OpenAI-compatible server does.
// consumercheck builds it against the published modules and checks that its
// build list has nothing of the Gemini provider.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/providers/openai"
)

func main() {
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "retrieve-openai: %s: %v\n", what, err)
		os.Exit(1)
	}
	// A local server that is never called: nothing here makes a request.
	client, err := openai.New(openai.Config{
		BaseURL:        "http://127.0.0.1:11434/v1",
		Model:          "llama3.2",
		EmbeddingModel: "nomic-embed-text",
	})
	if err != nil {
		fail("openai.New", err)
	}
	var (
		llm      memcore.LLMProvider = client
		embedder memcore.Embedder    = client
	)
	cfg := memretrieve.DefaultConfig()
	cfg.HypothesisModel = "llama3.2"
	engine, err := memretrieve.NewEngine(memcore.NewMemStore(), embedder, llm, cfg)
	if err != nil {
		fail("memretrieve.NewEngine", err)
	}
	if !engine.Enabled() {
		fail("engine", fmt.Errorf("disabled with both an embedder and a hypothesis model"))
	}
	if err := engine.Close(context.Background()); err != nil {
		fail("engine.Close", err)
	}
	fmt.Println("retrieve-openai: engine ready with embedding model", embedder.Model())
}
