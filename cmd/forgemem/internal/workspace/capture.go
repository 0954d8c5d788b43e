package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
)

// CaptureResult is what one capture pass wrote.
type CaptureResult struct {
	// Written are the memories the pass wrote, by scope (repo first),
	// category and title.
	Written []Memory `json:"written"`
	// Duplicates counts the memories the classifier proposed that were
	// already stored.
	Duplicates int `json:"duplicates"`
	// Invalid counts the proposals skipped as unusable.
	Invalid int `json:"invalid"`
	// Redactions counts the secrets replaced by [REDACTED] before writing.
	Redactions int `json:"redactions"`
	// Empty is true when the conversation held no user or assistant text
	// once tool content was removed, so the classifier was not asked.
	Empty bool `json:"empty"`
	// Tokens estimates the length of the conversation once tool content
	// is removed (memcore.WindowTokens), and WindowTokens is the most a
	// pass sends the classifier (memcapture.Config.WindowTokens). Truncated
	// is true when the conversation is longer: the classifier read only
	// its newest part, and the beginning was not captured.
	Tokens       int  `json:"tokens"`
	WindowTokens int  `json:"window_tokens"`
	Truncated    bool `json:"truncated"`
}

// Capture runs one capture pass over a conversation, as the agent's
// capture pipeline does after a turn: tool content is removed, the
// classifier model (memory.classifier_model) is asked what is worth
// remembering, its answer is validated and redacted, and the memories are
// written with trigger cadence and the given session id. A conversation
// longer than the classifier's window is read from its end, as an agent's
// pass reads it: only its newest part is captured
// ([CaptureResult].Truncated).
//
// It fails with [ErrDisabled] when memory.enabled is false here,
// [ErrNeedsModel] with the fake provider, [ErrProviderSetup] when the
// provider is not set up, and [ErrProvider] when the classifier failed or
// its reply could not be read.
func (w *Workspace) Capture(ctx context.Context, window []memcore.Message, sessionID string) (*CaptureResult, error) {
	if !w.settings.Enabled {
		return nil, fmt.Errorf("%w: %s; nothing is captured", ErrDisabled, w.settings.RetrievalOff())
	}
	models, err := w.Models()
	if err != nil {
		return nil, err
	}
	_, model, err := models.NeedClassifier()
	if err != nil {
		return nil, err
	}
	before, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	p, err := w.newPipeline(ctx)
	if err != nil {
		return nil, err
	}
	p.Enqueue(memcapture.TriggerEvent{Kind: memcore.TriggerCadence, Messages: window, SessionID: sessionID})
	// Close processes the waiting trigger and returns when the pass is over.
	if err := p.Close(ctx); err != nil {
		return nil, fmt.Errorf("capturing: %w", err)
	}
	st := p.Stats()
	switch {
	case st.LLMErrors > 0:
		return nil, fmt.Errorf("%w: the classifier (model %s): %w", ErrProvider, model, failureOf(st))
	case st.ParseFailures > 0:
		return nil, fmt.Errorf("%w: the classifier (model %s) replied twice with something that is not the JSON asked for", ErrProvider, model)
	case st.StoreErrors > 0:
		return nil, fmt.Errorf("writing the memories failed %d times (run with --verbose for the reasons)", st.StoreErrors)
	}
	after, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	res := &CaptureResult{
		Written:      []Memory{},
		Duplicates:   int(st.Duplicates),
		Invalid:      int(st.Invalid),
		Redactions:   int(st.Redactions),
		Empty:        st.SkippedEmpty > 0,
		Tokens:       memcore.WindowTokens(memcore.StripToolContent(window)),
		WindowTokens: cmp.Or(w.settings.CaptureConfig().WindowTokens, memcapture.DefaultWindowTokens),
	}
	res.Truncated = res.Tokens > res.WindowTokens
	for _, m := range after.all {
		if _, old := before.g.Memory(m.Meta.ID); !old && m.Meta.SessionID == sessionID {
			res.Written = append(res.Written, view(w.store, after.g, m))
		}
	}
	// One pass writes its memories within a second: order them for people.
	slices.SortStableFunc(res.Written, func(a, b Memory) int {
		return cmp.Or(cmp.Compare(a.Scope, b.Scope), cmp.Compare(a.Category, b.Category), cmp.Compare(a.Title, b.Title))
	})
	return res, nil
}

// failureOf is the pipeline's latest failure (its message redacted), or a
// generic one when none was recorded.
func failureOf(st memcapture.Stats) error {
	if st.LastFailure.Err != nil {
		return st.LastFailure.Err
	}
	return errors.New("it did not answer usably")
}
