package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
)

// Recall returns what retrieval recalls for a conversation — the
// memories and the injection block an agent adds to its context for the
// turn — with the settings' retrieval configuration (memory.retrieval_*),
// as an agent wired with the settings would get it. Nothing relevant is an
// empty result, not an error.
//
// It fails with [ErrDisabled] when memory.enabled is false here, with
// [ErrRetrievalOff] when the settings leave retrieval off, and with
// [ErrProvider] when a provider call failed (an agent's turn would then
// get only what the lexical index finds, or no memories; a person asking
// wants to know why).
func (w *Workspace) Recall(ctx context.Context, window []memcore.Message) (*memretrieve.Result, error) {
	s := w.settings
	if !s.Enabled {
		return nil, fmt.Errorf("%w: %s", ErrDisabled, s.RetrievalOff())
	}
	if reason := s.RetrievalOff(); reason != "" {
		return nil, fmt.Errorf("%w: %s", ErrRetrievalOff, reason)
	}
	models, err := w.Models()
	if err != nil {
		return nil, err
	}
	emb, err := models.NeedEmbedder()
	if err != nil {
		return nil, err
	}
	cfg := s.RetrieveConfig()
	var llm memcore.LLMProvider
	if cfg.Mode == memretrieve.ModeLLM {
		if llm, err = models.NeedLLM(); err != nil {
			return nil, err
		}
	}
	e, err := w.engine(ctx, "recall", cfg, llm, emb)
	if err != nil {
		return nil, err
	}
	mark := w.failures.mark()
	res, err := e.Retrieve(ctx, "", window)
	if err != nil {
		return nil, err
	}
	// A failed provider leaves nothing, or the lexical ranking alone.
	if res.Injection == "" || res.VectorSkipped != memretrieve.SkipNone {
		if f := w.failures.since(mark); f != nil {
			if errors.Is(f, context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w: no answer within memory.retrieval_timeout (%s): %w", ErrProvider, cfg.Timeout, f)
			}
			return nil, fmt.Errorf("%w: %w", ErrProvider, f)
		}
	}
	return res, nil
}
