package anchor

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memcore"
)

// Result is what [Checker.Anchors] found for a memory about to be written.
type Result struct {
	// Anchors are the anchors to record, with their state: the given ones,
	// the proposed ones found in the tree, then those extracted from the
	// text, each (path, symbol) once, at most Config.MaxAnchors.
	Anchors []memcore.Anchor
	// Dropped are the proposed anchors left out: not valid, not found in
	// the tree (a path that does not exist, a symbol it does not define),
	// or not shared with the tree's other clones (a path git ignores, a
	// folder that holds no file).
	Dropped []memcore.Anchor
	// Missing are the given anchors that are not in the tree now: they are
	// recorded all the same, and a check will report them.
	Missing []memcore.Anchor
}

// Anchors returns the anchors to record for a memory written now whose
// text is text:
//
//   - given anchors (a person's, or a hand-edited file's) are honoured:
//     recorded whether or not the tree has them now (those it has not are
//     listed in Missing); only an anchor that is not valid is dropped;
//     beyond Config.MaxAnchors of them, the rest are not looked at;
//   - proposed anchors (a model's: the capture classifier's, an agent's)
//     are recorded only when the tree has them: the path exists, and
//     defines the symbol; a symbol without a path is placed in the one
//     package that declares it, or dropped; beyond Config.MaxAnchors of
//     them, the rest are dropped unexamined;
//   - the anchors the text names are extracted deterministically: path-like
//     tokens naming a file or folder of the tree (internal/db/queries.go,
//     db/migrations/, go.mod; a file name alone when one file of the tree
//     has that name), and identifier-like tokens — `code spans`,
//     CamelCase, snake_case and dotted names — that the files and folders
//     the text names define (Go declarations, or words of other files:
//     configuration keys), or that exactly one Go package of the tree
//     declares;
//   - neither a proposed anchor nor one the text names is recorded on a
//     path another clone of the repository does not have — one git
//     ignores (a local .env, a build's output; a tracked file is never
//     ignored) or a folder that holds no file (git keeps none) — since
//     every teammate would see it as gone and the memory as outdated.
//
// Each anchor with a path records its state: the git blob id of a file's
// content ([BlobID]) and the commit checked out, when git is available.
// Every file is read as [Checker.Check] reads it. ctx bounds the walk of
// the tree and git; when it ends, what was found so far is returned.
func (c *Checker) Anchors(ctx context.Context, text string, proposed, given []memcore.Anchor) Result {
	k := c.begin(ctx)
	var r Result
	var out []memcore.Anchor
	given = given[:min(len(given), c.cfg.MaxAnchors)]
	if len(proposed) > c.cfg.MaxAnchors {
		r.Dropped = append(r.Dropped, proposed[c.cfg.MaxAnchors:]...)
		proposed = proposed[:c.cfg.MaxAnchors]
	}
	for _, a := range given {
		if a.Validate() != nil {
			continue
		}
		a.Blob, a.Commit = "", ""
		if !k.inTree(a) {
			r.Missing = append(r.Missing, a)
		}
		out = append(out, a)
	}
	// found holds the proposed anchors the tree has, then those the text
	// names; from, for each, the proposal it came from (-1: the text).
	var found []memcore.Anchor
	var from []int
	for i, a := range proposed {
		if kept, ok := k.verify(a); ok {
			found, from = append(found, kept), append(from, i)
		} else {
			r.Dropped = append(r.Dropped, a)
		}
	}
	for _, a := range k.extract(text) {
		found, from = append(found, a), append(from, -1)
	}
	unshared := k.unshared(found)
	for i, a := range found {
		switch {
		case !unshared[a.Path]:
			out = append(out, a)
		case from[i] >= 0:
			r.Dropped = append(r.Dropped, proposed[from[i]])
		}
	}
	r.Anchors = k.withState(unique(out, c.cfg.MaxAnchors))
	return r
}

// unshared returns the paths of anchors that the tree has but a
// teammate's clone would not: those git ignores (a local .env, a build's
// output) and folders that hold no file (git keeps no empty folder). An
// anchor on one would read as gone in every other clone.
func (k *call) unshared(anchors []memcore.Anchor) map[string]bool {
	out := map[string]bool{}
	var ask []string
	for _, a := range anchors {
		if a.Path == "" || out[a.Path] || slices.Contains(ask, a.Path) || slices.Contains(ask, a.Path+"/") {
			continue
		}
		info, err := k.lstat(a.Path)
		if err != nil {
			continue
		}
		if !info.IsDir() {
			ask = append(ask, a.Path)
			continue
		}
		if !k.holdsAFile(a.Path) {
			out[a.Path] = true
			continue
		}
		ask = append(ask, a.Path+"/")
	}
	for p := range k.git.ignored(k.ctx, ask) {
		out[strings.TrimSuffix(p, "/")] = true
	}
	return out
}

// holdsAFile reports whether the folder rel holds a regular file, at any
// depth (at most a few hundred entries are looked at: a folder that big
// holds one).
func (k *call) holdsAFile(rel string) bool {
	seen := 0
	found := errors.New("found")
	err := filepath.WalkDir(k.fsPath(rel), func(p string, d fs.DirEntry, err error) error {
		if seen++; seen > 500 {
			return found
		}
		if err == nil && d.Type().IsRegular() {
			return found
		}
		return nil
	})
	return errors.Is(err, found)
}

// unique returns anchors without repeats of a (path, symbol), first kept,
// at most n.
func unique(anchors []memcore.Anchor, n int) []memcore.Anchor {
	var out []memcore.Anchor
	seen := map[[2]string]bool{}
	for _, a := range anchors {
		k := [2]string{a.Path, a.Symbol}
		if seen[k] || len(out) >= n {
			continue
		}
		seen[k] = true
		out = append(out, a)
	}
	return out
}

// withState returns anchors with the state of each path filled in: the
// blob id of a regular file's content, and the commit checked out.
func (k *call) withState(anchors []memcore.Anchor) []memcore.Anchor {
	if len(anchors) == 0 {
		return nil
	}
	head := k.git.Head(k.ctx)
	blobs := map[string]string{}
	for i := range anchors {
		a := &anchors[i]
		a.Blob, a.Commit = "", ""
		if a.Path == "" || !k.exists(a.Path) {
			continue
		}
		a.Commit = head
		b, ok := blobs[a.Path]
		if !ok {
			if data, _, err := k.readFile(a.Path); err == nil {
				b = BlobID(data)
			}
			blobs[a.Path] = b
		}
		a.Blob = b
	}
	return anchors
}

// inTree reports whether a check would find a present now.
func (k *call) inTree(a memcore.Anchor) bool {
	if a.Path == "" {
		return true // placed by a walk of the tree at the next check
	}
	info, err := k.lstat(a.Path)
	if err != nil || !k.inside(a.Path) {
		return false
	}
	if a.Symbol == "" {
		return true
	}
	f := Finding{Anchor: a}
	k.checkSymbol(&f, a.Path, info)
	return f.Status == Present
}

// verify returns a, a model's proposal, when the tree has it: a symbol
// without a path placed in the one package that declares it.
func (k *call) verify(a memcore.Anchor) (memcore.Anchor, bool) {
	a.Blob, a.Commit = "", ""
	if a.Validate() != nil {
		return a, false
	}
	if a.Path == "" {
		if kind := identOf(a.Symbol, true); kind == notIdent || !treeWide(a.Symbol, kind) {
			return a, false
		}
		files, err := k.walk(k.ctx)
		if err != nil && len(files) == 0 {
			return a, false
		}
		defs, err := k.defsInTree(k.ctx, files, []string{a.Symbol})
		if err != nil {
			return a, false
		}
		at, ok := onePackage(defs[a.Symbol])
		a.Path = at
		return a, ok
	}
	return a, k.inTree(a)
}

// onePackage returns the preferred of files (see preferred) when they are
// all in one folder, and false when there are none or several folders.
func onePackage(files []string) (string, bool) {
	if len(files) == 0 {
		return "", false
	}
	dir := path.Dir(files[0])
	for _, f := range files[1:] {
		if path.Dir(f) != dir {
			return "", false
		}
	}
	return preferred(files)[0], true
}

// extraction is the state of one extraction from a text.
type extraction struct {
	c     *call
	files []string // the regular files the text names
	dirs  []string // the folders the text names
	out   []memcore.Anchor
	// tree is the walk of the tree, made once when needed.
	tree   []string
	walked bool
}

// walk returns the files of the tree, walking it on first use.
func (x *extraction) walk(ctx context.Context) []string {
	if !x.walked {
		x.tree, _ = x.c.walk(ctx)
		x.walked = true
	}
	return x.tree
}

// extract returns the anchors the text names that the tree has now: paths
// first, then symbols, in order of appearance (see Anchors).
func (k *call) extract(text string) []memcore.Anchor {
	ctx := k.ctx
	x := &extraction{c: k}
	idents, bare := x.sortCandidates(candidates(text))
	if len(bare) > 0 {
		x.placeBareNames(ctx, bare)
	}
	var wide []string
	for _, cd := range idents {
		if !x.placeSymbol(cd.text) && treeWide(cd.text, identOf(cd.text, cd.quoted)) {
			wide = append(wide, cd.text)
		}
	}
	if len(wide) > 0 && ctx.Err() == nil {
		defs, _ := k.defsInTree(ctx, x.walk(ctx), wide)
		for _, sym := range wide {
			if at, ok := onePackage(defs[sym]); ok {
				x.out = append(x.out, memcore.Anchor{Path: at, Symbol: sym})
			}
		}
	}
	return x.out
}

// sortCandidates records the candidates that name a file or folder of the
// tree, and returns the others that may be identifiers, and the file names
// written without a folder that are not at the root.
func (x *extraction) sortCandidates(cands []candidate) (idents, bare []candidate) {
	for _, cd := range cands {
		p, ok := asPath(cd.text, cd.quoted)
		if ok && x.addPath(p) {
			continue
		}
		if ok && !strings.Contains(p, "/") && hasExtension(p) {
			bare = append(bare, cd)
		}
		if identOf(cd.text, cd.quoted) != notIdent {
			idents = append(idents, cd)
		}
	}
	return idents, bare
}

// addPath records p when it is a regular file or a folder of the tree, and
// reports whether it did.
func (x *extraction) addPath(p string) bool {
	info, err := x.c.lstat(p)
	if err != nil || !x.c.inside(p) {
		return false
	}
	switch {
	case info.Mode().IsRegular():
		if !slices.Contains(x.files, p) {
			x.files = append(x.files, p)
		}
	case info.IsDir():
		if !slices.Contains(x.dirs, p) {
			x.dirs = append(x.dirs, p)
		}
	default:
		return false
	}
	x.out = append(x.out, memcore.Anchor{Path: p})
	return true
}

// placeBareNames records the file names the text writes without a folder
// (queries.go) that name exactly one file of the tree.
func (x *extraction) placeBareNames(ctx context.Context, bare []candidate) {
	byName := map[string][]string{}
	for _, f := range x.walk(ctx) {
		byName[path.Base(f)] = append(byName[path.Base(f)], f)
	}
	for _, cd := range bare {
		if at := byName[cd.text]; len(at) == 1 {
			x.addPath(at[0])
		}
	}
}

// placeSymbol records sym when a file or folder the text names defines
// it: the named files first (Go declarations, or words of other files),
// then their folders and the named folders.
func (x *extraction) placeSymbol(sym string) bool {
	c := x.c
	for _, f := range x.files {
		if info, err := c.lstat(f); err == nil {
			if ok, _ := c.symbolInFile(f, info, sym); ok {
				x.out = append(x.out, memcore.Anchor{Path: f, Symbol: sym})
				return true
			}
		}
	}
	for _, f := range x.files {
		if at := c.symbolInFolder(path.Dir(f), sym, f, f, false); at != "" {
			x.out = append(x.out, memcore.Anchor{Path: at, Symbol: sym})
			return true
		}
	}
	for _, d := range x.dirs {
		if at := c.symbolInFolder(d, sym, "", "", false); at != "" {
			x.out = append(x.out, memcore.Anchor{Path: at, Symbol: sym})
			return true
		}
	}
	return false
}
