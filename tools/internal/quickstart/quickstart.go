package quickstart

// quickstart:begin
import (
	"context"
	"fmt"
	"os"

	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/providers/openai"
	"github.com/forgemem/forgemem/settings"
)

// Ask is the agent's own model call: the conversation in, the reply out.
type Ask func(ctx context.Context, msgs []memcore.Message) (string, error)

// Run wires forgemem as the user configured it (~/.forge/config.yaml, the
// repository's .forge/config.yaml, FORGEMEM_* variables) into an agent loop.
func Run(ctx context.Context, ask Ask, turns <-chan string) error {
	opts, err := settings.OSOptions()
	if err != nil {
		return err
	}
	s, err := settings.Load(opts)
	if err != nil {
		return err // every mistake, by file and line, variable or flag
	}
	for _, w := range s.Warnings { // a cloned repository's settings the user has not trusted
		fmt.Fprintln(os.Stderr, "forgemem:", w)
	}
	client, err := openai.New(openai.Config{APIKey: s.OpenAIAPIKey(), BaseURL: s.BaseURL,
		Model: s.ClassifierModel, EmbeddingModel: s.EmbeddingModel})
	if err != nil {
		return err
	}
	return Loop(ctx, s, client, client, ask, turns)
}

// Loop is the agent loop: recall before each reply, capture after it.
func Loop(ctx context.Context, s *settings.Settings, llm memcore.LLMProvider, embedder memcore.Embedder, ask Ask, turns <-chan string) error {
	var engine *memretrieve.Engine
	var observer *memcapture.Observer
	if s.Enabled { // memory.enabled: false turns memory off, e.g. in one repository
		store, err := memcore.NewFileStore(s.Paths.RepoDir, s.Paths.UserDir, memcore.FileStoreConfig{})
		if err != nil {
			return err
		}
		if engine, err = memretrieve.NewEngine(store, embedder, llm, s.RetrieveConfig()); err != nil {
			return err
		}
		engine.Start(ctx) // builds the index in the background
		defer engine.Close(context.WithoutCancel(ctx))
		capture := s.CaptureConfig() // memory.classifier_model, cadence_turns and review
		capture.Rebuild = engine.TriggerRebuild
		pipeline, err := memcapture.NewPipeline(llm, store, capture)
		if err != nil {
			return err
		}
		if err := pipeline.Start(ctx); err != nil {
			return err
		}
		defer pipeline.Close(context.WithoutCancel(ctx)) // lets capture finish
		if observer, err = memcapture.NewObserver(pipeline); err != nil {
			return err
		}
	}
	var window []memcore.Message // the conversation since the last summary
	turn := 0
	for text := range turns {
		turn++
		window = append(window, memcore.Message{Role: memcore.RoleUser, Content: text})
		msgs := window
		if engine != nil {
			// Within memory.retrieval_timeout; a failed model leaves what the words find.
			res, err := engine.Retrieve(ctx, fmt.Sprint("turn-", turn), window)
			if err != nil {
				return err // ctx ended
			}
			if res.Injection != "" { // a late message: the system prompt stays cacheable
				msgs = append(append([]memcore.Message{}, window...), memcore.Message{Role: memcore.RoleUser, Content: res.Injection})
			}
		}
		reply, err := ask(ctx, msgs)
		if err != nil {
			return err
		}
		window = append(window, memcore.Message{Role: memcore.RoleAssistant, Content: reply})
		if observer != nil {
			observer.OnTurnComplete(window, "session-1") // returns at once
		}
	}
	return nil
}

// quickstart:end
