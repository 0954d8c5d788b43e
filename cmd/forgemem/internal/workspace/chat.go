package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
)

// chatSystemPrompt is the chat model's instructions.
const chatSystemPrompt = "You are a concise, helpful coding assistant. " +
	"Some turns carry notes recalled from earlier sessions; use them where they apply."

// ChatOptions configure [Workspace.StartChat].
type ChatOptions struct {
	// Model answers the user; empty means memory.classifier_model.
	Model string
	// SessionID is recorded in the memories capture writes.
	SessionID string
}

// Chat is a conversation with a real model that has long-term memory: the
// smallest complete agent loop, and the reference for wiring forgemem
// into one. Before each reply the retrieval engine recalls memories for
// the conversation, and the injection block goes into the request as a
// late message (never into the conversation itself); after each reply the
// capture observer is handed the conversation, and the pipeline decides in
// the background what is worth remembering.
type Chat struct {
	llm      memcore.LLMProvider
	model    string
	session  string
	engine   *memretrieve.Engine // nil when retrieval is off
	pipeline *memcapture.Pipeline
	observer *memcapture.Observer
	window   []memcore.Message
	turns    int
	// RetrievalOff says why nothing is recalled, or is "".
	RetrievalOff string
}

// ChatReply is the model's answer to one user message.
type ChatReply struct {
	Text string
	// Recalled is the turn's retrieval: what it added to the request (its
	// Injection, "" when nothing was relevant) and what it left out; an
	// empty Result when retrieval is off.
	Recalled *memretrieve.Result
}

// StartChat starts a chat: it checks that memory is on here and that the
// provider has a real model (as [Workspace.Capture] does), builds the
// retrieval engine in the background (unless the settings leave retrieval
// off, see Chat.RetrievalOff) and starts the capture pipeline. Close it to
// let capture finish.
func (w *Workspace) StartChat(ctx context.Context, opts ChatOptions) (*Chat, error) {
	s := w.settings
	if !s.Enabled {
		return nil, fmt.Errorf("%w: %s", ErrDisabled, s.RetrievalOff())
	}
	models, err := w.Models()
	if err != nil {
		return nil, err
	}
	llm, classifier, err := models.NeedClassifier()
	if err != nil {
		return nil, err
	}
	c := &Chat{llm: llm, model: opts.Model, session: opts.SessionID}
	if c.model == "" {
		c.model = classifier
	}
	rebuild := func() {}
	if c.RetrievalOff = s.RetrievalOff(); c.RetrievalOff == "" {
		cfg := s.RetrieveConfig()
		var hyp memcore.LLMProvider
		if cfg.Mode == memretrieve.ModeLLM {
			hyp = llm
		}
		if c.engine, err = memretrieve.NewEngine(w.store, models.Embedder, hyp, w.engineConfig(cfg)); err != nil {
			return nil, fmt.Errorf("making the retrieval engine: %w", err)
		}
		c.engine.Start(ctx)
		rebuild = c.engine.TriggerRebuild
	}
	capture := w.captureConfig(classifier, models.Embedder)
	capture.Rebuild = rebuild
	if c.pipeline, err = memcapture.NewPipeline(llm, w.captureStore(), capture); err != nil {
		return nil, fmt.Errorf("making the capture pipeline: %w", err)
	}
	if c.observer, err = memcapture.NewObserver(c.pipeline); err != nil {
		return nil, fmt.Errorf("making the capture observer: %w", err)
	}
	if err := c.pipeline.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting capture: %w", err)
	}
	return c, nil
}

// Send is one turn: recall, ask the model, hand the turn to capture.
func (c *Chat) Send(ctx context.Context, text string) (*ChatReply, error) {
	c.turns++
	c.window = append(c.window, memcore.Message{Role: memcore.RoleUser, Content: text})

	// 1. Recall: the block goes at the end of this request only, so the
	// system prompt stays the same from turn to turn (prompt caching) and
	// recalled text is never captured again.
	reply := &ChatReply{Recalled: &memretrieve.Result{}}
	msgs := c.window
	if c.engine != nil {
		res, err := c.engine.Retrieve(ctx, fmt.Sprintf("%s-%d", c.session, c.turns), c.window)
		if err != nil {
			return nil, err
		}
		reply.Recalled = res
		if res.Injection != "" {
			msgs = append(append([]memcore.Message(nil), c.window...), memcore.Message{Role: memcore.RoleUser, Content: res.Injection})
		}
	}

	// 2. Answer.
	resp, err := c.llm.Complete(ctx, memcore.CompletionRequest{Model: c.model, System: chatSystemPrompt, Messages: msgs})
	if err != nil {
		c.window = c.window[:len(c.window)-1] // the user may say it again
		return nil, fmt.Errorf("%w: the chat model (%s): %w", ErrProvider, c.model, err)
	}
	reply.Text = strings.TrimSpace(resp.Text)
	c.window = append(c.window, memcore.Message{Role: memcore.RoleAssistant, Content: reply.Text})

	// 3. Capture: returns at once; the pipeline works in the background.
	c.observer.OnTurnComplete(c.window, c.session)
	return reply, nil
}

// Close lets capture finish the conversation (until ctx ends), stops the
// engine, and returns capture's counters.
func (c *Chat) Close(ctx context.Context) (memcapture.Stats, error) {
	err := c.pipeline.Close(ctx)
	if c.engine != nil {
		err = errors.Join(err, c.engine.Close(ctx))
	}
	return c.pipeline.Stats(), err
}
