package memcore

import (
	"fmt"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Source says who stated a memory: recorded when it is written, so that a
// reader (and the agent it is injected into) can weigh a memory the user
// stated above one that was inferred, and so that memories that could have
// been planted through a tool's output or a pasted file are held back for
// review. Files written before sources were recorded read as
// [SourceUnknown].
type Source string

// The sources.
const (
	// SourceUnknown: not recorded (a file written before v0.2, or by hand).
	// Stored as an absent key.
	SourceUnknown Source = ""
	// SourceUser: the memory's evidence is in the user's own words.
	SourceUser Source = "user"
	// SourceAssistant: the evidence is only in the assistant's text.
	SourceAssistant Source = "assistant"
	// SourceMixed: the evidence spans both sides, is in text the user
	// pasted rather than wrote (a code block, a quoted file, log lines), or
	// could not be found in the conversation: not trusted as the user's.
	SourceMixed Source = "mixed"
	// SourceAgent: an agent wrote it through a tool (the MCP server's
	// memory_remember), not a person.
	SourceAgent Source = "agent"
)

// Sources lists every recorded [Source] (not [SourceUnknown]).
func Sources() []Source {
	return []Source{SourceUser, SourceAssistant, SourceMixed, SourceAgent}
}

// Valid reports whether s is [SourceUnknown] or one of [Sources].
func (s Source) Valid() bool {
	switch s {
	case SourceUnknown, SourceUser, SourceAssistant, SourceMixed, SourceAgent:
		return true
	}
	return false
}

// String returns the source as stored, and "unknown" for [SourceUnknown].
func (s Source) String() string {
	if s == SourceUnknown {
		return "unknown"
	}
	return string(s)
}

// Status says whether a memory is in force.
type Status string

// The statuses.
const (
	// StatusActive: the memory is in force. Stored as an absent key.
	StatusActive Status = ""
	// StatusPending: the memory waits for a person's review (it was
	// quarantined, or review of every memory is on). A chain whose head is
	// pending is never injected, searched by default or offered to the
	// classifier as a settled fact. Approving writes a new version without
	// the status; rejecting retires the chain.
	StatusPending Status = "pending"
)

// Valid reports whether s is [StatusActive] or [StatusPending].
func (s Status) Valid() bool { return s == StatusActive || s == StatusPending }

// Evidence is where in a conversation a memory comes from.
type Evidence struct {
	// Quote is a short passage of the conversation that states the memory,
	// as captured (redacted like the content).
	Quote string `yaml:"quote,omitempty"`
	// At is the time of the message the quote comes from; the zero time
	// when unknown.
	At time.Time `yaml:"at,omitempty"`
}

// IsZero reports whether e records nothing.
func (e Evidence) IsZero() bool { return e.Quote == "" && e.At.IsZero() }

// Anchor is a piece of the code a memory is about — a path of the
// repository, a symbol, or a symbol in a path — with what identified its
// state when the memory was written, so that a memory whose code has moved
// or gone can be found and labelled stale (package memcore/anchor records
// and checks them). It encodes as JSON with the file format's names.
type Anchor struct {
	// Path is a repository-relative, slash-separated path of a file or
	// folder ("internal/db/queries.go"); empty for a symbol found anywhere.
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
	// Symbol is an identifier the memory names — a function, type,
	// package, constant or configuration key ("GetOrder"); empty for a
	// path alone.
	Symbol string `yaml:"symbol,omitempty" json:"symbol,omitempty"`
	// Blob is the git blob id (hexadecimal) of Path's content when the
	// memory was written, when Path is a file: the SHA-1 of "blob <size>\0"
	// and the content, as git computes it, whether or not git tracks the
	// file. It lets a checker follow a rename that kept the content.
	Blob string `yaml:"blob,omitempty" json:"blob,omitempty"`
	// Commit is the git commit (hexadecimal) checked out when the memory
	// was written, beside a Path; it lets a checker ask git which paths
	// were renamed since. Empty outside a git repository (added after the
	// other fields: files without it stay valid).
	Commit string `yaml:"commit,omitempty" json:"commit,omitempty"`
}

// The limits of an [Anchor]'s fields.
const (
	maxAnchorPath   = 1024
	maxAnchorSymbol = 256
)

// Validate reports what is wrong with a, or nil: at least one of Path and
// Symbol; Path relative, slash-separated and clean, without ".." or
// control characters; Symbol a single token of letters, digits and
// punctuation other than a slash; Blob 40 or 64 hexadecimal digits, and
// only beside a Path.
func (a Anchor) Validate() error {
	var problems []string
	if a.Path == "" && a.Symbol == "" {
		problems = append(problems, "names neither a path nor a symbol")
	}
	if a.Path != "" {
		if p := anchorPathProblem(a.Path); p != "" {
			problems = append(problems, "path "+p)
		}
	}
	if a.Symbol != "" {
		if p := anchorSymbolProblem(a.Symbol); p != "" {
			problems = append(problems, "symbol "+p)
		}
	}
	problems = append(problems, objectIDProblems(a, "blob", a.Blob)...)
	problems = append(problems, objectIDProblems(a, "commit", a.Commit)...)
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: anchor %s", ErrInvalidMemory, strings.Join(problems, "; "))
}

// objectIDProblems says what is wrong with id, a's git object id named
// field: it must sit beside a path and be 40 or 64 hexadecimal digits.
func objectIDProblems(a Anchor, field, id string) []string {
	switch {
	case id == "":
		return nil
	case a.Path == "":
		return []string{"has a " + field + " but no path"}
	case !isHex(id) || len(id) != 40 && len(id) != 64:
		return []string{fmt.Sprintf("%s %q is not a git object id (40 or 64 hexadecimal digits)", field, id)}
	}
	return nil
}

// anchorPathProblem says what makes p unfit as an anchor's path, or "".
func anchorPathProblem(p string) string {
	switch {
	case len(p) > maxAnchorPath:
		return fmt.Sprintf("is longer than %d bytes", maxAnchorPath)
	case !utf8.ValidString(p) || strings.ContainsFunc(p, unicode.IsControl):
		return fmt.Sprintf("%q has control characters or is not UTF-8", p)
	case strings.Contains(p, `\`):
		return fmt.Sprintf("%q has a backslash: write it with slashes", p)
	case path.IsAbs(p) || len(p) > 1 && p[1] == ':':
		return fmt.Sprintf("%q is absolute: write it relative to the repository", p)
	case path.Clean(p) != p || p == ".":
		return fmt.Sprintf("%q is not clean (write %q)", p, path.Clean(p))
	case p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Sprintf("%q leaves the repository", p)
	}
	return ""
}

// anchorSymbolProblem says what makes s unfit as an anchor's symbol, or "".
func anchorSymbolProblem(s string) string {
	switch {
	case len(s) > maxAnchorSymbol:
		return fmt.Sprintf("is longer than %d bytes", maxAnchorSymbol)
	case !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return fmt.Sprintf("%q has spaces or control characters, or is not UTF-8", s)
	case strings.Contains(s, "/"):
		return fmt.Sprintf("%q has a slash: put the file in path", s)
	}
	return ""
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// checkProvenance checks the optional fields added in v0.2: source,
// evidence, status, status_reason, rejection_reason and anchors.
func (v *memoryProblems) checkProvenance(mt *MemoryMeta) {
	if !mt.Source.Valid() {
		v.bad("source %q is not one of %s", mt.Source, joinValues(Sources()))
	}
	if mt.Evidence != nil {
		v.checkUTF8("evidence.quote", mt.Evidence.Quote)
		if y := mt.Evidence.At.UTC().Year(); !mt.Evidence.At.IsZero() && (y < 0 || y > 9999) {
			v.bad("evidence.at %s is outside the years 0000-9999", mt.Evidence.At.UTC().Format(time.RFC3339))
		}
	}
	switch {
	case !mt.Status.Valid():
		v.bad("status %q is not %s (or absent: active)", mt.Status, StatusPending)
	case !v.checkUTF8("status_reason", mt.StatusReason):
	case mt.StatusReason != "" && mt.Status == StatusActive:
		v.bad("status_reason is set but status is not pending")
	}
	switch {
	case !v.checkUTF8("rejection_reason", mt.RejectionReason):
	case mt.RejectionReason != "" && (mt.Retired || mt.Status != StatusActive):
		v.bad("rejection_reason is set on a retired or pending version")
	}
	for i, a := range mt.Anchors {
		if err := a.Validate(); err != nil {
			*v = append(*v, fmt.Errorf("anchors[%d]: %w", i, err))
		}
	}
}

// repairProvenance makes the v0.2 fields of a hand-edited file valid where
// that loses nothing the reader relies on, and says what it changed: an
// unknown source reads as unknown (never as the user's), an unknown status
// as pending (never as active), an invalid anchor is dropped.
func (mt *MemoryMeta) repairProvenance() []string {
	var repairs []string
	if !mt.Source.Valid() {
		repairs = append(repairs, fmt.Sprintf("source %q is not one of %s: read as unknown", mt.Source, joinValues(Sources())))
		mt.Source = SourceUnknown
	}
	if !mt.Status.Valid() {
		repairs = append(repairs, fmt.Sprintf("status %q is not %s: the memory waits for review", mt.Status, StatusPending))
		mt.Status = StatusPending
	}
	if mt.Anchors != nil {
		var kept []Anchor
		for i, a := range mt.Anchors {
			if err := a.Validate(); err != nil {
				repairs = append(repairs, fmt.Sprintf("anchors[%d]: %v: dropped", i, strings.TrimPrefix(err.Error(), ErrInvalidMemory.Error()+": ")))
				continue
			}
			kept = append(kept, a)
		}
		mt.Anchors = kept
	}
	return repairs
}
