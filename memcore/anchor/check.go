package anchor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/forgemem/forgemem/memcore"
)

// Status is what became of an anchor.
type Status int

// The statuses of a [Finding].
const (
	// Present: the path is there, and the symbol is defined in it (or in
	// its folder: a symbol that moved to another file of its package).
	Present Status = iota + 1
	// Gone: the path no longer exists and git knows no rename of it, or a
	// symbol without a path is defined nowhere in the tree.
	Gone
	// Renamed: the path no longer exists, and git says it was renamed to
	// Finding.To (where the symbol, if any, is defined).
	Renamed
	// Moved: the file is gone, but the symbol is defined in another file
	// of its folder, Finding.To.
	Moved
	// Undefined: the path is there (or was renamed to Finding.To), but
	// the symbol is no longer defined in it or in its folder.
	Undefined
	// Unchecked: the anchor could not be checked (Finding.Err says why):
	// a path reached through a symbolic link, a file too large or
	// unreadable, git failing. It does not make a memory stale.
	Unchecked
)

// String returns the status's name: "present", "gone", "renamed",
// "moved", "undefined", "unchecked".
func (s Status) String() string {
	switch s {
	case Present:
		return "present"
	case Gone:
		return "gone"
	case Renamed:
		return "renamed"
	case Moved:
		return "moved"
	case Undefined:
		return "undefined"
	case Unchecked:
		return "unchecked"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Finding is what a check found of one anchor.
type Finding struct {
	Anchor memcore.Anchor
	Status Status
	// To is the path's new name (Renamed), the file the symbol moved to
	// (Moved), or the renamed file that no longer defines the symbol
	// (Undefined after a rename); "" otherwise.
	To string
	// Err says why the anchor is Unchecked, or why git could not tell
	// whether a gone path was renamed (the status is then Gone).
	Err error
}

// Stale reports whether the finding makes its memory stale: anything but
// Present and Unchecked.
func (f Finding) Stale() bool { return f.Status != Present && f.Status != Unchecked }

// String says what happened, in words a person or an agent reads:
//
//	internal/db/queries.go no longer exists
//	internal/db/queries.go was renamed to internal/store/queries.go
//	`GetOrder` is no longer defined in internal/db/queries.go
//	`GetOrder` moved to internal/db/orders.go
//	internal/db/queries.go is present
func (f Finding) String() string {
	a := f.Anchor
	what := a.Path
	if a.Path == "" {
		what = "`" + a.Symbol + "`"
	}
	switch f.Status {
	case Present:
		return what + " is present"
	case Gone:
		if a.Path == "" {
			return what + " is no longer defined anywhere"
		}
		return what + " no longer exists"
	case Renamed:
		return a.Path + " was renamed to " + f.To
	case Moved:
		return "`" + a.Symbol + "` moved to " + f.To
	case Undefined:
		if f.To != "" {
			return fmt.Sprintf("`%s` is no longer defined in %s (renamed from %s)", a.Symbol, f.To, a.Path)
		}
		if a.Path == "" {
			return "`" + a.Symbol + "` is no longer defined anywhere"
		}
		return fmt.Sprintf("`%s` is no longer defined in %s", a.Symbol, a.Path)
	case Unchecked:
		return fmt.Sprintf("%s could not be checked: %v", what, f.Err)
	}
	return what + ": " + f.Status.String()
}

// Report is the check of a memory's anchors: one finding per anchor, in
// the anchors' order.
type Report struct {
	Findings []Finding
}

// Stale reports whether any finding makes the memory stale.
func (r Report) Stale() bool {
	for _, f := range r.Findings {
		if f.Stale() {
			return true
		}
	}
	return false
}

// Reason says why the memory may be outdated — its stale findings in
// words, each once, joined by "; " — or is "" when nothing is stale:
//
//	internal/db/queries.go no longer exists; `GetOrder` is no longer defined in internal/db/orders.go
func (r Report) Reason() string {
	var parts []string
	seen := map[string]bool{}
	gone := map[string]bool{} // paths already said to be gone
	for _, f := range r.Findings {
		if f.Status == Gone && f.Anchor.Path != "" {
			gone[f.Anchor.Path] = true
		}
	}
	for _, f := range r.Findings {
		if !f.Stale() {
			continue
		}
		s := f.String()
		if f.Status == Gone && f.Anchor.Symbol != "" && f.Anchor.Path != "" && gone[f.Anchor.Path] {
			s = f.Anchor.Path + " no longer exists"
		}
		if !seen[s] {
			seen[s] = true
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

// Renames returns the paths the report found renamed, old → new (whether
// or not the renamed file still defines the anchor's symbol).
func (r Report) Renames() map[string]string {
	var out map[string]string
	for _, f := range r.Findings {
		if f.Status == Renamed || f.Status == Undefined && f.To != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[f.Anchor.Path] = f.To
		}
	}
	return out
}

// Check checks anchors against the working tree: whether each path is
// still there (and what git says it was renamed to when it is not), and
// whether each symbol is still defined — among the declarations of a Go
// file (or of the other Go files of its folder: its package), as a word
// of any other file (or of the files of its kind in its folder), or, for
// a symbol without a path, among the Go declarations of the whole tree.
// Anchors that are not valid are reported Unchecked. ctx bounds git and
// the walk of the tree.
func (c *Checker) Check(ctx context.Context, anchors []memcore.Anchor) Report {
	k := c.begin(ctx)
	r := Report{Findings: make([]Finding, 0, len(anchors))}
	for _, a := range anchors {
		r.Findings = append(r.Findings, k.checkOne(a))
	}
	return r
}

// Stale returns why the memory m may be outdated, or "": the [Report]'s
// Reason for the anchors of a repo-scope memory. A user-scope memory is
// never checked: it holds in every repository, and its anchors name
// another one's files.
func (c *Checker) Stale(ctx context.Context, m *memcore.MemoryFile) string {
	if m == nil || m.Meta.Scope != memcore.ScopeRepo || len(m.Meta.Anchors) == 0 {
		return ""
	}
	return c.Check(ctx, m.Meta.Anchors).Reason()
}

// checkOne checks one anchor.
func (k *call) checkOne(a memcore.Anchor) Finding {
	f := Finding{Anchor: a}
	if err := a.Validate(); err != nil {
		f.Status, f.Err = Unchecked, err
		return f
	}
	if a.Path == "" {
		files, err := k.definedInTree(k.ctx, a.Symbol)
		switch {
		case err != nil:
			f.Status, f.Err = Unchecked, err
		case len(files) == 0:
			f.Status = Gone
		default:
			f.Status = Present
		}
		return f
	}
	info, err := k.lstat(a.Path)
	switch {
	case err == nil:
		k.checkSymbol(&f, a.Path, info)
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		k.checkGone(&f)
	default:
		f.Status, f.Err = Unchecked, err
	}
	return f
}

// checkSymbol completes f for an anchor whose path (or the path it was
// renamed to, at) exists with the Lstat info: present without a symbol,
// else whether at, or its folder, defines it.
func (k *call) checkSymbol(f *Finding, at string, info fs.FileInfo) {
	renamed := at != f.Anchor.Path
	ok := func() {
		f.Status = Present
		if renamed {
			f.Status, f.To = Renamed, at
		}
	}
	sym := f.Anchor.Symbol
	switch {
	case sym == "":
		ok()
	case info.IsDir():
		if k.symbolInFolder(at, sym, "", "", true) != "" {
			ok()
			return
		}
		f.Status = Undefined
	case info.Mode().IsRegular():
		found, err := k.symbolInFile(at, info, sym)
		if err != nil {
			f.Status, f.Err = Unchecked, err
			return
		}
		if found || k.symbolInFolder(path.Dir(at), sym, at, at, true) != "" {
			ok()
			return
		}
		f.Status = Undefined
	default:
		f.Status, f.Err = Unchecked, fmt.Errorf("%s: not a regular file or a folder", at)
		return
	}
	if renamed {
		f.To = at
	}
}

// checkGone completes f for an anchor whose path no longer exists: renamed
// when git knows where it went, moved when its symbol is defined in
// another file of its folder, else gone.
func (k *call) checkGone(f *Finding) {
	a := f.Anchor
	to, gitErr := k.git.renamed(k.ctx, a.Path, a.Blob, a.Commit, k.exists)
	if to != "" {
		if info, err := k.lstat(to); err == nil {
			k.checkSymbol(f, to, info)
			return
		}
	}
	if a.Symbol != "" {
		if dir := path.Dir(a.Path); k.isFolder(dir) {
			if at := k.symbolInFolder(dir, a.Symbol, a.Path, a.Path, true); at != "" {
				f.Status, f.To = Moved, at
				return
			}
		}
	}
	f.Status = Gone
	if gitErr != nil && !errors.Is(gitErr, errNoGit) {
		f.Err = gitErr
	}
}

// isFolder reports whether rel ("." is the root) is a folder of the tree.
func (k *call) isFolder(rel string) bool {
	if rel == "." {
		return true
	}
	info, err := k.lstat(rel)
	return err == nil && info.IsDir()
}
