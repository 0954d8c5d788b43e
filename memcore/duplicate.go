package memcore

import (
	"strings"
	"unicode"
)

// NormalizeContent is the form in which two memories' texts are compared
// for duplicates: lower case, each run of white space one space, none
// leading or trailing.
func NormalizeContent(s string) string {
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

// SameContent reports whether a and b say the same: equal once
// normalised ([NormalizeContent]), that is ignoring case and white space.
func SameContent(a, b string) bool { return NormalizeContent(a) == NormalizeContent(b) }

// Duplicate returns the head of g that m repeats, or nil: the head of a
// chain that is not retired (a forgotten text may be remembered again),
// in m's scope, whose content is the same as m's ([SameContent]), pending
// heads included. The head of the chain m supersedes counts only when m
// changes nothing else of it either (its category, status and retirement):
// a new version may keep the text to change the category, or to approve a
// pending memory. Every write path asks it before writing a memory; the
// [Writer] asks the same of the head it builds on after a conflict.
func (g *Graph) Duplicate(m *MemoryFile) *MemoryFile {
	var own *MemoryFile
	if m.Meta.Supersedes != nil {
		own, _ = g.Head(*m.Meta.Supersedes)
	}
	for _, h := range g.contentIndex()[contentKey{m.Meta.Scope, NormalizeContent(m.Content)}] {
		if h.Meta.ID == m.Meta.ID {
			continue
		}
		if h != own || repeats(m, h) {
			return h
		}
	}
	return nil
}

// contentKey indexes the heads of a graph by scope and normalised text.
type contentKey struct {
	scope Scope
	text  string
}

// contentIndex returns the heads of chains that are not retired by scope
// and normalised text, in the order of Heads; it is built on first use.
func (g *Graph) contentIndex() map[contentKey][]*MemoryFile {
	g.contentOnce.Do(func() {
		g.content = make(map[contentKey][]*MemoryFile)
		for _, h := range g.Heads() {
			if !h.Meta.Retired {
				k := contentKey{h.Meta.Scope, NormalizeContent(h.Content)}
				g.content[k] = append(g.content[k], h)
			}
		}
	})
	return g.content
}
