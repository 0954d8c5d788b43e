package memcapture

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

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
}

// build validates the classifier's items against the store as listed (g,
// heads) and turns the usable ones into memories ready to write, in order.
// Every rule of the design's validation list is applied here:
//
//   - an item that is not an object, beyond the per-pass limit, with an
//     unknown scope or category, or with empty or oversized content is
//     skipped;
//   - secrets in the content are redacted;
//   - content equal (ignoring case and white space) to a head in the same
//     scope, or to an earlier item, is skipped as a duplicate;
//   - supersedes of an id that does not exist is cleared (version 1); of a
//     superseded memory, or of a head an earlier item already supersedes, is
//     re-pointed to the newest version, so chains never fork;
//   - a new version is predecessor + 1 and carries the predecessor's edges
//     forward (memcore.NewVersion);
//   - related edges with an unknown relationship, to ids that do not exist,
//     or into the memory's own chain are dropped, and duplicates merged;
//   - the result must pass memcore's Validate.
func (p *Pipeline) build(elems []json.RawMessage, g *memcore.Graph, heads []*memcore.MemoryFile, ev TriggerEvent, log zerolog.Logger) []*memcore.MemoryFile {
	seen := map[memcore.Scope]map[string]bool{}
	for _, h := range heads {
		if seen[h.Meta.Scope] == nil {
			seen[h.Meta.Scope] = map[string]bool{}
		}
		seen[h.Meta.Scope][normalize(h.Content)] = true
	}
	created := map[string]*memcore.MemoryFile{}   // id → memory made in this pass
	successor := map[string]*memcore.MemoryFile{} // id → the memory of this pass superseding it
	now := p.now()
	var out []*memcore.MemoryFile

	for i, raw := range elems {
		if i >= p.cfg.maxMemoriesPerPass {
			p.stats.invalid.Add(uint64(len(elems) - i))
			log.Warn().Int("items", len(elems)).Int("limit", p.cfg.maxMemoriesPerPass).Msg("memcapture: too many items in one reply (rest skipped)")
			break
		}
		var it replyItem
		if err := json.Unmarshal(raw, &it); err != nil {
			p.stats.invalid.Add(1)
			log.Debug().Err(err).Int("item", i).Msg("memcapture: item is not a memory object (skipped)")
			continue
		}
		scope := memcore.Scope(strings.ToLower(strings.TrimSpace(it.Scope)))
		category := memcore.Category(strings.ToLower(strings.TrimSpace(it.Category)))
		content := strings.TrimSpace(it.Content)
		switch {
		case !scope.Valid():
			p.skipInvalid(log, i, "unknown scope", it.Scope)
			continue
		case !category.Valid():
			p.skipInvalid(log, i, "unknown category", it.Category)
			continue
		case content == "":
			p.skipInvalid(log, i, "empty content", "")
			continue
		case len(content) > p.cfg.maxContentBytes:
			p.skipInvalid(log, i, "oversized content", "")
			continue
		case !utf8.ValidString(content):
			p.skipInvalid(log, i, "content is not UTF-8", "")
			continue
		}

		content, redactions := redact.Text(content)
		key := normalize(content)
		if seen[scope][key] {
			p.stats.duplicates.Add(1)
			log.Debug().Int("item", i).Msg("memcapture: item repeats an existing memory (skipped)")
			continue
		}

		var pred *memcore.MemoryFile
		if id := cleanID(it.Supersedes); id != "" {
			if old, ok := g.Memory(id); ok {
				pred, _ = g.Head(old.Meta.ID)
				for successor[pred.Meta.ID] != nil {
					pred = successor[pred.Meta.ID]
				}
			} else {
				p.stats.edgesDropped.Add(1)
				log.Debug().Str("supersedes", clipRunes(it.Supersedes, 80)).Msg("memcapture: supersedes names no stored memory (cleared)")
			}
		}

		var m *memcore.MemoryFile
		if pred != nil {
			m = memcore.NewVersion(pred, ev.SessionID, ev.Kind)
		} else {
			m = &memcore.MemoryFile{Meta: memcore.MemoryMeta{
				ID: memcore.NewMemoryID(), Version: 1, SessionID: ev.SessionID, Trigger: ev.Kind,
			}}
		}
		m.Meta.CreatedAt, m.Meta.UpdatedAt = now, now
		m.Meta.Scope, m.Meta.Category = scope, category
		m.Content = content

		// The memory's own chain: links into it are the supersedes link's
		// business, not edges.
		ownChain := map[string]bool{m.Meta.ID: true}
		for c := pred; c != nil; {
			if ownChain[c.Meta.ID] {
				break
			}
			ownChain[c.Meta.ID] = true
			var next *memcore.MemoryFile
			if c.Meta.Supersedes != nil {
				if n, ok := created[*c.Meta.Supersedes]; ok {
					next = n
				} else if n, ok := g.Memory(*c.Meta.Supersedes); ok {
					next = n
				}
			}
			c = next
		}
		exists := func(id string) bool {
			_, inStore := g.Memory(id)
			return inStore || created[id] != nil
		}
		type edgeKey struct {
			id  string
			rel memcore.Relationship
		}
		edges := map[edgeKey]bool{}
		var related []memcore.RelatedMemory
		add := func(id string, rel memcore.Relationship, carried bool) {
			switch {
			case rel != memcore.RelationshipRefines && rel != memcore.RelationshipContradicts && rel != memcore.RelationshipRelatesTo:
			case !exists(id):
			case ownChain[id]:
			default:
				if k := (edgeKey{id, rel}); !edges[k] {
					edges[k] = true
					related = append(related, memcore.RelatedMemory{ID: id, Relationship: rel})
				}
				return
			}
			if !carried {
				p.stats.edgesDropped.Add(1)
				log.Debug().Str("id", clipRunes(id, 80)).Str("relationship", clipRunes(string(rel), 40)).Msg("memcapture: related edge dropped")
			}
		}
		for _, r := range m.Meta.Related { // carried forward from the predecessor
			add(r.ID, r.Relationship, true)
		}
		for _, r := range it.Related {
			add(cleanID(r.ID), memcore.Relationship(strings.ToLower(strings.TrimSpace(r.Relationship))), false)
		}
		m.Meta.Related = related

		if err := m.Validate(); err != nil {
			p.stats.invalid.Add(1)
			log.Warn().Err(err).Int("item", i).Msg("memcapture: memory fails validation (skipped)")
			continue
		}
		if redactions > 0 {
			p.stats.redactions.Add(uint64(redactions))
			log.Info().Int("secrets", redactions).Str("id", m.Meta.ID).Msg("memcapture: secrets redacted from a memory")
		}
		if seen[scope] == nil {
			seen[scope] = map[string]bool{}
		}
		seen[scope][key] = true
		created[m.Meta.ID] = m
		if pred != nil {
			successor[pred.Meta.ID] = m
		}
		out = append(out, m)
	}
	return out
}

func (p *Pipeline) skipInvalid(log zerolog.Logger, i int, why, value string) {
	p.stats.invalid.Add(1)
	log.Debug().Int("item", i).Str("value", clipRunes(value, 80)).Msg("memcapture: item skipped: " + why)
}

// cleanID tidies an id as a model may write it: spaces, the brackets of
// the prompt's list, upper case.
func cleanID(s string) string {
	return strings.ToLower(strings.Trim(strings.TrimSpace(s), "[] \t"))
}

// normalize is the form in which two contents are compared for duplicates:
// lower case, runs of white space as one space, no leading or trailing
// space.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
