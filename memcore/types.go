package memcore

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Scope says where a memory lives: in the repository (shared with a team)
// or in the user's home folder (personal, across projects).
type Scope string

// The scopes.
const (
	ScopeRepo Scope = "repo"
	ScopeUser Scope = "user"
)

// Scopes lists every valid [Scope].
func Scopes() []Scope { return []Scope{ScopeRepo, ScopeUser} }

// Valid reports whether s is one of [Scopes].
func (s Scope) Valid() bool { return s == ScopeRepo || s == ScopeUser }

// Category classifies the kind of information a memory encodes.
type Category string

// The categories.
const (
	CategoryCodingPreferences      Category = "coding-preferences"
	CategoryProjectConventions     Category = "project-conventions"
	CategoryArchitecturalDecisions Category = "architectural-decisions"
	CategoryUserFacts              Category = "user-facts"
	CategoryCorrections            Category = "corrections"
	CategoryPatterns               Category = "patterns"
)

// Categories lists every valid [Category].
func Categories() []Category {
	return []Category{
		CategoryCodingPreferences, CategoryProjectConventions, CategoryArchitecturalDecisions,
		CategoryUserFacts, CategoryCorrections, CategoryPatterns,
	}
}

// Valid reports whether c is one of [Categories].
func (c Category) Valid() bool {
	switch c {
	case CategoryCodingPreferences, CategoryProjectConventions, CategoryArchitecturalDecisions,
		CategoryUserFacts, CategoryCorrections, CategoryPatterns:
		return true
	}
	return false
}

// Relationship is the type of a directed edge between two memories.
//
// [RelationshipSupersedes] is the version chain, recorded in
// [MemoryMeta.Supersedes]; the other three are the edges that may appear in
// [MemoryMeta.Related].
type Relationship string

// The relationships.
const (
	RelationshipSupersedes  Relationship = "supersedes"
	RelationshipRefines     Relationship = "refines"
	RelationshipContradicts Relationship = "contradicts"
	RelationshipRelatesTo   Relationship = "relates-to"
)

// Relationships lists every valid [Relationship], supersedes included.
func Relationships() []Relationship {
	return []Relationship{RelationshipSupersedes, RelationshipRefines, RelationshipContradicts, RelationshipRelatesTo}
}

// Valid reports whether r is one of [Relationships].
func (r Relationship) Valid() bool { return r == RelationshipSupersedes || r.IsEdge() }

// IsEdge reports whether r may appear in [MemoryMeta.Related]: refines,
// contradicts or relates-to. Supersedes is the version chain, not an edge.
func (r Relationship) IsEdge() bool {
	return r == RelationshipRefines || r == RelationshipContradicts || r == RelationshipRelatesTo
}

// Trigger records what caused a memory to be written.
type Trigger string

// The triggers. The capture pipeline's per-turn trigger is stored as
// TriggerCadence; TriggerManual marks memories added by a person or a command.
const (
	TriggerCadence    Trigger = "cadence"
	TriggerCompaction Trigger = "compaction"
	TriggerManual     Trigger = "manual"
)

// Valid reports whether t is a known trigger.
func (t Trigger) Valid() bool {
	return t == TriggerCadence || t == TriggerCompaction || t == TriggerManual
}

// RelatedMemory is a typed edge to another memory.
type RelatedMemory struct {
	ID           string       `yaml:"id"`
	Relationship Relationship `yaml:"relationship"`
}

// MemoryMeta holds the front-matter fields of a memory file.
type MemoryMeta struct {
	ID        string    `yaml:"id"`
	CreatedAt time.Time `yaml:"created_at"`
	// UpdatedAt is optional; the zero time is stored as an absent key.
	UpdatedAt time.Time `yaml:"updated_at,omitempty"`
	Version   int       `yaml:"version"`
	Scope     Scope     `yaml:"scope"`
	Category  Category  `yaml:"category"`
	// Supersedes is nil for the first version of a memory and names the
	// predecessor for every later version. Callers test it against nil; an
	// empty string in a file is read as nil.
	Supersedes *string `yaml:"supersedes,omitempty"`
	// Related holds the refines, contradicts and relates-to edges. No edges
	// are stored as an absent key and read back as nil.
	Related   []RelatedMemory `yaml:"related,omitempty"`
	SessionID string          `yaml:"session_id,omitempty"`
	Trigger   Trigger         `yaml:"trigger,omitempty"`
	// Retired marks a version that retires its chain: the memory was
	// forgotten. A chain whose head is retired is kept on disk with its
	// history but is never recalled, searched, listed by default or offered
	// to the classifier; a later version revives it. Stored as
	// "retired: true", absent when false.
	Retired bool `yaml:"retired,omitempty"`
	// RetiredReason optionally says why the chain was retired; it may be
	// set only on a retired version.
	RetiredReason string `yaml:"retired_reason,omitempty"`
	// Source says who stated the memory (added in v0.2); absent reads as
	// [SourceUnknown].
	Source Source `yaml:"source,omitempty"`
	// Evidence is where in the conversation the memory comes from (added
	// in v0.2); nil when not recorded.
	Evidence *Evidence `yaml:"evidence,omitempty"`
	// Status is [StatusPending] for a memory that waits for review (added
	// in v0.2); absent means active.
	Status Status `yaml:"status,omitempty"`
	// StatusReason says why a pending memory waits (the quarantine rule
	// that held it, or review of every memory); set only when pending.
	StatusReason string `yaml:"status_reason,omitempty"`
	// RejectionReason says why review rejected the pending change this
	// version undoes: [Writer.Reject] writes it on the version that puts
	// back the one in force before that change (added in v0.2). It is set
	// only on such a version — neither retired (a rejection that retires a
	// chain says why in RetiredReason) nor pending.
	RejectionReason string `yaml:"rejection_reason,omitempty"`
	// Anchors are the paths and symbols of the repository the memory is
	// about, with their state when it was written (added in v0.2); nil
	// when none were recorded.
	Anchors []Anchor `yaml:"anchors,omitempty"`
	// Extra keeps front-matter keys this version does not know, so that
	// hand-added keys survive a read and rewrite. Values are as decoded from
	// YAML (string, int, int64, uint64, float64, bool, nil, time.Time for
	// timestamps — in UTC or an unnamed zone of their offset — []any,
	// map[string]any, and map[any]any for mappings with keys that are not
	// all strings); keys are written after the known ones, sorted.
	Extra map[string]any `yaml:",inline"`
}

// MemoryFile is one memory: its metadata and its markdown body.
type MemoryFile struct {
	Meta MemoryMeta
	// Content is the markdown body, stored byte for byte.
	Content string
}

// knownKeys are the front-matter keys MemoryMeta owns; Extra may not use them.
var knownKeys = map[string]bool{
	"id": true, "created_at": true, "updated_at": true, "version": true, "scope": true,
	"category": true, "supersedes": true, "related": true, "session_id": true, "trigger": true,
	"retired": true, "retired_reason": true, "source": true, "evidence": true, "status": true,
	"status_reason": true, "rejection_reason": true, "anchors": true,
}

// Validate reports every way m breaks the memory schema, joined into one
// error; each wraps [ErrInvalidMemory], and id problems also wrap
// [ErrInvalidID]. A nil result means m can be written.
//
// Required: a valid id, created_at, version ≥ 1, a known scope and category,
// and content that is not blank and holds no unresolved merge conflict
// ([ErrMergeConflict]). Times must lie in the years 0000-9999. Optional fields, when present, must be valid:
// supersedes names another valid id, related edges name valid ids other than
// m's own with refines, contradicts or relates-to, trigger is known,
// retired_reason only on a retired version, source and status known,
// status_reason only on a pending version, rejection_reason only on a version
// neither retired nor pending, anchors valid ([Anchor.Validate]).
// All text must be valid UTF-8, and Extra may not reuse a known key.
func (m *MemoryFile) Validate() error {
	if m == nil {
		return fmt.Errorf("%w: nil memory", ErrInvalidMemory)
	}
	var v memoryProblems
	v.checkRequired(&m.Meta)
	v.checkLinks(&m.Meta)
	v.checkOptional(&m.Meta)
	v.checkContent(m.Content)
	return errors.Join(v...)
}

// memoryProblems collects what makes a memory invalid, each error wrapping
// ErrInvalidMemory, in the order Validate reports them.
type memoryProblems []error

// bad records a problem described by format and args.
func (v *memoryProblems) bad(format string, args ...any) {
	*v = append(*v, fmt.Errorf("%w: "+format, append([]any{ErrInvalidMemory}, args...)...))
}

// badID records an id problem: field names the id, err says what is wrong
// (it wraps ErrInvalidID).
func (v *memoryProblems) badID(field string, err error) {
	*v = append(*v, fmt.Errorf("%w: %s: %w", ErrInvalidMemory, field, err))
}

// checkUTF8 records the first byte of the text s, the field key, that is
// not UTF-8, naming it and where it is, and reports whether there is none.
func (v *memoryProblems) checkUTF8(key, s string) bool {
	if ce := notUTF8(s); ce != nil {
		v.bad("%s holds %v", key, ce)
		return false
	}
	return true
}

// checkRequired checks the fields every memory has: the id, the times,
// the version, the scope and the category.
func (v *memoryProblems) checkRequired(mt *MemoryMeta) {
	if err := ValidateID(mt.ID); err != nil {
		v.badID("id", err)
	}
	if mt.CreatedAt.IsZero() {
		v.bad("created_at is missing")
	}
	for _, f := range []struct {
		key string
		t   time.Time
	}{{"created_at", mt.CreatedAt}, {"updated_at", mt.UpdatedAt}} {
		// RFC 3339 has four-digit years: other times could be written but
		// not read back.
		if y := f.t.UTC().Year(); !f.t.IsZero() && (y < 0 || y > 9999) {
			v.bad("%s %s is outside the years 0000-9999", f.key, f.t.UTC().Format(time.RFC3339))
		}
	}
	if mt.Version < 1 {
		v.bad("version %d is below 1", mt.Version)
	}
	if !mt.Scope.Valid() {
		v.bad("scope %q is not one of repo, user", mt.Scope)
	}
	if !mt.Category.Valid() {
		v.bad("category %q is not one of %s", mt.Category, joinValues(Categories()))
	}
}

// checkLinks checks supersedes and the related edges: valid ids other than
// the memory's own, and known relationships.
func (v *memoryProblems) checkLinks(mt *MemoryMeta) {
	if mt.Supersedes != nil {
		switch err := ValidateID(*mt.Supersedes); {
		case err != nil:
			v.badID("supersedes", err)
		case *mt.Supersedes == mt.ID:
			v.bad("supersedes names the memory itself")
		}
	}
	for i, r := range mt.Related {
		if err := ValidateID(r.ID); err != nil {
			v.badID(fmt.Sprintf("related[%d].id", i), err)
		} else if r.ID == mt.ID {
			v.bad("related[%d] links the memory to itself", i)
		}
		if !r.Relationship.IsEdge() {
			v.bad("related[%d].relationship %q is not one of refines, contradicts, relates-to", i, r.Relationship)
		}
	}
}

// checkOptional checks the optional fields: the trigger, the session id,
// the retired reason, the fields added in v0.2 and the extra keys.
func (v *memoryProblems) checkOptional(mt *MemoryMeta) {
	if mt.Trigger != "" && !mt.Trigger.Valid() {
		v.bad("trigger %q is not one of cadence, compaction, manual", mt.Trigger)
	}
	v.checkUTF8("session_id", mt.SessionID)
	switch {
	case !v.checkUTF8("retired_reason", mt.RetiredReason):
	case mt.RetiredReason != "" && !mt.Retired:
		v.bad("retired_reason is set but retired is not true")
	}
	v.checkProvenance(mt)
	for k := range mt.Extra {
		if knownKeys[k] {
			v.bad("extra key %q is reserved for a known field", k)
		}
	}
}

// checkContent checks the body: valid UTF-8, not blank, and no unresolved
// merge conflict.
func (v *memoryProblems) checkContent(content string) {
	switch {
	case !v.checkUTF8("content", content):
	case strings.TrimSpace(content) == "":
		v.bad("content is empty")
	}
	if open, end, found := mergeConflict(content); found {
		*v = append(*v, fmt.Errorf("%w: content: %w at its lines %d–%d: %s", ErrInvalidMemory, ErrMergeConflict, open, end, conflictAdvice))
	}
}

// Title is the first non-blank line of the content, trimmed: what a listing
// shows for the memory.
func (m *MemoryFile) Title() string {
	s := m.Content
	for s != "" {
		line, rest, _ := strings.Cut(s, "\n")
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
		s = rest
	}
	return ""
}

// Clone returns a deep copy of m, so that the copy can be changed without
// affecting m.
func (m *MemoryFile) Clone() *MemoryFile {
	if m == nil {
		return nil
	}
	c := *m
	if m.Meta.Supersedes != nil {
		s := *m.Meta.Supersedes
		c.Meta.Supersedes = &s
	}
	if m.Meta.Related != nil {
		c.Meta.Related = append([]RelatedMemory(nil), m.Meta.Related...)
	}
	if m.Meta.Evidence != nil {
		e := *m.Meta.Evidence
		c.Meta.Evidence = &e
	}
	if m.Meta.Anchors != nil {
		c.Meta.Anchors = append([]Anchor(nil), m.Meta.Anchors...)
	}
	if m.Meta.Extra != nil {
		c.Meta.Extra = cloneValue(m.Meta.Extra).(map[string]any)
	}
	return &c
}

func cloneValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(t))
		for k, e := range t {
			c[k] = cloneValue(e)
		}
		return c
	case map[any]any: // YAML mappings whose keys are not all strings
		c := make(map[any]any, len(t))
		for k, e := range t {
			c[k] = cloneValue(e)
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = cloneValue(e)
		}
		return c
	default:
		return v
	}
}

func joinValues[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
