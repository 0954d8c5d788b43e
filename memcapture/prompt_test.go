package memcapture

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

func TestPromptContents(t *testing.T) {
	eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
		v1 := seed(t, store, "Uses spaces for indentation.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
		v2 := seed(t, store, "Uses tabs for indentation.\nChanged after the linter switch.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0.Add(time.Hour), v1)
		other := seed(t, store, "Prefers errors.As over type assertions.", memcore.ScopeUser, memcore.CategoryCodingPreferences, t0.Add(2*time.Hour), nil)

		llm := newLLM(t, always(nothing))
		p := startPipeline(t, llm, store, Config{})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("From now on use gofumpt.", "Understood, gofumpt it is.")})
		passes(t, p, 1)
		req := llm.Requests()[0]

		if req.System != systemPrompt {
			t.Errorf("system prompt is not systemPrompt")
		}
		for _, must := range []string{"when in doubt, keep nothing", "credentials", "personal identifiers", `"repo"`, `"user"`,
			"coding-preferences", "project-conventions", "architectural-decisions", "user-facts", "corrections", "patterns",
			"refines", "contradicts", "relates-to", "never invent", `{"memories": []}`, "Prefer superseding"} {
			if !strings.Contains(req.System, must) {
				t.Errorf("system prompt lacks %q", must)
			}
		}
		if req.Model != "classifier-model" || req.Temperature == nil || *req.Temperature != 0 || req.MaxTokens != DefaultReplyTokens {
			t.Errorf("model %q, temperature %v, max tokens %d", req.Model, req.Temperature, req.MaxTokens)
		}
		if req.ResponseSchema == nil || !json.Valid(req.ResponseSchema.Definition) || req.ResponseSchema.Name != ClassifierSchemaName {
			t.Fatalf("no valid response schema: %+v", req.ResponseSchema)
		}
		if len(req.Messages) != 1 || req.Messages[0].Role != memcore.RoleUser {
			t.Fatalf("want one user message, got %+v", req.Messages)
		}
		text := userText(req)
		if !strings.Contains(text, "User: From now on use gofumpt.") || !strings.Contains(text, "Assistant: Understood, gofumpt it is.") {
			t.Errorf("window missing from the prompt:\n%s", text)
		}
		for _, line := range []string{
			fmt.Sprintf("- [%s] (repo/project-conventions) Uses tabs for indentation.\n", v2.Meta.ID),
			fmt.Sprintf("- [%s] (user/coding-preferences) Prefers errors.As over type assertions.\n", other.Meta.ID),
		} {
			if !strings.Contains(existingSection(req), line) {
				t.Errorf("existing memories lack %q:\n%s", line, text)
			}
		}
		if strings.Contains(text, v1.Meta.ID) || strings.Contains(text, "Changed after") {
			t.Errorf("the prompt lists a superseded memory or more than a first line:\n%s", text)
		}
		// Newest first without an embedder.
		if ids := listedIDs(req); !slices.Equal(ids, []string{other.Meta.ID, v2.Meta.ID}) {
			t.Errorf("listed %v, want newest first", ids)
		}
	})
}

func TestPromptWithoutExistingMemories(t *testing.T) {
	llm := newLLM(t, always(nothing))
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("hello")})
	passes(t, p, 1)
	if strings.Contains(userText(llm.Requests()[0]), "EXISTING MEMORIES") {
		t.Error("an empty EXISTING MEMORIES section was sent")
	}
}

func TestExistingMemoriesBounded(t *testing.T) {
	const budget = 300
	store := memcore.NewMemStore()
	var all []*memcore.MemoryFile
	for i := range 200 {
		all = append(all, seed(t, store, fmt.Sprintf("Convention number %d: a long enough first line to cost some tokens in the list.", i),
			memcore.ScopeRepo, memcore.CategoryProjectConventions, t0.Add(time.Duration(i)*time.Minute), nil))
	}
	llm := newLLM(t, always(nothing))
	p := startPipeline(t, llm, store, Config{ExistingTokens: budget})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("x")})
	passes(t, p, 1)
	req := llm.Requests()[0]
	ids := listedIDs(req)
	var lines []string
	for _, l := range strings.Split(existingSection(req), "\n") {
		if strings.HasPrefix(l, "- [") {
			lines = append(lines, l)
		}
	}
	if cost := memcore.EstimateTokens(strings.Join(lines, "\n") + "\n"); cost > budget {
		t.Errorf("list costs %d tokens, budget %d", cost, budget)
	}
	if len(ids) == 0 || len(ids) >= len(all) {
		t.Fatalf("listed %d of %d memories", len(ids), len(all))
	}
	for i, id := range ids { // the newest, newest first
		if want := all[len(all)-1-i].Meta.ID; id != want {
			t.Fatalf("listed[%d] = %s, want %s", i, id, want)
		}
	}

	// A budget of 0 lists nothing.
	llm0 := newLLM(t, always(nothing))
	p0 := startPipeline(t, llm0, store, Config{ExistingTokens: -1})
	p0.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("x")})
	passes(t, p0, 1)
	if existingSection(llm0.Requests()[0]) != "" {
		t.Error("ExistingTokens -1 still listed memories")
	}
}

func TestLongTitleClipped(t *testing.T) {
	store := memcore.NewMemStore()
	seed(t, store, strings.Repeat("ü", 1000), memcore.ScopeUser, memcore.CategoryUserFacts, t0, nil)
	llm := newLLM(t, always(nothing))
	p := startPipeline(t, llm, store, Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("x")})
	passes(t, p, 1)
	if n := strings.Count(existingSection(llm.Requests()[0]), "ü"); n != maxTitleRunes {
		t.Errorf("title has %d runes, want %d", n, maxTitleRunes)
	}
}

// rankingStore holds memories on unrelated subjects, the one about build
// caches the oldest.
func rankingStore(t *testing.T, store memcore.MemoryStore) (cache *memcore.MemoryFile) {
	t.Helper()
	cache = seed(t, store, "The build cache lives in .cache/build and must be cleared after changing the code generator.",
		memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
	subjects := []string{"Prefers dark mode in every editor.", "Writes commit messages in the imperative mood.",
		"Lunch is at noon on Fridays.", "Deploys happen on Tuesdays only.", "Uses British spelling in documentation."}
	for i, s := range subjects {
		seed(t, store, s, memcore.ScopeUser, memcore.CategoryUserFacts, t0.Add(time.Duration(i+1)*time.Hour), nil)
	}
	return cache
}

func TestRankingByEmbedder(t *testing.T) {
	eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
		cache := rankingStore(t, store)
		window := win("The build is stale again, should I clear the build cache after regenerating the code?", "Yes, clear the build cache.")

		plain := newLLM(t, always(nothing))
		p := startPipeline(t, plain, store, Config{})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: window})
		passes(t, p, 1)
		if ids := listedIDs(plain.Requests()[0]); ids[len(ids)-1] != cache.Meta.ID {
			t.Errorf("without an embedder the oldest memory should be last: %v", ids)
		}

		emb := newEmbedder(t, fake.EmbedderConfig{})
		ranked := newLLM(t, always(nothing))
		pe := startPipeline(t, ranked, store, Config{Embedder: emb})
		pe.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: window})
		passes(t, pe, 1)
		if ids := listedIDs(ranked.Requests()[0]); ids[0] != cache.Meta.ID {
			t.Errorf("with an embedder the build-cache memory should be first: %v", ids)
		}

		// Heads are embedded once: a second pass embeds only the window.
		before := emb.Inputs()
		pe.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("Another question about the build cache.")})
		passes(t, pe, 2)
		if got := emb.Inputs() - before; got != 1 {
			t.Errorf("second pass embedded %d texts, want 1 (the window)", got)
		}
	})
}

func TestEmbedderFailureFallsBackToNewestFirst(t *testing.T) {
	store := memcore.NewMemStore()
	cache := rankingStore(t, store)
	emb := newEmbedder(t, fake.EmbedderConfig{FailNext: 1, FailWith: memcore.ErrUnauthenticated})
	llm := newLLM(t, always(reply(mem{"content": "Clear the build cache after regenerating code.", "scope": "repo", "category": "project-conventions"})))
	p := startPipeline(t, llm, store, Config{Embedder: emb})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("clear the build cache?")})
	s := passes(t, p, 1)
	ids := listedIDs(llm.Requests()[0])
	if len(ids) != 6 || ids[len(ids)-1] != cache.Meta.ID {
		t.Errorf("after an embedder failure the list should be newest first: %v", ids)
	}
	if s.MemoriesWritten != 1 {
		t.Errorf("the pass should go on after an embedder failure; written = %d", s.MemoriesWritten)
	}
	// The list the failure left newest first is not pinned: the next pass
	// of the same window step ranks again, and pins what it ranked.
	conv := win("clear the build cache?", "After regenerating the code, yes.")
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: conv})
	passes(t, p, 2)
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: append(conv, win("Thanks.")...)})
	passes(t, p, 3)
	reqs := llm.Requests()
	// Among the seeded memories (the first pass wrote one about the build
	// cache too).
	seeded := slices.DeleteFunc(listedIDs(reqs[1]), func(id string) bool {
		m, err := store.Read(context.Background(), id)
		return err != nil || m.Meta.Trigger != memcore.TriggerManual
	})
	if len(seeded) == 0 || seeded[0] != cache.Meta.ID {
		t.Errorf("the pass after an embedder failure should rank again, the build-cache memory first: %v", seeded)
	}
	if existingSection(reqs[2]) != existingSection(reqs[1]) {
		t.Errorf("the ranked list was not pinned:\n%s\nwas:\n%s", existingSection(reqs[2]), existingSection(reqs[1]))
	}
}

func TestResponseSchema(t *testing.T) {
	s := responseSchema
	if s.Name != ClassifierSchemaName || ClassifierSchemaName != "memories" {
		t.Errorf("schema name %q, ClassifierSchemaName %q; want both \"memories\" (it is documented as stable)", s.Name, ClassifierSchemaName)
	}
	var doc struct {
		Properties struct {
			Memories struct {
				Items struct {
					Properties map[string]struct {
						Enum []string `json:"enum"`
					} `json:"properties"`
					Required []string `json:"required"`
				} `json:"items"`
			} `json:"memories"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(s.Definition, &doc); err != nil {
		t.Fatal(err)
	}
	props := doc.Properties.Memories.Items.Properties
	if got := props["scope"].Enum; !slices.Equal(got, []string{"repo", "user"}) {
		t.Errorf("scope enum = %v", got)
	}
	if got := props["category"].Enum; len(got) != len(memcore.Categories()) {
		t.Errorf("category enum = %v", got)
	}
	for _, k := range []string{"content", "scope", "category", "supersedes", "related", "anchors", "evidence"} {
		if !slices.Contains(doc.Properties.Memories.Items.Required, k) {
			t.Errorf("%s is not required", k)
		}
	}
	// The schema's own example: a reply satisfying it parses.
	els, err := parseReply(`{"memories":[{"content":"c","scope":"repo","category":"patterns","supersedes":"","related":[],"anchors":[{"path":"x.go","symbol":""}]}]}`)
	if err != nil || len(els) != 1 {
		t.Errorf("schema-shaped reply: %d items, %v", len(els), err)
	}
}
