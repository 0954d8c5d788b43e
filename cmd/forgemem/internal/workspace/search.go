package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
)

// MaxSearchLimit is the most results [Workspace.Search] returns
// (memretrieve's largest TopK).
const MaxSearchLimit = 100

// searchTimeout bounds one search: the query's embedding call, which a
// remote provider may take a while to answer.
const searchTimeout = 30 * time.Second

// Hit is one result of [Workspace.Search].
type Hit struct {
	// Memory is the current version of the chain found.
	Memory Memory `json:"memory"`
	// Score is the chain's score in retrieval's ranking
	// (memretrieve.Recalled.Score): the fusion of its vector and lexical
	// ranks, or, with memory.retrieval_lexical_weight 0, the cosine
	// similarity of the query with the best-matching version of the chain.
	Score float64 `json:"score"`
	// Matched is the id of that version when it is an earlier one than
	// Memory.
	Matched string `json:"matched,omitempty"`
}

// SearchResult is what [Workspace.Search] found.
type SearchResult struct {
	Query string `json:"query"`
	// Hits are the best chains first.
	Hits []Hit `json:"hits"`
	// Unreadable counts the files and folders the store could not read:
	// memories that were not searched.
	Unreadable int `json:"unreadable_files"`
}

// Search ranks the memories by similarity to text exactly as retrieval
// does — the retrieval engine in identity mode, with the text as the one
// query, no graph expansion and the settings' minimum score — and returns
// the best limit chains (1 to [MaxSearchLimit]). Forgotten chains are not
// searched; a hit on an old version counts for its chain's current one.
// Search works when memory is off (memory.enabled: false). When the
// embedder failed but memories were still found, it returns them with an
// error wrapping [ErrPartial] and [ErrProvider].
func (w *Workspace) Search(ctx context.Context, text string, limit int) (*SearchResult, error) {
	return w.search(ctx, text, limit, false)
}

// SearchWithPending is [Workspace.Search] over the memories that wait for
// review too, each ranked as though it were in force (its Memory.Status
// says it is not): what forgemem search --pending shows a person. Agents
// are never offered it.
func (w *Workspace) SearchWithPending(ctx context.Context, text string, limit int) (*SearchResult, error) {
	return w.search(ctx, text, limit, true)
}

// search is Search, over the memories that wait for review too when
// pending is true.
func (w *Workspace) search(ctx context.Context, text string, limit int, pending bool) (*SearchResult, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, invalidf("the search text is empty")
	}
	if limit < 1 || limit > MaxSearchLimit {
		return nil, invalidf("the limit is %d, want 1–%d", limit, MaxSearchLimit)
	}
	models, err := w.Models()
	if err != nil {
		return nil, err
	}
	emb, err := models.NeedEmbedder()
	if err != nil {
		return nil, err
	}
	cfg := w.settings.RetrieveConfig()
	cfg.Mode = memretrieve.ModeIdentity
	cfg.HopDepth = 0
	cfg.TopK = MaxSearchLimit
	cfg.MaxMemories = MaxSearchLimit
	cfg.InjectionTokenBudget = 1 << 30
	cfg.Timeout = max(cfg.Timeout, searchTimeout)
	// A search shows what is stored, outdated or not, with the reason.
	cfg.StaleCheck, cfg.Stale = w.staleCheck(), memretrieve.StaleLabel
	purpose, store := "search", memcore.MemoryStore(nil)
	if pending {
		purpose, store = "search with pending", pendingInForce{w.store}
	}
	e, buildErr := w.engineOver(ctx, purpose, store, cfg, nil, emb)
	if e == nil {
		return nil, buildErr
	}
	res, err := e.Retrieve(ctx, "", []memcore.Message{{Role: memcore.RoleUser, Content: text}})
	if err != nil {
		return nil, err
	}
	failed := partial(len(res.Memories) > 0, buildErr, searchError(res, res.Skipped, cfg.Timeout),
		searchError(res, res.VectorSkipped, cfg.Timeout))
	if failed != nil && !errors.Is(failed, ErrPartial) {
		return nil, failed
	}
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	out := &SearchResult{Query: text}
	if out.Unreadable, err = w.unreadableCount(ctx); err != nil {
		return nil, err
	}
	out.Hits = w.hits(snap, res.Memories[:min(limit, len(res.Memories))])
	return out, failed
}

// hits describes the memories a search found as they are in snap (with
// their status: the engine of a search with pending memories reads them as
// in force), each with why it may be outdated.
func (w *Workspace) hits(snap *snapshot, found []memretrieve.Recalled) []Hit {
	out := []Hit{}
	for _, r := range found {
		m, ok := snap.g.Memory(r.Memory.Meta.ID)
		if !ok { // written since the index was built
			m = r.Memory
		}
		h := Hit{Memory: view(w.store, snap.g, m), Score: r.Score}
		h.Memory.Stale = r.Stale
		if r.Via.Matched != r.Memory.Meta.ID {
			h.Matched = r.Via.Matched
		}
		out = append(out, h)
	}
	return out
}

// searchError is turnError, saying what failed for an embedder's failure.
func searchError(res *memretrieve.Result, reason memretrieve.SkipReason, timeout time.Duration) error {
	if reason == memretrieve.SkipEmbedderError {
		return fmt.Errorf("%w: embedding the search text: %w", ErrProvider, orReason(res, reason))
	}
	return turnError(res, reason, timeout)
}

// pendingInForce is the memory folders as a search with pending memories
// sees them: every version that waits for review read as in force.
type pendingInForce struct{ *memcore.FileStore }

// List implements memcore.MemoryStore.
func (s pendingInForce) List(ctx context.Context) ([]*memcore.MemoryFile, error) {
	return inForceCopies(s.FileStore.List(ctx))
}

// ListByScope implements memcore.MemoryStore.
func (s pendingInForce) ListByScope(ctx context.Context, scope memcore.Scope) ([]*memcore.MemoryFile, error) {
	return inForceCopies(s.FileStore.ListByScope(ctx, scope))
}

// inForceCopies returns ms with each pending memory replaced by a copy in
// force.
func inForceCopies(ms []*memcore.MemoryFile, err error) ([]*memcore.MemoryFile, error) {
	for i, m := range ms {
		if m.Meta.Status == memcore.StatusPending {
			c := m.Clone()
			c.Meta.Status, c.Meta.StatusReason = memcore.StatusActive, ""
			ms[i] = c
		}
	}
	return ms, err
}
