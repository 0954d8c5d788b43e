package workspace

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// Memory is one memory file as the operations report it: its metadata and
// content, where it is, and its place in its version chain. It encodes as
// the JSON object of the command's --json output.
type Memory struct {
	ID        string           `json:"id"`
	Scope     memcore.Scope    `json:"scope"`
	Category  memcore.Category `json:"category"`
	Version   int              `json:"version"`
	CreatedAt time.Time        `json:"created_at"`
	// UpdatedAt is nil when the file has no updated_at.
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
	// Supersedes is the id of the predecessor, "" for a first version.
	Supersedes string `json:"supersedes,omitempty"`
	Related    []Link `json:"related,omitempty"`
	SessionID  string `json:"session_id,omitempty"`
	Trigger    string `json:"trigger,omitempty"`
	// Retired marks a version that retires (forgets) its chain.
	Retired       bool   `json:"retired,omitempty"`
	RetiredReason string `json:"retired_reason,omitempty"`
	// Revives is true when the version supersedes a retired one: it
	// brought its forgotten chain back.
	Revives bool `json:"revives,omitempty"`
	// Source says who stated the memory: user, assistant, mixed, agent,
	// or unknown (a file that does not say).
	Source string `json:"source"`
	// EvidenceQuote and EvidenceAt are where in the conversation a
	// captured memory comes from: a short passage and the time of its
	// message.
	EvidenceQuote string     `json:"evidence_quote,omitempty"`
	EvidenceAt    *time.Time `json:"evidence_at,omitempty"`
	// Status is "pending" for a version that waits for a person's review
	// (forgemem review), "" for one in force; StatusReason says which
	// quarantine rule held it.
	Status       string `json:"status,omitempty"`
	StatusReason string `json:"status_reason,omitempty"`
	// RejectionReason is why review rejected the change this version
	// undoes: the reviewer's reason, on the version a rejection put back.
	RejectionReason string `json:"rejection_reason,omitempty"`
	// Title is the first non-blank line of the content.
	Title   string `json:"title"`
	Content string `json:"content"`
	// Anchors are the paths and symbols of the repository the memory is
	// about, with their state when it was written.
	Anchors []memcore.Anchor `json:"anchors,omitempty"`
	// Stale says why the memory may be outdated — its anchors' code moved
	// or went away — where the operation checked it (recall, search, show,
	// list --stale); "" otherwise.
	Stale string `json:"stale,omitempty"`
	// Path is the memory's file.
	Path string `json:"path"`
	// Head is true when the memory is the current version of its chain:
	// the one search and recall take (see memcore.Graph.Head).
	Head bool `json:"head"`
	// Parallel is true for a version on a branch of a fork that its chain
	// did not continue from — a change made alongside the current
	// version's, as when two branches that each changed the memory are
	// merged — which is not in force (memcore.PastVersion.Lost).
	Parallel bool `json:"parallel,omitempty"`
	// Forgotten is true when the memory's chain is retired (its head is a
	// retired version): it is neither recalled, searched nor listed by
	// default.
	Forgotten bool `json:"forgotten"`

	// File is the memory as memcore reads it.
	File *memcore.MemoryFile `json:"-"`
}

// Link is a typed edge of a memory's related list.
type Link struct {
	ID           string               `json:"id"`
	Relationship memcore.Relationship `json:"relationship"`
}

// view describes m, a member of g, stored in store.
func view(store *memcore.FileStore, g *memcore.Graph, m *memcore.MemoryFile) Memory {
	mt := m.Meta
	v := Memory{
		ID:              mt.ID,
		Scope:           mt.Scope,
		Category:        mt.Category,
		Version:         mt.Version,
		CreatedAt:       mt.CreatedAt,
		SessionID:       mt.SessionID,
		Trigger:         string(mt.Trigger),
		Retired:         mt.Retired,
		RetiredReason:   mt.RetiredReason,
		Source:          mt.Source.String(),
		Status:          string(mt.Status),
		StatusReason:    mt.StatusReason,
		RejectionReason: mt.RejectionReason,
		Title:           m.Title(),
		Content:         m.Content,
		Path:            filePath(store, m),
		Head:            isHead(g, m),
		Parallel:        isParallel(g, m),
		Forgotten:       g.IsRetired(mt.ID),
		Anchors:         mt.Anchors,
		File:            m,
	}
	if !mt.UpdatedAt.IsZero() {
		t := mt.UpdatedAt
		v.UpdatedAt = &t
	}
	if e := mt.Evidence; e != nil {
		v.EvidenceQuote = e.Quote
		if !e.At.IsZero() {
			t := e.At
			v.EvidenceAt = &t
		}
	}
	if mt.Supersedes != nil {
		v.Supersedes = *mt.Supersedes
		if p, ok := g.Memory(*mt.Supersedes); ok && p.Meta.Retired && !mt.Retired {
			v.Revives = true
		}
	}
	for _, r := range mt.Related {
		v.Related = append(v.Related, Link{ID: r.ID, Relationship: r.Relationship})
	}
	return v
}

// isParallel reports whether m, a member of g, is on a branch of a fork
// that its chain did not continue from: neither its head nor on the line
// from its first version to the head.
func isParallel(g *memcore.Graph, m *memcore.MemoryFile) bool {
	id := m.Meta.ID
	if h, ok := g.Head(id); !ok || h.Meta.ID == id {
		return false
	}
	return !slices.ContainsFunc(g.Chain(id), func(v *memcore.MemoryFile) bool { return v.Meta.ID == id })
}

// allVersions returns every version of the chain id belongs to, the head
// last: the line from its first version to the head (memcore.Graph.Chain),
// or, when the chain forked, every version oldest first with those of the
// branches that lost the fork among them (memcore.Graph.History).
func allVersions(g *memcore.Graph, id string) []*memcore.MemoryFile {
	h, ok := g.Head(id)
	if !ok {
		return nil
	}
	past := g.History(id)
	if !slices.ContainsFunc(past, func(v memcore.PastVersion) bool { return v.Lost }) {
		return g.Chain(id)
	}
	out := make([]*memcore.MemoryFile, 0, len(past)+1)
	for _, v := range past {
		out = append(out, v.Memory)
	}
	return append(out, h)
}

// views describes each of ms.
func views(store *memcore.FileStore, g *memcore.Graph, ms []*memcore.MemoryFile) []Memory {
	out := make([]Memory, len(ms))
	for i, m := range ms {
		out[i] = view(store, g, m)
	}
	return out
}

// filePath is the file of m in store.
func filePath(store *memcore.FileStore, m *memcore.MemoryFile) string {
	dir := store.Dir(m.Meta.Scope)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, m.Meta.ID+".md")
}
