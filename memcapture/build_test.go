package memcapture

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// seeds are the memories every validation case starts from:
// v1 ("Uses spaces.", relates-to x) superseded by v2 ("Uses tabs.", carrying
// that edge and refining y); x and y are unrelated heads.
type seeds struct {
	v1, v2, x, y *memcore.MemoryFile // the repository's
	u            *memcore.MemoryFile // the user's
}

func (s seeds) all() []*memcore.MemoryFile { return []*memcore.MemoryFile{s.v1, s.v2, s.x, s.y, s.u} }

func seedChain(t *testing.T, store memcore.MemoryStore) seeds {
	var s seeds
	s.x = seed(t, store, "Deploys happen on Tuesdays.", memcore.ScopeRepo, memcore.CategoryArchitecturalDecisions, t0, nil)
	s.y = seed(t, store, "Releases are tagged by CI.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0.Add(time.Minute), nil)
	s.v1 = seed(t, store, "Uses spaces.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0.Add(2*time.Minute), nil,
		memcore.RelatedMemory{ID: s.x.Meta.ID, Relationship: memcore.RelationshipRelatesTo})
	s.v2 = seed(t, store, "Uses tabs.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0.Add(3*time.Minute), s.v1,
		memcore.RelatedMemory{ID: s.y.Meta.ID, Relationship: memcore.RelationshipRefines})
	s.u = seed(t, store, "Works in the morning.", memcore.ScopeUser, memcore.CategoryUserFacts, t0.Add(4*time.Minute), nil)
	return s
}

func edge(id string, rel memcore.Relationship) memcore.RelatedMemory {
	return memcore.RelatedMemory{ID: id, Relationship: rel}
}

func rel(id, relationship string) map[string]string {
	return map[string]string{"id": id, "relationship": relationship}
}

// item makes a reply item in scope repo, category project-conventions,
// with extra fields set.
func item(content string, kv ...any) mem {
	m := mem{"content": content, "scope": "repo", "category": "project-conventions"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

const unknownID = "mem_00000000-0000-4000-8000-000000000000"

func TestValidation(t *testing.T) {
	type want struct {
		written, invalid, duplicates, edgesDropped uint64
	}
	cases := []struct {
		name  string
		cfg   Config
		reply func(s seeds) string
		want  want
		check func(t *testing.T, s seeds, got []*memcore.MemoryFile)
	}{
		{name: "unknown scope", reply: func(seeds) string { return reply(item("A.", "scope", "global")) }, want: want{invalid: 1}},
		{name: "unknown category", reply: func(seeds) string { return reply(item("A.", "category", "misc")) }, want: want{invalid: 1}},
		{name: "missing scope", reply: func(seeds) string { return reply(mem{"content": "A.", "category": "patterns"}) }, want: want{invalid: 1}},
		{name: "empty content", reply: func(seeds) string { return reply(item(" \n\t "), item("")) }, want: want{invalid: 2}},
		{name: "oversized content", cfg: Config{MaxContentBytes: 100},
			reply: func(seeds) string { return reply(item(strings.Repeat("x", 101)), item(strings.Repeat("y", 100))) },
			want:  want{written: 1, invalid: 1}},
		{name: "control characters",
			reply: func(seeds) string {
				return reply(item("Uses \u0000 tabs."), item("Colours \u001b[31mred\u001b[0m."), item("Deletes\u007f."), item("Next\u0085line."),
					item("Keeps\ttabs and\nlines."))
			},
			want: want{written: 1, invalid: 4}},
		{name: "bidirectional and tag characters",
			reply: func(seeds) string {
				return reply(item("Admins are \u202eenon\u202c."), item("Checks \u2066x\u2069 first."), item("Marks\u200fhere."),
					item("Prefers tabs.\U000E0052\U000E0075\U000E006E"), item("Stray cancel tag\U000E007F."),
					item("Ships from \U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F on Fridays."),
					item("The team 👨\u200d👩\u200d👧 ships on Fridays."), item("کاربر فارسی می\u200cنویسد."),
					item("המשתמש מעדיף tabs; يفضل المستخدم."))
			},
			want: want{written: 4, invalid: 5}},
		{name: "invisible characters dropped",
			reply: func(seeds) string {
				return reply(item("Uses pass\u200bword auth."), item("\ufeffStarts with a mark."), item("Word\u2060joined, f\u2061x."),
					item("\u200b\ufeff"), item("Hidden \u200b\U000E0041 tag."),
					item("The token is ghp_\u200bAbCdEfGhIjKlMnOpQrStUvWxYz0123456789."))
			},
			want: want{written: 4, invalid: 2},
			check: func(t *testing.T, _ seeds, got []*memcore.MemoryFile) {
				var contents []string
				for _, m := range got {
					contents = append(contents, m.Content)
				}
				slices.Sort(contents)
				// The token a zero-width space split is one again, and redacted.
				want := []string{"Starts with a mark.", "The token is [REDACTED].", "Uses password auth.", "Wordjoined, fx."}
				if !slices.Equal(contents, want) {
					t.Errorf("contents %q, want %q", contents, want)
				}
			}},
		{name: "line breaks",
			reply: func(seeds) string { return reply(item("Line one.\r\nLine two.\rLine three.")) },
			want:  want{written: 1},
			check: func(t *testing.T, _ seeds, got []*memcore.MemoryFile) {
				if got[0].Content != "Line one.\nLine two.\nLine three." {
					t.Errorf("content %q, want its line breaks as \\n", got[0].Content)
				}
			}},
		{name: "not an object", reply: func(seeds) string { return `[` + one + `, "stray", {"content": 5}]` },
			want: want{written: 1, invalid: 2}},
		{name: "too many items", cfg: Config{MaxMemoriesPerPass: 2},
			reply: func(seeds) string { return reply(item("A."), item("B."), item("C.")) }, want: want{written: 2, invalid: 1}},
		{name: "enums tolerate case and spaces",
			reply: func(seeds) string { return reply(item("A.", "scope", " Repo ", "category", "PATTERNS")) },
			want:  want{written: 1},
			check: func(t *testing.T, _ seeds, got []*memcore.MemoryFile) {
				if got[0].Meta.Scope != memcore.ScopeRepo || got[0].Meta.Category != memcore.CategoryPatterns {
					t.Errorf("scope %q category %q", got[0].Meta.Scope, got[0].Meta.Category)
				}
			}},
		{name: "unknown relationship",
			reply: func(s seeds) string {
				return reply(item("A.", "related", []any{rel(s.x.Meta.ID, "depends-on"), rel(s.y.Meta.ID, "supersedes"), rel(s.x.Meta.ID, "refines")}))
			},
			want: want{written: 1, edgesDropped: 2},
			check: func(t *testing.T, s seeds, got []*memcore.MemoryFile) {
				wantRelated(t, got[0], edge(s.x.Meta.ID, memcore.RelationshipRefines))
			}},
		{name: "links to ids that do not exist",
			reply: func(s seeds) string {
				return reply(item("A.", "related", []any{rel(unknownID, "refines"), rel("not-an-id", "relates-to"), rel("", "relates-to")}))
			},
			want:  want{written: 1, edgesDropped: 3},
			check: func(t *testing.T, _ seeds, got []*memcore.MemoryFile) { wantRelated(t, got[0]) }},
		{name: "links across scopes dropped",
			reply: func(s seeds) string {
				return reply(
					item("A.", "related", []any{rel(s.u.Meta.ID, "relates-to"), rel(s.x.Meta.ID, "refines")}),
					item("Starts with the hardest task.", "scope", "user", "category", "user-facts",
						"related", []any{rel(s.x.Meta.ID, "relates-to"), rel(s.u.Meta.ID, "refines")}))
			},
			want: want{written: 2, edgesDropped: 2},
			check: func(t *testing.T, s seeds, got []*memcore.MemoryFile) {
				for _, m := range got {
					if m.Meta.Scope == memcore.ScopeRepo {
						wantRelated(t, m, edge(s.x.Meta.ID, memcore.RelationshipRefines))
					} else {
						wantRelated(t, m, edge(s.u.Meta.ID, memcore.RelationshipRefines))
					}
				}
			}},
		{name: "self links into the own chain dropped",
			reply: func(s seeds) string {
				return reply(item("Uses tabs, width 8.", "supersedes", s.v2.Meta.ID,
					"related", []any{rel(s.v2.Meta.ID, "refines"), rel(s.v1.Meta.ID, "contradicts")}))
			},
			want: want{written: 1, edgesDropped: 2},
			check: func(t *testing.T, s seeds, got []*memcore.MemoryFile) {
				wantRelated(t, got[0], s.v2.Meta.Related...)
			}},
		{name: "supersedes unknown id cleared",
			reply: func(s seeds) string {
				return reply(item("A.", "supersedes", unknownID), item("B.", "supersedes", "mem_123"))
			},
			want: want{written: 2, edgesDropped: 2},
			check: func(t *testing.T, _ seeds, got []*memcore.MemoryFile) {
				for _, m := range got {
					if m.Meta.Supersedes != nil || m.Meta.Version != 1 {
						t.Errorf("%q: supersedes %v version %d; want none, 1", m.Content, m.Meta.Supersedes, m.Meta.Version)
					}
				}
			}},
		{name: "supersedes of a superseded memory re-pointed to the head",
			reply: func(s seeds) string { return reply(item("Uses tabs, width 4.", "supersedes", s.v1.Meta.ID)) },
			want:  want{written: 1},
			check: func(t *testing.T, s seeds, got []*memcore.MemoryFile) {
				wantVersion(t, got[0], s.v2, 3)
				wantRelated(t, got[0], s.v2.Meta.Related...)
			}},
		{name: "model-written id forms accepted",
			reply: func(s seeds) string {
				return reply(item("Uses tabs, width 4.", "supersedes", " ["+strings.ToUpper(s.v2.Meta.ID)+"] "))
			},
			want:  want{written: 1},
			check: func(t *testing.T, s seeds, got []*memcore.MemoryFile) { wantVersion(t, got[0], s.v2, 3) }},
		{name: "version and carried-forward edges, deduplicated",
			reply: func(s seeds) string {
				return reply(item("Uses tabs, width 4.", "supersedes", s.v2.Meta.ID, "related", []any{
					rel(s.x.Meta.ID, "relates-to"), rel(s.y.Meta.ID, "refines"), rel(s.y.Meta.ID, "contradicts"), rel(s.y.Meta.ID, "contradicts")}))
			},
			want: want{written: 1},
			check: func(t *testing.T, s seeds, got []*memcore.MemoryFile) {
				wantVersion(t, got[0], s.v2, 3)
				wantRelated(t, got[0], append(slices.Clone(s.v2.Meta.Related), edge(s.y.Meta.ID, memcore.RelationshipContradicts))...)
			}},
		{name: "scope and category of the new version are the classifier's",
			reply: func(s seeds) string {
				return reply(item("Always uses tabs, in every project.", "supersedes", s.v2.Meta.ID, "scope", "user", "category", "coding-preferences"))
			},
			want: want{written: 1},
			check: func(t *testing.T, s seeds, got []*memcore.MemoryFile) {
				wantVersion(t, got[0], s.v2, 3)
				if got[0].Meta.Scope != memcore.ScopeUser || got[0].Meta.Category != memcore.CategoryCodingPreferences {
					t.Errorf("scope %q category %q", got[0].Meta.Scope, got[0].Meta.Category)
				}
			}},
		{name: "duplicate of a head in the same scope",
			reply: func(seeds) string {
				return reply(item("  uses\n  TABS. "), item("deploys happen on tuesdays.", "category", "patterns"))
			},
			want: want{duplicates: 2}},
		{name: "same content in the other scope is not a duplicate",
			reply: func(seeds) string { return reply(item("Uses tabs.", "scope", "user")) }, want: want{written: 1}},
		{name: "content of a superseded version is not a duplicate",
			reply: func(s seeds) string { return reply(item("Uses spaces.", "supersedes", s.v2.Meta.ID)) },
			want:  want{written: 1},
			check: func(t *testing.T, s seeds, got []*memcore.MemoryFile) { wantVersion(t, got[0], s.v2, 3) }},
		{name: "duplicate within one reply",
			reply: func(seeds) string { return reply(item("Runs gofumpt."), item("runs   GOFUMPT.")) },
			want:  want{written: 1, duplicates: 1}},
		{name: "two items superseding one head do not fork",
			reply: func(s seeds) string {
				return reply(item("Uses tabs, width 4.", "supersedes", s.v2.Meta.ID), item("Uses tabs, width 2.", "supersedes", s.v2.Meta.ID),
					item("Uses tabs, width 3.", "supersedes", s.v1.Meta.ID))
			},
			want: want{written: 3},
			check: func(t *testing.T, s seeds, got []*memcore.MemoryFile) {
				byContent := map[string]*memcore.MemoryFile{}
				for _, m := range got {
					byContent[m.Content] = m
				}
				w4, w2, w3 := byContent["Uses tabs, width 4."], byContent["Uses tabs, width 2."], byContent["Uses tabs, width 3."]
				wantVersion(t, w4, s.v2, 3)
				wantVersion(t, w2, w4, 4)
				wantVersion(t, w3, w2, 5)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
				s := seedChain(t, store)
				llm := newLLM(t, always(c.reply(s)))
				p := startPipeline(t, llm, store, c.cfg)
				p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("x")})
				st := passes(t, p, 1)
				got := newMemories(t, store, s.all()...)
				if st.MemoriesWritten != c.want.written || uint64(len(got)) != c.want.written || st.Invalid != c.want.invalid ||
					st.Duplicates != c.want.duplicates || st.EdgesDropped != c.want.edgesDropped {
					t.Fatalf("written %d (stored %d), invalid %d, duplicates %d, edges dropped %d; want %+v",
						st.MemoriesWritten, len(got), st.Invalid, st.Duplicates, st.EdgesDropped, c.want)
				}
				for _, m := range listAll(t, store) {
					if err := m.Validate(); err != nil {
						t.Errorf("stored memory fails validation: %v", err)
					}
				}
				if all := listAll(t, store); len(memcore.NewGraph(all).Heads()) != len(all)-countSuperseding(all) {
					t.Errorf("a chain forked")
				}
				if c.check != nil {
					c.check(t, s, got)
				}
			})
		})
	}
}

// countSuperseding counts memories with a supersedes link: in a store
// without forks, heads = memories - superseding ones.
func countSuperseding(ms []*memcore.MemoryFile) int {
	n := 0
	for _, m := range ms {
		if m.Meta.Supersedes != nil {
			n++
		}
	}
	return n
}

func wantVersion(t *testing.T, m, pred *memcore.MemoryFile, version int) {
	t.Helper()
	if m == nil {
		t.Fatal("memory missing")
	}
	if m.Meta.Supersedes == nil || *m.Meta.Supersedes != pred.Meta.ID || m.Meta.Version != version {
		t.Errorf("%q: supersedes %v version %d; want %s version %d", m.Content, m.Meta.Supersedes, m.Meta.Version, pred.Meta.ID, version)
	}
}

func wantRelated(t *testing.T, m *memcore.MemoryFile, want ...memcore.RelatedMemory) {
	t.Helper()
	if !slices.Equal(m.Meta.Related, want) {
		t.Errorf("%q: related = %v, want %v", m.Content, m.Meta.Related, want)
	}
}

func TestStoredTriggerSessionAndTime(t *testing.T) {
	eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
		at := time.Date(2025, 3, 1, 12, 30, 45, 999, time.FixedZone("X", 3600))
		llm := newLLM(t, fake.LLMConfig{Replies: []string{reply(item("From a turn.")), reply(item("From a compaction."))}})
		p := startPipeline(t, llm, store, Config{Clock: func() time.Time { return at }})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("a"), SessionID: "session-1"})
		passes(t, p, 1)
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCompaction, Messages: win("b"), SessionID: "session-2"})
		passes(t, p, 2)
		want := map[string]struct {
			trigger memcore.Trigger
			session string
		}{"From a turn.": {memcore.TriggerCadence, "session-1"}, "From a compaction.": {memcore.TriggerCompaction, "session-2"}}
		got := listAll(t, store)
		if len(got) != 2 {
			t.Fatalf("stored %d memories, want 2", len(got))
		}
		for _, m := range got {
			w := want[m.Content]
			if m.Meta.Trigger != w.trigger || m.Meta.SessionID != w.session || !m.Meta.CreatedAt.Equal(at.Truncate(time.Second)) ||
				m.Meta.CreatedAt.Location() != time.UTC || m.Meta.Version != 1 || m.Meta.Supersedes != nil {
				t.Errorf("%q: %+v", m.Content, m.Meta)
			}
		}
	})
}

// A retired (forgotten) chain is not offered to the classifier, and a reply
// that names it anyway neither supersedes it, links to it, nor is held a
// duplicate of it.
func TestRetiredChainsAreInvisibleToCapture(t *testing.T) {
	eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
		live := seed(t, store, "Prefers table-driven tests.", memcore.ScopeUser, memcore.CategoryCodingPreferences, t0, nil)
		old := seed(t, store, "Uses SQLite for local development.", memcore.ScopeRepo, memcore.CategoryArchitecturalDecisions, t0.Add(time.Minute), nil)
		retired := memcore.NewVersion(old, "forget", memcore.TriggerManual)
		retired.Content, retired.Meta.Retired, retired.Meta.RetiredReason = old.Content, true, "moved to Postgres"
		if err := store.Write(context.Background(), retired); err != nil {
			t.Fatal(err)
		}
		again := item("Uses SQLite for local development.")
		again["scope"], again["category"], again["supersedes"] = "repo", "architectural-decisions", retired.Meta.ID
		linked := item("Runs the linters before every commit.")
		linked["related"] = []mem{{"id": old.Meta.ID, "relationship": "relates-to"}}
		llm := newLLM(t, fake.LLMConfig{Replies: []string{reply(again, linked)}})
		p := startPipeline(t, llm, store, Config{})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("We use SQLite locally again; lint before commits.")})
		passes(t, p, 1)

		if got := listedIDs(llm.Requests()[0]); len(got) != 1 || got[0] != live.Meta.ID {
			t.Errorf("listed %v to the classifier, want only the live memory %s", got, live.Meta.ID)
		}
		written := newMemories(t, store, live, old, retired)
		if len(written) != 2 {
			t.Fatalf("wrote %d memories, want 2 (the repeat of a forgotten memory is not a duplicate)", len(written))
		}
		for _, m := range written {
			if m.Meta.Supersedes != nil || m.Meta.Version != 1 {
				t.Errorf("%q is version %d of a chain: a retired chain must not be continued by capture", m.Content, m.Meta.Version)
			}
			if len(m.Meta.Related) != 0 {
				t.Errorf("%q links to %v: links into a retired chain must be dropped", m.Content, m.Meta.Related)
			}
		}
	})
}
