package cli

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
)

// repoFiles is what git makes of files of the repository's memory folder
// that a command wrote or deleted.
type repoFiles struct {
	// rel holds, for each file in the repository's work tree, its path
	// from the repository's top folder, as git names it.
	rel map[string]string
	// tracked and ignored hold the files git tracks (deleted ones
	// included, until the deletion is committed) and those it ignores.
	tracked, ignored map[string]bool
}

// inGit asks git about paths, files of the repository scope: which it
// tracks and which it ignores. ok is false when there is nothing to say:
// no repository, git not installed, none of paths in the repository's work
// tree, or git not answering (what it said is left out: the write or
// deletion is done, and the note is only advice).
func (a *app) inGit(ctx context.Context, paths []string) (repoFiles, bool) {
	root := a.settings.Paths.RepoRoot
	f := repoFiles{rel: make(map[string]string), tracked: make(map[string]bool), ignored: make(map[string]bool)}
	var rels []string
	for _, p := range paths {
		r, err := filepath.Rel(root, p)
		if root == "" || err != nil || !filepath.IsLocal(r) {
			continue
		}
		f.rel[p] = filepath.ToSlash(r)
		rels = append(rels, f.rel[p])
	}
	git := a.gitIn(ctx, root)
	if len(rels) == 0 || git == nil {
		return f, false
	}
	// ls-files lists the tracked files of paths (deleted ones until the
	// deletion is committed), and with --others --ignored the untracked
	// ones git ignores.
	out, err := git(append([]string{"ls-files", "-z", "--cached", "--"}, rels...)...)
	if err != nil {
		return f, false // not a work tree git knows
	}
	for _, r := range strings.Split(out, "\x00") {
		f.tracked[r] = true
	}
	out, err = git(append([]string{"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--"}, rels...)...)
	if err != nil {
		return f, false
	}
	for _, r := range strings.Split(out, "\x00") {
		f.ignored[r] = true
	}
	return f, true
}

// noteCommit says, after a command wrote m, that m's file is to be
// committed for the repository's other clones to have it (see toCommit).
func (a *app) noteCommit(ctx context.Context, m workspace.Memory) {
	if path := a.toCommit(ctx, m); path != "" {
		a.out.printf("%s\n", a.out.dim("Commit "+path+" for the repository's other clones to have it."))
	}
}

// toCommit returns the file of m, which a command or an MCP tool just
// wrote, as a path from the working folder, when it is to be committed
// for the repository's other clones to have it: m is of the repository
// scope, in its work tree, and neither tracked (a file once written is
// never changed) nor ignored by git. It returns "" otherwise.
func (a *app) toCommit(ctx context.Context, m workspace.Memory) string {
	if m.Scope != memcore.ScopeRepo {
		return ""
	}
	f, ok := a.inGit(ctx, []string{m.Path})
	r, in := f.rel[m.Path]
	if !ok || !in || f.tracked[r] || f.ignored[r] {
		return ""
	}
	return a.fromWorkDir(m.Path)
}

// trackedOf returns, of the memories ms, the files git tracks in the
// repository, as paths from the working folder.
func (a *app) trackedOf(ctx context.Context, ms []workspace.Memory) []string {
	var paths []string
	for _, m := range ms {
		if m.Scope == memcore.ScopeRepo {
			paths = append(paths, m.Path)
		}
	}
	f, ok := a.inGit(ctx, paths)
	if !ok {
		return nil
	}
	var out []string
	for _, p := range paths {
		if r, in := f.rel[p]; in && f.tracked[r] {
			out = append(out, a.fromWorkDir(p))
		}
	}
	return out
}

// fromWorkDir returns path from the working folder when both are in the
// repository's work tree (../.forge/memory/… from a folder under its top),
// path itself otherwise: a file outside the repository (one of the user's
// memory folder, say) is never named by a ../… that reads like a path of
// the repository.
func (a *app) fromWorkDir(path string) string {
	root, wd := a.settings.Paths.RepoRoot, a.workDir()
	if root == "" || !within(root, wd) || !within(root, path) {
		return path
	}
	if r, err := filepath.Rel(wd, path); err == nil {
		return r
	}
	return path
}

// within reports whether path is the folder dir or inside it, by their
// names.
func within(dir, path string) bool {
	r, err := filepath.Rel(dir, path)
	return err == nil && (r == "." || filepath.IsLocal(r))
}
