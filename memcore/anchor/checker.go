package anchor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxCached bounds each cache of a Checker; a full cache is emptied.
const maxCached = 100_000

// maxFolderFiles bounds the files of one folder searched for a symbol.
const maxFolderFiles = 256

// Checker extracts the anchors of memories written in one repository and
// checks them against its working tree. It reads files only as regular
// files (never through a symbolic link, never waiting on a FIFO), up to
// Config.MaxFileBytes each, and runs git only read-only (see [New]). What
// it learns of a file is cached by the file's size and modification time,
// and what git says by the repository's HEAD and index, so a check of
// unchanged anchors costs a stat per path. It is safe for concurrent use.
type Checker struct {
	cfg Config
	git *gitRepo

	mu    sync.Mutex
	decls map[string]declEntry // Go declarations by file
	words map[wordKey]wordEntry
	dirs  map[string]dirEntry // regular files by folder
	tree  map[string]treeEntry
	// folders holds the last search of a folder for a symbol.
	folders map[folderKey]folderHit
	// reads counts the files read, for tests of the caches.
	reads atomic.Int64
}

// fileState is what tells one version of a file from another.
type fileState struct {
	size  int64
	mtime time.Time
	mode  fs.FileMode
}

func stateOf(info fs.FileInfo) fileState {
	return fileState{size: info.Size(), mtime: info.ModTime(), mode: info.Mode()}
}

type declEntry struct {
	state fileState
	decls declSet
}

type wordKey struct{ file, word string }

type wordEntry struct {
	state fileState
	found bool
}

type dirEntry struct {
	state fileState
	files []string // names of the regular files, sorted
}

// folderKey is one search of a folder for a symbol (see symbolInFolder).
type folderKey struct{ dir, sym, like, skip string }

// folderHit is where a search of a folder found a symbol ("" for
// nowhere), with the states it depends on: the folder's, the file left
// out's, and the file found's.
type folderHit struct {
	dir, skip  fileState
	found      string
	foundState fileState
}

// treeEntry is where a symbol without a path was found in the whole tree,
// and when.
type treeEntry struct {
	at    time.Time
	files []string
}

// New returns a Checker of the repository at cfg.Root. It fails with a
// *memcore.ConfigError for a field out of range, and when Root is not a
// folder. Git is optional: without it (not installed, Config.NoGit, or
// Root not a git work tree) renames are not followed — a renamed path
// reads as gone — and [Checker.GitProblem] says why.
func New(cfg Config) (*Checker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.resolved()
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("anchor: the repository root %s: %w", cfg.Root, err)
	}
	if info, err := os.Stat(root); err != nil || !info.IsDir() {
		if err == nil {
			err = errors.New("not a folder")
		}
		return nil, fmt.Errorf("anchor: the repository root %s: %w", root, err)
	}
	cfg.Root = root
	return &Checker{
		cfg: cfg, git: newGitRepo(cfg),
		decls: map[string]declEntry{}, words: map[wordKey]wordEntry{}, dirs: map[string]dirEntry{}, tree: map[string]treeEntry{},
		folders: map[folderKey]folderHit{},
	}, nil
}

// Root returns the repository's top folder, absolute.
func (c *Checker) Root() string { return c.cfg.Root }

// GitProblem says why git is not run — it is not installed, it was turned
// off, or the root is not a git work tree — or is nil when it is. Without
// git, renames are not followed and no commit is recorded.
func (c *Checker) GitProblem() error { return c.git.why }

// declsOf returns the declarations of the Go file rel, whose Lstat is
// info, from the cache when the file has not changed.
func (c *Checker) declsOf(rel string, info fs.FileInfo) (declSet, error) {
	st := stateOf(info)
	c.mu.Lock()
	e, ok := c.decls[rel]
	c.mu.Unlock()
	if ok && e.state == st {
		return e.decls, nil
	}
	data, opened, err := c.readFile(rel)
	if err != nil {
		return nil, err
	}
	d := goDecls(data)
	c.storeDecls(rel, opened, d)
	return d, nil
}

// storeDecls caches the declarations of the file rel as it was read.
func (c *Checker) storeDecls(rel string, opened fs.FileInfo, d declSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.decls) >= maxCached {
		clear(c.decls)
	}
	c.decls[rel] = declEntry{state: stateOf(opened), decls: d}
}

// wordIn reports whether the file rel, whose Lstat is info, holds word
// (see hasWord), from the cache when the file has not changed.
func (c *Checker) wordIn(rel string, info fs.FileInfo, word string) (bool, error) {
	k := wordKey{rel, word}
	st := stateOf(info)
	c.mu.Lock()
	e, ok := c.words[k]
	c.mu.Unlock()
	if ok && e.state == st {
		return e.found, nil
	}
	data, opened, err := c.readFile(rel)
	if err != nil {
		return false, err
	}
	found := hasWord(data, word)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.words) >= maxCached {
		clear(c.words)
	}
	c.words[k] = wordEntry{state: stateOf(opened), found: found}
	return found, nil
}

// symbolInFile reports whether the file rel, whose Lstat is info, defines
// sym: among its declarations for Go, as a word of its text otherwise.
func (c *Checker) symbolInFile(rel string, info fs.FileInfo, sym string) (bool, error) {
	if !info.Mode().IsRegular() {
		return false, fmt.Errorf("%s: not a regular file", rel)
	}
	if isGo(rel) {
		d, err := c.declsOf(rel, info)
		return d.has(sym), err
	}
	return c.wordIn(rel, info, sym)
}

// folderFiles returns the names of the regular files of the folder dir
// ("" or "." is the root), sorted, at most maxFolderFiles of them, with
// the folder's state, from the cache when the folder has not changed.
func (k *call) folderFiles(dir string) ([]string, fileState, error) {
	if dir == "." {
		dir = ""
	}
	info, err := k.lstat(dir)
	if dir == "" {
		info, err = os.Lstat(k.cfg.Root)
	}
	if err != nil {
		return nil, fileState{}, err
	}
	if !info.IsDir() {
		return nil, fileState{}, fmt.Errorf("%s: not a folder", dir)
	}
	st := stateOf(info)
	k.mu.Lock()
	e, ok := k.dirs[dir]
	k.mu.Unlock()
	if ok && e.state == st {
		return e.files, st, nil
	}
	if dir != "" && !k.inside(dir+"/x") {
		return nil, st, fmt.Errorf("%s: %w", dir, errLink)
	}
	f, err := os.Open(k.fsPath(dir))
	if err != nil {
		return nil, st, err
	}
	entries, err := f.ReadDir(4096)
	f.Close()
	if err != nil && len(entries) == 0 {
		return nil, st, err
	}
	var names []string
	for _, de := range entries {
		if de.Type().IsRegular() {
			names = append(names, de.Name())
		}
	}
	slices.Sort(names)
	names = names[:min(len(names), maxFolderFiles)]
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.dirs) >= maxCached {
		clear(k.dirs)
	}
	k.dirs[dir] = dirEntry{state: st, files: names}
	return names, st, nil
}

// symbolInFolder returns the first file of the folder dir ("" or "." is
// the root) that defines sym, or "": a Go file by its declarations, and,
// when like is set, only files of like's kind (see sameKind); skip is left
// out.
//
// With reuse (a check), the last answer stands while the folder's listing,
// skip and the file the symbol was found in are unchanged: a search costs
// their stats, not one per file of the folder. So a symbol that appears in
// another file of the folder by an edit in place, while nothing else of
// the folder changes, is seen at the next change of the folder or of skip
// (a symbol moving out of skip changes skip), or by a new Checker: an
// outdated label can linger, a missing one cannot. Without reuse (a memory
// being written) the folder is searched.
func (k *call) symbolInFolder(dir, sym, like, skip string, reuse bool) string {
	names, st, err := k.folderFiles(dir)
	if err != nil {
		return ""
	}
	key := folderKey{dir: dir, sym: sym, like: like, skip: skip}
	hit := folderHit{dir: st, skip: k.stateOrZero(skip)}
	if reuse {
		if e, ok := k.cachedFolder(key); ok && e.dir == hit.dir && e.skip == hit.skip &&
			(e.found == "" || k.stateOrZero(e.found) == e.foundState) {
			return e.found
		}
	}
	hit.found, hit.foundState = k.searchFolder(dir, names, sym, like, skip)
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.folders) >= maxCached {
		clear(k.folders)
	}
	k.folders[key] = hit
	return hit.found
}

// searchFolder returns the first of the files names of the folder dir that
// defines sym (see symbolInFolder), with its state, or "".
func (k *call) searchFolder(dir string, names []string, sym, like, skip string) (string, fileState) {
	for _, n := range names {
		rel := path.Join(dir, n)
		if rel == skip || like != "" && !sameKind(rel, like) {
			continue
		}
		info, err := k.lstat(rel)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if ok, _ := k.symbolInFile(rel, info, sym); ok {
			return rel, stateOf(info)
		}
	}
	return "", fileState{}
}

// stateOrZero is the state of rel, or the zero state when it has none.
func (k *call) stateOrZero(rel string) fileState {
	if rel == "" {
		return fileState{}
	}
	info, err := k.lstat(rel)
	if err != nil {
		return fileState{}
	}
	return stateOf(info)
}

// cachedFolder returns the last search of a folder for a symbol.
func (c *Checker) cachedFolder(key folderKey) (folderHit, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.folders[key]
	return e, ok
}

// defsInTree returns, for each of syms, the Go files among files (a walk
// of the tree) that declare it: each Go file is read once, and parsed when
// its text holds one of the symbols' search words.
func (c *Checker) defsInTree(ctx context.Context, files, syms []string) (map[string][]string, error) {
	defs := map[string][]string{}
	for _, rel := range files {
		if ctx.Err() != nil {
			return defs, ctx.Err()
		}
		if !isGo(rel) {
			continue
		}
		d := c.declsIfNamed(rel, syms)
		for _, s := range syms {
			if d.has(s) {
				defs[s] = append(defs[s], rel)
			}
		}
	}
	return defs, nil
}

// declsIfNamed returns the declarations of the Go file rel when they may
// hold one of syms: from the cache when the file has not changed, else by
// reading it and parsing it if its text holds one of the symbols' search
// words; nil otherwise.
func (c *Checker) declsIfNamed(rel string, syms []string) declSet {
	if info, err := os.Lstat(c.fsPath(rel)); err == nil {
		c.mu.Lock()
		e, ok := c.decls[rel]
		c.mu.Unlock()
		if ok && e.state == stateOf(info) {
			return e.decls
		}
	}
	data, opened, err := c.readFile(rel)
	if err != nil {
		return nil
	}
	for _, s := range syms {
		if containsWord(data, searchWord(s)) {
			return c.cachedDecls(rel, opened, data)
		}
	}
	return nil
}

// cachedDecls returns the declarations of the Go file rel, read as data
// with the state opened, parsing it only when the cache has another
// version.
func (c *Checker) cachedDecls(rel string, opened fs.FileInfo, data []byte) declSet {
	st := stateOf(opened)
	c.mu.Lock()
	e, ok := c.decls[rel]
	c.mu.Unlock()
	if ok && e.state == st {
		return e.decls
	}
	d := goDecls(data)
	c.storeDecls(rel, opened, d)
	return d
}

// definedInTree returns the Go files of the tree that declare sym, reusing
// an answer younger than Config.TreeTTL.
func (c *Checker) definedInTree(ctx context.Context, sym string) ([]string, error) {
	now := c.cfg.Clock()
	c.mu.Lock()
	e, ok := c.tree[sym]
	c.mu.Unlock()
	if ok && c.cfg.TreeTTL > 0 && now.Sub(e.at) < c.cfg.TreeTTL {
		return e.files, nil
	}
	files, err := c.walk(ctx)
	if err != nil && len(files) == 0 {
		return nil, err
	}
	defs, err := c.defsInTree(ctx, files, []string{sym})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.tree) >= maxCached {
		clear(c.tree)
	}
	c.tree[sym] = treeEntry{at: now, files: defs[sym]}
	return defs[sym], nil
}

// exists reports whether rel is in the work tree (as anything, a link
// included).
func (k *call) exists(rel string) bool {
	_, err := k.lstat(rel)
	return err == nil
}

// preferred orders the files that define a symbol: files that are not
// tests first, then lexical order.
func preferred(files []string) []string {
	out := slices.Clone(files)
	slices.SortStableFunc(out, func(a, b string) int {
		ta, tb := strings.HasSuffix(a, "_test.go"), strings.HasSuffix(b, "_test.go")
		switch {
		case ta == tb:
			return strings.Compare(a, b)
		case ta:
			return 1
		}
		return -1
	})
	return out
}
