package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/anchor"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/settings"
)

// A repo memory's anchors are the paths and symbols of the repository it
// names (package memcore/anchor): recorded when it is written, checked
// against the working tree when it is recalled, shown, listed with --stale
// or validated.

// ProblemStale: a memory whose anchors say it may be outdated — a path it
// names no longer exists or was renamed, a symbol is no longer defined.
const ProblemStale ProblemKind = "stale"

// repoRoot is the folder above the repository's .forge folder: where the
// repository's memory folder lives, or the repository's root when the
// memory folder is elsewhere (--repo-dir); "" when the repo scope is off.
func repoRoot(p settings.Paths) string {
	if p.RepoDir == "" {
		return ""
	}
	if filepath.Base(p.RepoDir) == settings.MemoryDir && filepath.Base(filepath.Dir(p.RepoDir)) == settings.ForgeDir {
		return filepath.Dir(filepath.Dir(p.RepoDir))
	}
	return p.RepoRoot
}

// Anchors returns the checker of the repository's anchors, made on first
// use (and after RenewAnchors), or nil when there is no repository here
// (the repo scope is off) or its folder cannot be used.
func (w *Workspace) Anchors() *anchor.Checker {
	w.anchorsMu.Lock()
	defer w.anchorsMu.Unlock()
	if w.anchorsMade {
		return w.anchors
	}
	w.anchorsMade = true
	root := repoRoot(w.settings.Paths)
	if root == "" {
		return nil
	}
	c, err := anchor.New(anchor.DefaultConfig(root))
	if err != nil {
		w.opts.Logger.Warn().Err(err).Msg("forgemem: the repository's anchors are not checked")
		return nil
	}
	w.anchors = c
	return c
}

// RenewAnchors drops the anchor checker and what it has cached, so that
// the next check is a new process's: for a long-lived process that must
// answer as the one-shot command would (the recall server renews it before
// each answer). The checker trusts what it cached of a file until the
// file's size or modification time changes, as its documentation says.
func (w *Workspace) RenewAnchors() {
	w.anchorsMu.Lock()
	w.anchorsMade, w.anchors = false, nil
	w.anchorsMu.Unlock()
}

// staleCheck is the retrieval engine's StaleCheck: the anchor checker of
// the moment (see RenewAnchors), or none without a repository.
func (w *Workspace) staleCheck() memretrieve.StaleChecker {
	if w.Anchors() == nil {
		return nil
	}
	return workspaceStale{w}
}

// workspaceStale checks a memory's anchors with its workspace's current
// checker.
type workspaceStale struct{ w *Workspace }

// Stale implements memretrieve.StaleChecker.
func (s workspaceStale) Stale(ctx context.Context, m *memcore.MemoryFile) string {
	return s.w.staleOf(ctx, m)
}

// staleOf says why m may be outdated, or "".
func (w *Workspace) staleOf(ctx context.Context, m *memcore.MemoryFile) string {
	if c := w.Anchors(); c != nil {
		return c.Stale(ctx, m)
	}
	return ""
}

// captureStore is the store a capture pipeline writes through: one that
// records each repo memory's anchors, when there is a repository, and the
// texts it writes there from the user's own words (see statingStore).
func (w *Workspace) captureStore() memcore.MemoryStore {
	store := statingStore{w.store, w}
	if c := w.Anchors(); c != nil {
		// Outermost: the pipeline asks it why a memory may be outdated.
		return anchor.NewStore(store, c)
	}
	return store
}

// anchorMemory records the anchors of m, written by hand: those the person
// gave (in.Anchors, honoured), those an agent proposed (in.Proposed, kept
// when the tree has them), and those the text names. A user-scope memory
// has none.
func (w *Workspace) anchorMemory(ctx context.Context, m *memcore.MemoryFile, in RememberInput, res *RememberResult) error {
	if len(in.Anchors) > anchor.DefaultMaxAnchors {
		return invalidf("%d anchors given, and a memory records at most %d: give the files and identifiers it is most about",
			len(in.Anchors), anchor.DefaultMaxAnchors)
	}
	for _, a := range in.Anchors {
		if err := a.Validate(); err != nil {
			return invalidf("%v", strings.TrimPrefix(err.Error(), memcore.ErrInvalidMemory.Error()+": "))
		}
	}
	if m.Meta.Scope != memcore.ScopeRepo {
		if len(in.Anchors)+len(in.Proposed) > 0 {
			return invalidf("anchors name this repository's code, and a user-scope memory holds in every repository; remember it with --scope repo, or without anchors")
		}
		m.Meta.Anchors = nil
		return nil
	}
	c := w.Anchors()
	if c == nil {
		m.Meta.Anchors = slices.Clone(in.Anchors)
		return nil
	}
	r := c.Anchors(ctx, m.Content, in.Proposed, in.Anchors)
	m.Meta.Anchors, res.MissingAnchors, res.DroppedAnchors = r.Anchors, r.Missing, r.Dropped
	return nil
}

// onlyStale keeps the current memories of ms that may be outdated, each
// with the reason.
func (w *Workspace) onlyStale(ctx context.Context, ms []Memory) []Memory {
	out := []Memory{}
	for _, m := range ms {
		if m.Head {
			if m.Stale = w.staleOf(ctx, m.File); m.Stale != "" {
				out = append(out, m)
			}
		}
	}
	return out
}

// staleProblems reports, for each current repo memory that is not
// forgotten, each of its anchors that says it may be outdated.
func (w *Workspace) staleProblems(ctx context.Context, snap *snapshot) []Problem {
	c := w.Anchors()
	if c == nil {
		return nil
	}
	var out []Problem
	for _, h := range snap.g.Heads() {
		if h.Meta.Scope != memcore.ScopeRepo || len(h.Meta.Anchors) == 0 || snap.g.IsRetired(h.Meta.ID) {
			continue
		}
		seen := map[string]bool{}
		for _, f := range c.Check(ctx, h.Meta.Anchors).Findings {
			if !f.Stale() || seen[f.String()] {
				continue
			}
			seen[f.String()] = true
			out = append(out, w.staleProblem(h, f))
		}
	}
	return out
}

// staleProblem describes one stale finding of the memory h.
func (w *Workspace) staleProblem(h *memcore.MemoryFile, f anchor.Finding) Problem {
	a := f.Anchor
	p := Problem{Path: filePath(w.store, h), Scope: h.Meta.Scope, ID: h.Meta.ID, Kind: ProblemStale,
		Anchor: &memcore.Anchor{Path: a.Path, Symbol: a.Symbol}, Status: f.Status.String()}
	short := shortRef(h.Meta.ID)
	switch {
	case f.Status == anchor.Renamed || f.Status == anchor.Undefined && f.To != "":
		p.RenamedTo = f.To
		p.Message = fmt.Sprintf("%s, so the memory may be outdated; forgemem validate --fix proposes a new version naming %s", f, f.To)
	default:
		p.Message = fmt.Sprintf("%s, so the memory may be outdated; remember what is true now with forgemem remember --supersedes %s, or forget it with forgemem forget %s",
			f, short, short)
	}
	return p
}

// shortRef is the unique-looking prefix of a memory id people type.
func shortRef(id string) string { return id[:min(len(id), len("mem_")+8)] }

// StaleFix is the new version [Workspace.FixStale] proposes, or wrote, for
// a memory that names renamed paths.
type StaleFix struct {
	// Memory is the current version.
	Memory Memory `json:"memory"`
	// Renames are the renames applied, old path → new path.
	Renames map[string]string `json:"renames"`
	// Content and Anchors are the new version's.
	Content string           `json:"content"`
	Anchors []memcore.Anchor `json:"anchors,omitempty"`
	// StillStale says why the new version would still be outdated (a
	// symbol the renamed file no longer defines, a path gone), or "".
	StillStale string `json:"still_stale,omitempty"`
	// Written is the new version's id once written; Err why it was not.
	Written string `json:"written,omitempty"`
	Err     string `json:"error,omitempty"`
}

// FixResult is what [Workspace.FixStale] proposes or did.
type FixResult struct {
	Fixes []StaleFix `json:"fixes"`
	// DryRun is true when nothing was written.
	DryRun bool `json:"dry_run"`
}

// FixStale proposes, for each current repo memory that names a path git
// says was renamed, a new version with the same content naming the new
// path (and its anchors recorded anew), oldest memory first. With dryRun
// it writes nothing; otherwise each is written through memcore.Writer's
// Revise (trigger manual; the memory's source and review status kept), and
// one that another session changed meanwhile is left, with the reason in
// its Err. Without a repository
// there is nothing to fix.
func (w *Workspace) FixStale(ctx context.Context, dryRun bool) (*FixResult, error) {
	res := &FixResult{Fixes: []StaleFix{}, DryRun: dryRun}
	c := w.Anchors()
	if c == nil {
		return res, w.requireScope(memcore.ScopeRepo)
	}
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	for _, h := range snap.all {
		if !isHead(snap.g, h) || h.Meta.Scope != memcore.ScopeRepo || len(h.Meta.Anchors) == 0 || snap.g.IsRetired(h.Meta.ID) {
			continue
		}
		fix, ok := c.Fix(ctx, h.Content, c.Check(ctx, h.Meta.Anchors))
		if !ok {
			continue
		}
		sf := StaleFix{Memory: view(w.store, snap.g, h), Renames: fix.Renames, Content: fix.Content, Anchors: fix.Anchors,
			StillStale: c.Check(ctx, fix.Anchors).Reason()}
		if !dryRun {
			w.writeFix(ctx, h, &sf)
		}
		res.Fixes = append(res.Fixes, sf)
	}
	return res, nil
}

// writeFix writes the new version sf proposes for h.
func (w *Workspace) writeFix(ctx context.Context, h *memcore.MemoryFile, sf *StaleFix) {
	m := w.newVersion(h, "")
	m.Content, m.Meta.Anchors = sf.Content, sf.Anchors
	_, err := w.writer.Revise(ctx, h, m)
	var ce *memcore.ConflictError
	switch {
	case errors.As(err, &ce):
		sf.Err = fmt.Sprintf("another session changed the memory meanwhile (its current version is %s); run forgemem validate --fix again", cmp.Or(ce.Head.Meta.ID, "unknown"))
	case err != nil:
		sf.Err = err.Error()
	default:
		sf.Written = m.Meta.ID
	}
}
