package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
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

// noteCommit says, after a command wrote repository versions, which of
// their files, and of the earlier versions of their chains, are to be
// committed for the repository's other clones to have them (see toCommit
// and chainToCommit): one or two in a sentence, more in a list.
func (a *app) noteCommit(paths []string) {
	p := a.out
	switch len(paths) {
	case 0:
	case 1:
		p.printf("%s\n", p.dim("Commit "+paths[0]+" for the repository's other clones to have it."))
	case 2:
		p.printf("%s\n", p.dim("Commit "+paths[0]+" and "+paths[1]+" for the repository's other clones to have them."))
	default:
		p.printf("%s\n", p.dim(fmt.Sprintf("Commit these %d files for the repository's other clones to have them:", len(paths))))
		for _, path := range paths {
			p.printf("%s\n", p.dim("  "+path))
		}
	}
}

// toCommit returns the files to commit, as paths from the working folder,
// for the repository's other clones to have m, a version a command or an
// MCP tool just wrote: when m is of the repository scope, its file and
// those of the earlier versions of its chain that git neither tracks (a
// file once written is never changed) nor ignores, oldest first (see
// chainToCommit). It returns nil otherwise.
func (a *app) toCommit(ctx context.Context, m workspace.Memory) []string {
	if m.Scope != memcore.ScopeRepo {
		return nil
	}
	return a.chainToCommit(ctx, []string{m.ID})
}

// chainToCommit returns, as paths from the working folder, the files of
// the repository scope's versions ids and of the earlier versions of
// their chains (each one's supersedes, back to the first version) that
// are in the repository's work tree and that git neither tracks nor
// ignores: each chain oldest first, without repeats, asked of git at once.
// Committing a new version's file alone would leave the other clones a
// chain whose supersedes names a version they do not have (validate's
// dangling-supersedes). It returns nil when git has nothing to say (see
// inGit).
func (a *app) chainToCommit(ctx context.Context, ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	paths := a.chainFiles(ctx, ids)
	f, ok := a.inGit(ctx, paths)
	if !ok {
		return nil
	}
	var out []string
	for _, p := range paths {
		if r, in := f.rel[p]; in && !f.tracked[r] && !f.ignored[r] {
			out = append(out, a.fromWorkDir(p))
		}
	}
	return out
}

// chainFiles returns the files in the repository's memory folder of the
// versions ids and of the earlier versions of their chains, each chain
// oldest first, without repeats. A chain is followed through the files
// the folder holds and reads as memories: it stops at a version the folder
// does not have (or holds a file of that is not read: a symbolic link, a
// file too large or not valid), and at one seen before (a cycle).
func (a *app) chainFiles(ctx context.Context, ids []string) []string {
	if a.ws == nil {
		return nil
	}
	store := a.ws.Store()
	dir := store.Dir(memcore.ScopeRepo)
	if dir == "" {
		return nil
	}
	seen := make(map[string]bool)
	var out []string
	for _, id := range ids {
		var chain []string
		for id != "" && !seen[id] {
			seen[id] = true
			m, err := store.ReadIn(ctx, memcore.ScopeRepo, id)
			if err != nil {
				break
			}
			chain = append(chain, filepath.Join(dir, id+".md"))
			id = ""
			if p := m.Meta.Supersedes; p != nil {
				id = *p
			}
		}
		slices.Reverse(chain)
		out = append(out, chain...)
	}
	return out
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
