package memcapture

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/rs/zerolog"
)

// replyItem is one memory as the classifier returns it. Missing fields and nulls
// read as empty.
type replyItem struct {
	Content    string `json:"content"`
	Scope      string `json:"scope"`
	Category   string `json:"category"`
	Supersedes string `json:"supersedes"`
	Related    []struct {
		ID           string `json:"id"`
		Relationship string `json:"relationship"`
	} `json:"related"`
	Evidence replyEvidence `json:"evidence"`
	// Anchors are the paths and symbols of the repository the memory
	// names, as the model read them; "" for the part it does not give.
	Anchors []struct {
		Path   string `json:"path"`
		Symbol string `json:"symbol"`
	} `json:"anchors"`
}

// build validates the classifier's items against the store as listed (g)
// and turns the usable ones into memories ready to write, in order:
//
//   - an item that is not an object, beyond the per-pass limit, with an
//     unknown scope or category, or with empty or oversized content is
//     skipped;
//   - secrets in the content are redacted;
//   - content equal (ignoring case and white space) to a head in the same
//     scope (memcore's Graph.Duplicate, which also says when a new version
//     of a chain repeats its head), or to an earlier item, is skipped as a
//     duplicate;
//   - supersedes of an id that does not exist is cleared (version 1); of a
//     superseded memory, or of a head an earlier item already supersedes, is
//     re-pointed to the newest version, so chains never fork;
//   - a new version is predecessor + 1 and carries the predecessor's edges
//     forward (memcore.NewVersion);
//   - related edges with an unknown relationship, to ids that do not exist,
//     into the memory's own chain, or to a memory of the other scope (a
//     repository's teammates do not have the user's memories, the user's
//     other repositories do not have this one's) are dropped, and
//     duplicates merged;
//   - who stated it (the source) and its evidence are checked against the
//     window (provenanceOf);
//   - anchors that are not valid (memcore.Anchor.Validate), and every
//     anchor of a user-scope memory, are dropped; the others are kept as
//     the model's proposals, for the store to check against the tree (see
//     Pipeline's documentation);
//   - the result must pass memcore's Validate.
//
// Each skipped item and dropped link is counted and logged.
func (p *Pipeline) build(elems []json.RawMessage, g *memcore.Graph, window []memcore.Message, ev TriggerEvent, log zerolog.Logger) []*memcore.MemoryFile {
	b := &passBuilder{
		p: p, g: g, window: window, ev: ev, log: log, now: p.now(),
		seen:      map[memcore.Scope]map[string]bool{},
		created:   map[string]*memcore.MemoryFile{},
		successor: map[string]*memcore.MemoryFile{},
	}
	var out []*memcore.MemoryFile
	for i, raw := range elems {
		if i >= p.cfg.maxMemoriesPerPass {
			p.stats.invalid.Add(uint64(len(elems) - i))
			log.Warn().Int("items", len(elems)).Int("limit", p.cfg.maxMemoriesPerPass).Msg("memcapture: too many items in one reply (rest skipped)")
			break
		}
		if m := b.item(i, raw); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// passBuilder is the state of build across the items of one reply.
type passBuilder struct {
	p *Pipeline
	g *memcore.Graph
	// window is the redacted window the classifier saw, where the
	// evidence of each memory is looked for.
	window []memcore.Message
	ev     TriggerEvent
	log    zerolog.Logger
	now    time.Time
	// seen holds, by scope, the normalized content of the memories made
	// so far, to skip an item repeating an earlier one (memcore's
	// Graph.Duplicate skips those repeating a stored memory).
	seen map[memcore.Scope]map[string]bool
	// created maps the id of each memory made in this pass to it.
	created map[string]*memcore.MemoryFile
	// successor maps an id to the memory of this pass superseding it.
	successor map[string]*memcore.MemoryFile
}

// itemFields are the checked fields of a reply item.
type itemFields struct {
	scope    memcore.Scope
	category memcore.Category
	content  string
}

// item turns reply item i into a memory, or returns nil if it is skipped.
func (b *passBuilder) item(i int, raw json.RawMessage) *memcore.MemoryFile {
	var it replyItem
	if err := json.Unmarshal(raw, &it); err != nil {
		b.p.stats.invalid.Add(1)
		b.log.Debug().Err(redactErr(err)).Int("item", i).Msg("memcapture: item is not a memory object (skipped)")
		return nil
	}
	f, ok := b.fields(i, it)
	if !ok {
		return nil
	}
	content, redactions := redact.Text(f.content)
	key := memcore.NormalizeContent(content)
	if b.seen[f.scope][key] {
		b.p.stats.duplicates.Add(1)
		b.log.Debug().Int("item", i).Msg("memcapture: item repeats an earlier item (skipped)")
		return nil
	}
	pred := b.predecessor(it.Supersedes)
	m := b.newMemory(pred, f.scope, f.category, content)
	if dup := b.g.Duplicate(m); dup != nil {
		b.p.stats.duplicates.Add(1)
		b.log.Debug().Int("item", i).Str("memory", dup.Meta.ID).Msg("memcapture: item repeats an existing memory (skipped)")
		return nil
	}
	m.Meta.Related = b.edges(m, pred, it)
	b.provenance(i, m, it.Evidence)
	m.Meta.Anchors = b.anchors(i, f.scope, it)
	if err := m.Validate(); err != nil {
		b.p.stats.invalid.Add(1)
		b.log.Warn().Err(redactErr(err)).Int("item", i).Msg("memcapture: memory fails validation (skipped)")
		return nil
	}
	if redactions > 0 {
		b.p.stats.redactions.Add(uint64(redactions))
		b.log.Info().Int("secrets", redactions).Str("id", m.Meta.ID).Msg("memcapture: secrets redacted from a memory")
	}
	b.remember(f.scope, key)
	b.created[m.Meta.ID] = m
	if pred != nil {
		b.successor[pred.Meta.ID] = m
	}
	return m
}

// fields checks and tidies the scope, category and content of item i
// (enums in any case and spacing), reporting false, counted and logged, if
// one is unusable.
func (b *passBuilder) fields(i int, it replyItem) (itemFields, bool) {
	f := itemFields{
		scope:    memcore.Scope(strings.ToLower(strings.TrimSpace(it.Scope))),
		category: memcore.Category(strings.ToLower(strings.TrimSpace(it.Category))),
		content:  strings.TrimSpace(dropInvisible(lineBreaks(it.Content))),
	}
	why, value := "", ""
	switch {
	case !f.scope.Valid():
		why, value = "unknown scope", it.Scope
	case !f.category.Valid():
		why, value = "unknown category", it.Category
	case f.content == "":
		why = "empty content"
	case len(f.content) > b.p.cfg.maxContentBytes:
		why = "oversized content"
	default:
		// Not UTF-8, a control, bidirectional or tag character: the
		// command refuses the same (the invisible ones are gone).
		err := memcore.CheckText(f.content)
		if err == nil {
			return f, true
		}
		why = "content holds " + err.Error()
	}
	b.p.stats.invalid.Add(1)
	b.log.Debug().Int("item", i).Str("value", redactStr(clipRunes(value, 80))).Msg("memcapture: item skipped: " + why)
	return f, false
}

// dropInvisible is s without the characters memcore.CheckText refuses as
// invisible (memcore.CharInvisible: the zero-width space U+200B, U+FEFF,
// the word joiner U+2060, the invisible operators U+2061–U+2064), which
// text pasted from a web page or a document carries: they show as nothing,
// so dropping them changes nothing a person reads, and losing the whole
// memory for one would be a surprise; it also lets the redaction see a
// secret a zero-width space split. The other characters CheckText
// refuses stay, so the memory is skipped: a control character, a
// bidirectional override or tag characters spelling text a model reads
// and a person does not see are not an accident of copying but an attack,
// and what they hide cannot be told.
func dropInvisible(s string) string {
	return memcore.EscapeText(s, func(c *memcore.CharError) string {
		switch c.Kind() {
		case memcore.CharInvisible:
			return ""
		case memcore.CharNotUTF8:
			return string([]byte{c.Byte})
		}
		return string(c.Rune)
	})
}

// lineBreaks is s with its line breaks as a memory file has them: "\r\n"
// and a lone "\r" become "\n".
func lineBreaks(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// predecessor resolves an item's supersedes id to the memory the new one
// must supersede: the newest version of that id's chain, counting the
// memories this pass has already made, so chains never fork. It returns nil
// for no supersedes, and for an id that names no stored memory (a link
// dropped, counted and logged).
func (b *passBuilder) predecessor(supersedes string) *memcore.MemoryFile {
	id := cleanID(supersedes)
	if id == "" {
		return nil
	}
	old, ok := b.g.Memory(id)
	if !ok {
		b.p.stats.edgesDropped.Add(1)
		b.log.Debug().Str("supersedes", redactStr(clipRunes(supersedes, 80))).Msg("memcapture: supersedes names no stored memory (cleared)")
		return nil
	}
	pred, _ := b.g.Head(old.Meta.ID)
	for b.successor[pred.Meta.ID] != nil {
		pred = b.successor[pred.Meta.ID]
	}
	return pred
}

// newMemory makes the memory of an item: the next version of pred (with
// pred's edges carried forward), or a first version when pred is nil.
func (b *passBuilder) newMemory(pred *memcore.MemoryFile, scope memcore.Scope, category memcore.Category, content string) *memcore.MemoryFile {
	var m *memcore.MemoryFile
	if pred != nil {
		m = memcore.NewVersion(pred, b.ev.SessionID, b.ev.Kind)
	} else {
		m = &memcore.MemoryFile{Meta: memcore.MemoryMeta{
			ID: memcore.NewMemoryID(), Version: 1, SessionID: b.ev.SessionID, Trigger: b.ev.Kind,
		}}
	}
	m.Meta.CreatedAt, m.Meta.UpdatedAt = b.now, b.now
	m.Meta.Scope, m.Meta.Category = scope, category
	m.Content = content
	return m
}

// ownChain returns the ids of m's version chain: m and its predecessors,
// stored or made in this pass. Links into it are the supersedes link's
// business, not edges.
func (b *passBuilder) ownChain(m, pred *memcore.MemoryFile) map[string]bool {
	own := map[string]bool{m.Meta.ID: true}
	for c := pred; c != nil && !own[c.Meta.ID]; {
		own[c.Meta.ID] = true
		var next *memcore.MemoryFile
		if c.Meta.Supersedes != nil {
			if n, ok := b.created[*c.Meta.Supersedes]; ok {
				next = n
			} else if n, ok := b.g.Memory(*c.Meta.Supersedes); ok {
				next = n
			}
		}
		c = next
	}
	return own
}

// edges returns m's related edges: those carried forward from pred, then
// the item's, without duplicates. An edge is kept if its relationship is
// an edge's, it points at a stored memory or one made in this pass, of m's
// scope, and not into m's own chain; each item edge dropped is counted and
// logged (carried edges that no longer hold are dropped silently).
func (b *passBuilder) edges(m, pred *memcore.MemoryFile, it replyItem) []memcore.RelatedMemory {
	own := b.ownChain(m, pred)
	kept := map[memcore.RelatedMemory]bool{}
	var related []memcore.RelatedMemory
	add := func(e memcore.RelatedMemory, carried bool) {
		t, stored := b.g.Memory(e.ID)
		if !stored {
			t = b.created[e.ID]
		}
		if e.Relationship.IsEdge() && t != nil && t.Meta.Scope == m.Meta.Scope && !own[e.ID] {
			if !kept[e] {
				kept[e] = true
				related = append(related, e)
			}
			return
		}
		if !carried {
			b.p.stats.edgesDropped.Add(1)
			b.log.Debug().Str("id", redactStr(clipRunes(e.ID, 80))).Str("relationship", redactStr(clipRunes(string(e.Relationship), 40))).
				Msg("memcapture: related edge dropped")
		}
	}
	for _, e := range m.Meta.Related {
		add(e, true)
	}
	for _, r := range it.Related {
		add(memcore.RelatedMemory{ID: cleanID(r.ID), Relationship: memcore.Relationship(strings.ToLower(strings.TrimSpace(r.Relationship)))}, false)
	}
	return related
}

// provenance records in m who stated it and where, from the evidence the
// classifier gave for item i (see provenanceOf); evidence not found in the
// window is counted and logged.
func (b *passBuilder) provenance(i int, m *memcore.MemoryFile, ev replyEvidence) {
	pv := provenanceOf(b.window, ev, m.Content, b.now)
	m.Meta.Source, m.Meta.Evidence = pv.source, pv.evidence
	if !pv.found {
		b.p.stats.evidenceNotFound.Add(1)
		b.log.Debug().Int("item", i).Str("id", m.Meta.ID).Msg("memcapture: the item's evidence is not in the conversation (source mixed)")
	}
}

// anchors returns the valid anchors of item i, tidied, each once; none for
// a user-scope memory, which holds in every repository. Each anchor
// dropped is logged.
func (b *passBuilder) anchors(i int, scope memcore.Scope, it replyItem) []memcore.Anchor {
	var out []memcore.Anchor
	for _, a := range it.Anchors {
		an := memcore.Anchor{Path: strings.TrimSpace(a.Path), Symbol: strings.Trim(strings.TrimSpace(a.Symbol), "`")}
		if an.Path == "" && an.Symbol == "" || slices.Contains(out, an) {
			continue
		}
		if err := an.Validate(); err != nil || scope != memcore.ScopeRepo {
			b.log.Debug().Int("item", i).Str("path", redactStr(clipRunes(an.Path, 80))).Str("symbol", redactStr(clipRunes(an.Symbol, 80))).
				Msg("memcapture: anchor dropped (not valid, or of a user-scope memory)")
			continue
		}
		out = append(out, an)
	}
	return out
}

// remember records normalized content as seen in scope.
func (b *passBuilder) remember(scope memcore.Scope, key string) {
	if b.seen[scope] == nil {
		b.seen[scope] = map[string]bool{}
	}
	b.seen[scope][key] = true
}

// cleanID tidies an id as a model may write it: spaces, the brackets of
// the prompt's list, upper case.
func cleanID(s string) string {
	return strings.ToLower(strings.Trim(strings.TrimSpace(s), "[] \t"))
}
