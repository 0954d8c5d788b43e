package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
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
	// Relevance is the relevance gate's confidence that the memory is
	// relevant to the text, from 0 to 1 (memretrieve.Evidence.Relevance):
	// one less the chance that unrelated text scores as high.
	Relevance float64 `json:"relevance"`
	// Strong is set when the memory passed the relevance gate: retrieval
	// would recall it for this text. A weak hit was ranked but did not.
	Strong bool `json:"strong"`
	// Score is the chain's score in retrieval's ranking
	// (memretrieve.Candidate.Score): the fusion of its vector and lexical
	// ranks, or, with memory.retrieval_lexical_weight 0, the cosine
	// similarity of the query with the best-matching version of the chain.
	// It orders the hits; Relevance says how relevant they are.
	Score float64 `json:"score"`
	// Matched is the id of that version when it is an earlier one than
	// Memory.
	Matched string `json:"matched,omitempty"`
	// Evidence is what the relevance rests on.
	Evidence Evidence `json:"evidence"`
	// Held says why recall holds the memory (see [ReviewItem.Held]), in a
	// search with pending memories, which lists such memories as well;
	// "" when it does not.
	Held string `json:"held,omitempty"`
}

// Evidence is what a memory's relevance to a text or a conversation rests
// on (memretrieve.Evidence), with what the relevance gate needed of it.
type Evidence struct {
	// Vector is the cosine similarity of the memory with the query it
	// matched best, VectorNeeded what the gate needed of it; both 0 when
	// the vector search did not find it.
	Vector       float64 `json:"vector"`
	VectorNeeded float64 `json:"vector_needed"`
	// Lexical is the IDF of the words the memory shares with the text,
	// LexicalNeeded what the gate needed, LexicalTerms the words shared.
	Lexical       float64 `json:"lexical"`
	LexicalNeeded float64 `json:"lexical_needed"`
	LexicalTerms  int     `json:"lexical_terms"`
	// Cleared says on which side the evidence cleared the gate's threshold
	// itself, Passed on which side it admitted the memory into the
	// injection (near the turn's best hit, when a memory of the turn
	// cleared the gate): each "vector", "lexical", "both" or "none".
	Cleared string `json:"cleared"`
	Passed  string `json:"passed"`
}

// EvidenceOf is the Evidence of memretrieve's, its figures rounded to four
// decimals.
func EvidenceOf(ev memretrieve.Evidence) Evidence {
	return Evidence{Vector: round4(ev.Vector), VectorNeeded: round4(ev.VectorNeeded), Lexical: round4(ev.Lexical),
		LexicalNeeded: round4(ev.LexicalNeeded), LexicalTerms: ev.LexicalTerms, Cleared: ev.Cleared.String(), Passed: ev.Passed.String()}
}

// round4 rounds v to four decimals: what a person reads, and what stays
// the same whichever SIMD kernel computed it.
func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// SearchResult is what [Workspace.Search] found.
type SearchResult struct {
	Query string `json:"query"`
	// Hits are the chains that passed the relevance gate, best first, then
	// the weak ones, best first.
	Hits []Hit `json:"hits"`
	// Held counts the chains that passed the relevance gate but were left
	// out because recall holds them (see [ReviewItem.Held]): what recall
	// would have given for the text but for review. A held chain with weak
	// evidence is left out without being counted, as it is no result a
	// person would miss. A search with pending memories lists them instead.
	Held int `json:"held,omitempty"`
	// Pending counts the memories that wait for review, which a search
	// without them does not search, whatever the text; a search with
	// pending memories searches them, and it is 0.
	Pending int `json:"pending,omitempty"`
	// Unreadable counts the files and folders the store could not read:
	// memories that were not searched.
	Unreadable int `json:"unreadable_files"`
}

// Search ranks the memories by similarity to text exactly as retrieval
// does — the retrieval engine in identity mode, with the text as the one
// query, no graph expansion and the settings' minimum score — and returns
// the best limit chains (1 to [MaxSearchLimit]): those that pass the
// relevance gate first (Hit.Strong), then the weak ones, each with its
// relevance and evidence. Forgotten chains are not searched; a hit on an
// old version counts for its chain's current one. Search works when memory
// is off (memory.enabled: false). When the embedder failed but memories
// were still found (by their words), it returns them with an error
// wrapping [ErrPartial] and [ErrProvider].
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
	// A search shows what is stored, outdated or not, with the reason: each
	// hit listed is checked below, the weak ones too.
	cfg.Stale = memretrieve.StaleIgnore
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
	failed := partial(len(res.Ranked) > 0, buildErr, searchError(res, res.Skipped, cfg.Timeout),
		searchError(res, res.VectorSkipped, cfg.Timeout))
	if failed != nil && !errors.Is(failed, ErrPartial) {
		return nil, failed
	}
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	out := &SearchResult{Query: text}
	if out.Unreadable, err = w.UnreadableCount(ctx); err != nil {
		return nil, err
	}
	out.Hits, out.Held = w.hits(ctx, snap, res.Ranked, limit, !pending)
	if !pending {
		out.Pending = countWaiting(snap, snap.g.Waiting(), ListOptions{})
	}
	return out, failed
}

// hits describes the best limit chains of a search's ranking as they are
// in snap (with their status: the engine of a search with pending
// memories reads them as in force): those that passed the relevance gate
// first, then the weak ones, each with why it may be outdated. With
// skipHeld, the chains recall holds (see heldBy) are left out, as pending
// ones are, and those that passed the gate are counted in skipped.
func (w *Workspace) hits(ctx context.Context, snap *snapshot, found []memretrieve.Candidate, limit int, skipHeld bool) (out []Hit, skipped int) {
	out = []Hit{}
	ranked := slices.Clone(found)
	slices.SortStableFunc(ranked, func(a, b memretrieve.Candidate) int {
		return cmp.Compare(b2i(b.Evidence.Strong()), b2i(a.Evidence.Strong()))
	})
	taken := 0
	for _, c := range ranked {
		if taken == limit {
			break
		}
		head, ok := snap.g.Memory(c.ID)
		held := ""
		if ok {
			held = w.heldBy(head)
		}
		if skipHeld && held != "" {
			if c.Evidence.Strong() {
				skipped++
			}
			continue
		}
		taken++
		if !ok { // written since the index was built
			continue
		}
		h := Hit{Memory: view(w.store, snap.g, head), Relevance: round4(c.Evidence.Relevance), Strong: c.Evidence.Strong(),
			Score: c.Score, Evidence: EvidenceOf(c.Evidence), Held: held}
		h.Memory.Stale = w.staleOf(ctx, head)
		if c.Matched != c.ID {
			h.Matched = c.Matched
		}
		out = append(out, h)
	}
	return out, skipped
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
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
