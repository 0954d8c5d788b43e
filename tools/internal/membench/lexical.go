package membench

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/memretrieve/experimental/search"
)

// LexicalMaxAddedP99Ms is how much the lexical index may add to Retrieve's
// p99, in milliseconds, against the same engine with it off in the same
// run.
const LexicalMaxAddedP99Ms = 2.0

// Lexical holds the figures of the lexical (BM25) index.
type Lexical struct {
	// BuildMs is the median time to tokenise cfg.Memories memory texts and
	// build their index: what an engine's first build adds (later builds
	// tokenise only new texts).
	BuildMs float64 `json:"build_ms"`
	// QueryP50Ms and QueryP99Ms are percentiles of one turn's lexical
	// search: the three focused queries of an 8-message window, top 10.
	QueryP50Ms float64 `json:"query_p50_ms"`
	QueryP99Ms float64 `json:"query_p99_ms"`
	// Memories is the number of texts indexed.
	Memories int `json:"memories"`

	// The same Retrieve measurements as the report's, on the same store,
	// with the lexical index off (memretrieve.Config.LexicalWeight 0).
	RetrieveVectorOnlyP50Ms         float64 `json:"retrieve_vector_only_p50_ms"`
	RetrieveVectorOnlyP99Ms         float64 `json:"retrieve_vector_only_p99_ms"`
	RetrieveIdentityVectorOnlyP50Ms float64 `json:"retrieve_identity_vector_only_p50_ms"`
	RetrieveIdentityVectorOnlyP99Ms float64 `json:"retrieve_identity_vector_only_p99_ms"`
}

// measureLexical measures the lexical index on its own over the texts of
// cfg.Memories generated memories.
func measureLexical(cfg Config, r *Report) error {
	rng := newRand(7)
	ids, texts := make([]string, cfg.Memories), make([]string, cfg.Memories)
	for i := range cfg.Memories {
		m := memory(rng, i, nil)
		ids[i], texts[i] = m.Meta.ID, m.Content
	}
	var builds []float64
	var ix *search.LexicalIndex
	for range cfg.Trials {
		d, err := timed(func() (err error) {
			ix, err = search.NewLexicalIndex(ids, texts)
			return err
		})
		if err != nil {
			return err
		}
		builds = append(builds, d)
	}
	r.Lexical.Memories = cfg.Memories
	r.Lexical.BuildMs = median(builds) / 1e6

	lat := make([]float64, 0, cfg.Retrieves)
	for i := range cfg.Retrieves {
		queries := focusedQueries(conversation(8, uint64(i)))
		var found int
		d, _ := timed(func() error {
			found = len(ix.Search(queries, cfg.K))
			return nil
		})
		if found == 0 {
			return fmt.Errorf("lexical search %d found nothing; the measurement would not be of a real search", i)
		}
		lat = append(lat, d/1e6)
	}
	slices.Sort(lat)
	r.Lexical.QueryP50Ms, r.Lexical.QueryP99Ms = percentile(lat, 50), percentile(lat, 99)
	return nil
}

// focusedQueries returns the texts an identity turn searches with, as the
// engine makes them: the latest user message, the latest exchange (it and
// the message before) and the whole window.
func focusedQueries(win []memcore.Message) []string {
	last := len(win) - 1
	for i := len(win) - 1; i >= 0; i-- {
		if win[i].Role == memcore.RoleUser {
			last = i
			break
		}
	}
	text := func(ms []memcore.Message) string {
		parts := make([]string, len(ms))
		for i, m := range ms {
			parts[i] = m.Content
		}
		return strings.Join(parts, "\n\n")
	}
	return []string{text(win[last : last+1]), text(win[max(0, last-1):]), text(win)}
}

// measureRetrieve measures Retrieve with the engines hybrid (HyDE) and
// identity, each beside the same engine on store with the lexical index
// off (memretrieve.Config.LexicalWeight 0), so the report compares the two
// in one run, turn by turn.
func measureRetrieve(ctx context.Context, cfg Config, store memcore.MemoryStore, emb memcore.Embedder, hybrid, hybridIdentity *memretrieve.Engine, r *Report) error {
	base := memretrieve.DefaultConfig()
	base.LexicalWeight = 0
	llm, err := scriptedHypotheses()
	if err != nil {
		return err
	}
	e, err := memretrieve.NewEngine(store, emb, llm, base)
	if err != nil {
		return err
	}
	if err := e.Rebuild(ctx); err != nil {
		return err
	}
	lat, err := retrieveLatencies(ctx, cfg.Retrieves, "llm", hybrid, e)
	if err != nil {
		return err
	}
	r.RetrieveP50Ms, r.RetrieveP99Ms = lat[0].p50, lat[0].p99
	r.Lexical.RetrieveVectorOnlyP50Ms, r.Lexical.RetrieveVectorOnlyP99Ms = lat[1].p50, lat[1].p99

	id, err := memretrieve.NewEngine(store, emb, nil, identity(base))
	if err != nil {
		return err
	}
	if err := id.Rebuild(ctx); err != nil {
		return err
	}
	if lat, err = retrieveLatencies(ctx, cfg.Retrieves, "identity", hybridIdentity, id); err != nil {
		return err
	}
	r.RetrieveIdentityP50Ms, r.RetrieveIdentityP99Ms = lat[0].p50, lat[0].p99
	r.Lexical.RetrieveIdentityVectorOnlyP50Ms, r.Lexical.RetrieveIdentityVectorOnlyP99Ms = lat[1].p50, lat[1].p99
	return nil
}

// lexicalMisses lists the lexical index's targets the report misses.
func lexicalMisses(r *Report) []string {
	var out []string
	check := func(mode string, with, without float64) {
		if with-without > LexicalMaxAddedP99Ms {
			out = append(out, fmt.Sprintf("retrieval (%s): the lexical index adds %.2f ms to p99 (%.2f against %.2f; target ≤ %.0f ms)",
				mode, with-without, with, without, LexicalMaxAddedP99Ms))
		}
	}
	check("llm", r.RetrieveP99Ms, r.Lexical.RetrieveVectorOnlyP99Ms)
	check("identity", r.RetrieveIdentityP99Ms, r.Lexical.RetrieveIdentityVectorOnlyP99Ms)
	return out
}
