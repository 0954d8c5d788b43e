package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

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
// [ErrProvider] when a provider call failed and the turn got nothing. When
// a provider call failed but memories were still found (by the lexical
// index, or among those the index could embed), it returns them with an
// error wrapping [ErrPartial] and [ErrProvider]: an agent's turn takes
// them, a person asking wants to know why.
func (w *Workspace) Recall(ctx context.Context, window []memcore.Message) (*memretrieve.Result, error) {
	e, cfg, buildErr, err := w.recallEngine(ctx)
	if e == nil {
		return nil, err
	}
	res, err := e.Retrieve(ctx, "", window)
	if err != nil {
		return nil, err
	}
	err = partial(len(res.Memories) > 0, buildErr, turnError(res, res.Skipped, cfg.Timeout),
		turnError(res, res.VectorSkipped, cfg.Timeout))
	if err != nil && !errors.Is(err, ErrPartial) {
		return nil, err
	}
	return res, err
}

// SkippedFiles returns the memory files the last reading of the memory
// folders for recall skipped — a merge conflict, a file too large, one
// that is not a valid memory file or cannot be read — ordered by path:
// memories a recall is missing until the files are fixed, which
// [Workspace.Validate] describes. It reads nothing: it is what the live
// view (Options.LiveDir) knows as of its last update, or else what the
// store's last listing found, which a Recall makes when it builds its
// index. Only files named <memory id>.md are in it: not other files, nor
// a folder that cannot be read, nor a file served repaired.
func (w *Workspace) SkippedFiles() []memcore.Problem {
	w.mu.Lock()
	f := w.live
	w.mu.Unlock()
	var probs []memcore.Problem
	if f != nil {
		probs = f.Skipped()
	} else {
		probs = w.store.Skipped()
	}
	out := probs[:0]
	for _, p := range probs {
		id, ok := strings.CutSuffix(filepath.Base(p.Path), ".md")
		if ok && memcore.ValidateID(id) == nil && !p.Served && p.Path != w.store.Dir(p.Scope) {
			out = append(out, p)
		}
	}
	return out
}

// PrepareRecall makes Recall's engine and brings its index up to date with
// the memory folders now, so that the next Recall only searches: for a
// long-lived process, when it starts and when the folders changed (see
// [Workspace.Changed]). It fails as Recall fails before it searches; an
// error wrapping ErrProvider means the index was built without the
// memories that could not be embedded.
func (w *Workspace) PrepareRecall(ctx context.Context) error {
	_, _, buildErr, err := w.recallEngine(ctx)
	if err != nil {
		return err
	}
	return buildErr
}

// recallEngine returns Recall's engine, its index up to date, with the
// settings' retrieval configuration. buildErr is the error of a build that
// could not embed every memory (the engine searches what it indexed); err
// is why there is no engine.
func (w *Workspace) recallEngine(ctx context.Context) (e *memretrieve.Engine, cfg memretrieve.Config, buildErr, err error) {
	s := w.settings
	if !s.Enabled {
		return nil, cfg, nil, fmt.Errorf("%w: %s", ErrDisabled, s.RetrievalOff())
	}
	if reason := s.RetrievalOff(); reason != "" {
		return nil, cfg, nil, fmt.Errorf("%w: %s", ErrRetrievalOff, reason)
	}
	models, err := w.Models()
	if err != nil {
		return nil, cfg, nil, err
	}
	emb, err := models.NeedEmbedder()
	if err != nil {
		return nil, cfg, nil, err
	}
	cfg = s.RetrieveConfig()
	cfg.StaleCheck = w.staleCheck()
	var llm memcore.LLMProvider
	if cfg.Mode == memretrieve.ModeLLM {
		if llm, err = models.NeedLLM(); err != nil {
			return nil, cfg, nil, err
		}
	}
	e, buildErr = w.engine(ctx, "recall", cfg, llm, emb)
	if e == nil {
		return nil, cfg, nil, buildErr
	}
	return e, cfg, buildErr, nil
}

// partial is the error of a recall or search: nil when nothing failed; the
// first failure when nothing was found (skipped, the turn's own failure);
// else an error wrapping ErrPartial and the failures (the index's build,
// the vector ranking).
func partial(found bool, build, skipped, vector error) error {
	switch {
	case build == nil && skipped == nil && vector == nil:
		return nil
	case !found:
		return cmp.Or(skipped, build, vector)
	}
	return fmt.Errorf("%w: %w", ErrPartial, errors.Join(build, vector))
}

// turnError is the error of a retrieval step skipped for reason (the
// turn's Skipped, or its VectorSkipped): a failed provider call or a
// timeout is an error wrapping ErrProvider and res.Err, which belong to
// this call only, however many run at once; a reason that is no failure
// (an empty window, nothing indexed yet) is nil.
func turnError(res *memretrieve.Result, reason memretrieve.SkipReason, timeout time.Duration) error {
	switch reason {
	case memretrieve.SkipNone, memretrieve.SkipDisabled, memretrieve.SkipEmptyWindow:
		return nil
	case memretrieve.SkipCancelled:
		return orReason(res, reason)
	case memretrieve.SkipNoIndex:
		if res.Err == nil {
			return nil // nothing has a vector yet: no memory, or none embedded
		}
		return fmt.Errorf("%w: indexing the memories: %w", ErrProvider, res.Err)
	case memretrieve.SkipTimeout:
		return fmt.Errorf("%w: no answer within memory.retrieval_timeout (%s): %w", ErrProvider, timeout, orReason(res, reason))
	case memretrieve.SkipEmbedderError:
		return fmt.Errorf("%w: the embedder: %w", ErrProvider, orReason(res, reason))
	}
	return fmt.Errorf("%w: %s: %w", ErrProvider, reason, orReason(res, reason))
}

// orReason is res.Err, or an error naming reason when there is none.
func orReason(res *memretrieve.Result, reason memretrieve.SkipReason) error {
	if res.Err != nil {
		return res.Err
	}
	return errors.New(reason.String())
}
