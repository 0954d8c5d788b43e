package anchor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// maxGitOutput bounds what one git command may print.
const maxGitOutput = 32 << 20

// errNoGit: git is not run — not installed, turned off (Config.NoGit), or
// the root is not a git work tree.
var errNoGit = errors.New("git is not available here")

// gitRepo runs git, read-only, in the repository at the root, and keeps
// what it said until the repository's state (its HEAD and its index)
// changes.
type gitRepo struct {
	program string // the git program, "" when git is not run
	root    string
	gitDir  string // the repository's git folder
	timeout time.Duration
	// why says why git is not run, when program is "".
	why error

	mu    sync.Mutex
	state string // the state the cached answers belong to
	head  *gitAnswer[string]
	blobs *gitAnswer[map[string][]string] // blob id → index paths
	// renames holds, by commit, the paths renamed since that commit
	// (old → new) as the index has them.
	renames map[string]*gitAnswer[map[string]string]
}

// gitAnswer is what one git command said, or why it failed.
type gitAnswer[T any] struct {
	val T
	err error
}

// newGitRepo finds the git folder of the work tree at root and the git
// program. Neither is required: without them, renames are not followed.
func newGitRepo(cfg Config) *gitRepo {
	g := &gitRepo{root: cfg.Root, timeout: cfg.GitTimeout}
	if cfg.NoGit {
		g.why = fmt.Errorf("%w: turned off", errNoGit)
		return g
	}
	dir, err := gitDir(cfg.Root)
	if err != nil {
		g.why = fmt.Errorf("%w: %s is not a git work tree (%v)", errNoGit, cfg.Root, err)
		return g
	}
	prog := cfg.GitProgram
	if prog == "" {
		prog = "git"
	}
	found, err := exec.LookPath(prog)
	if err != nil {
		g.why = fmt.Errorf("%w: %v", errNoGit, err)
		return g
	}
	g.program, g.gitDir = found, dir
	return g
}

// gitDir returns the git folder of the work tree at root: root/.git, or
// the folder a .git file names (a linked work tree or a submodule).
func gitDir(root string) (string, error) {
	dot := filepath.Join(root, ".git")
	info, err := os.Lstat(dot)
	switch {
	case err != nil:
		return "", err
	case info.IsDir():
		return dot, nil
	case !info.Mode().IsRegular():
		return "", fmt.Errorf("%s: %w", dot, atomicfile.ErrNotRegular)
	}
	data, err := readSmall(dot, 4096)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s does not name a git folder", dot)
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	return dir, nil
}

// readSmall reads the regular file p, refusing a link, a FIFO or more than
// limit bytes.
func readSmall(p string, limit int64) ([]byte, error) {
	f, err := atomicfile.Open(p, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("%s is larger than %d bytes", p, limit)
	}
	return data, err
}

// currentState says which state of the repository the cached answers
// belong to: the size, time and inode of its HEAD and of its index. A
// checkout rewrites HEAD; a checkout, a commit, git add or git mv rewrites
// the index.
func (g *gitRepo) currentState() string {
	var b strings.Builder
	for _, name := range []string{"HEAD", "index"} {
		if info, err := os.Lstat(filepath.Join(g.gitDir, name)); err == nil {
			fmt.Fprintf(&b, "%d|%d|%d|", info.Size(), info.ModTime().UnixNano(), inodeOf(info))
		} else {
			b.WriteString("-|")
		}
	}
	return b.String()
}

// fresh drops the cached answers when the repository changed, and must be
// called with g.mu held.
func (g *gitRepo) fresh() {
	if st := g.currentState(); st != g.state {
		g.state, g.head, g.blobs, g.renames = st, nil, nil, nil
	}
}

// run runs git with args in the root, read-only and safely: the root's
// own git folder and no other, no system or global configuration, no
// pager, no optional locks, no file system monitor, no external diff or
// text conversion, none of the caller's GIT_* variables, a timeout, and a
// cap on what it prints.
func (g *gitRepo) run(ctx context.Context, args ...string) ([]byte, error) {
	if g.program == "" {
		return nil, g.why
	}
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	full := append([]string{"-C", g.root, "--no-pager", "--no-optional-locks",
		"-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-c", "core.hooksPath=" + os.DevNull}, args...)
	cmd := exec.CommandContext(ctx, g.program, full...)
	// The git folder found is named, so that git never looks for a
	// repository above the root when that folder is not one.
	cmd.Env = append(gitEnv(), "GIT_DIR="+g.gitDir, "GIT_WORK_TREE="+g.root)
	cmd.Stdin = nil
	var out, errOut capped
	out.limit, errOut.limit = maxGitOutput, 4096
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("git %s: %w", args[0], ctx.Err())
	case out.over:
		return nil, fmt.Errorf("git %s printed more than %d bytes", args[0], maxGitOutput)
	case err != nil:
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errOut.b.String()))
	}
	return out.b.Bytes(), nil
}

// gitEnv is the environment of git: the caller's, without any GIT_*
// variable (GIT_DIR, GIT_INDEX_FILE, … could point git elsewhere), with
// the system's and the user's configuration files left out, no prompt, and
// messages in the C locale.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "LC_ALL=") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0", "GIT_NO_REPLACE_OBJECTS=1", "LC_ALL=C")
}

// capped is a buffer that keeps at most limit bytes and remembers it was
// given more.
type capped struct {
	b     bytes.Buffer
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.b.Len(); len(p) > room {
		c.over = true
		c.b.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.b.Write(p)
}

// Head returns the commit checked out, or "" (no git, no commit yet).
func (g *gitRepo) Head(ctx context.Context) string {
	if g.program == "" {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fresh()
	if g.head == nil {
		out, err := g.run(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
		id := strings.TrimSpace(string(out))
		if err == nil && !isObjectID(id) {
			err = fmt.Errorf("git rev-parse said %q", id)
		}
		g.head = &gitAnswer[string]{val: id, err: err}
	}
	if g.head.err != nil {
		return ""
	}
	return g.head.val
}

// indexBlobs returns the index's paths by blob id (git ls-files -s).
func (g *gitRepo) indexBlobs(ctx context.Context) (map[string][]string, error) {
	if g.blobs == nil {
		out, err := g.run(ctx, "ls-files", "-s", "-z")
		m := map[string][]string{}
		for _, rec := range bytes.Split(out, []byte{0}) {
			// <mode> SP <object> SP <stage> TAB <path>
			meta, p, ok := bytes.Cut(rec, []byte{'\t'})
			fields := bytes.Fields(meta)
			if !ok || len(fields) != 3 {
				continue
			}
			id := string(fields[1])
			m[id] = append(m[id], string(p))
		}
		g.blobs = &gitAnswer[map[string][]string]{val: m, err: err}
	}
	return g.blobs.val, g.blobs.err
}

// ignored returns those of paths (slash-separated, relative to the root;
// a folder's with a trailing slash) that git ignores: a file the
// repository's .gitignore keeps out of commits, which teammates' clones
// do not have. A tracked file is not ignored, whatever the patterns say.
// Without git, or when git fails, none is.
func (g *gitRepo) ignored(ctx context.Context, paths []string) map[string]bool {
	if len(paths) == 0 || g.program == "" {
		return nil
	}
	// One path a line, as given (a path git would quote, with a newline
	// or a control character in it, does not match and counts as not
	// ignored: its anchor is kept, as before).
	out, err := g.run(ctx, append([]string{"-c", "core.quotePath=false", "check-ignore", "--"}, paths...)...)
	if err != nil { // exit status 1: none is ignored
		return nil
	}
	ign := map[string]bool{}
	for _, p := range strings.Split(string(out), "\n") {
		if p != "" {
			ign[p] = true
		}
	}
	return ign
}

// renamesSince returns the paths git sees renamed between commit and the
// index, old → new (git diff-index --cached -M): a git mv, or a rename
// committed since. Only the index is read, never the work tree, so no
// filter of the repository's configuration runs.
func (g *gitRepo) renamesSince(ctx context.Context, commit string) (map[string]string, error) {
	if a, ok := g.renames[commit]; ok {
		return a.val, a.err
	}
	out, err := g.run(ctx, "diff-index", "--cached", "-M", "--name-status", "-z", "--no-ext-diff", "--no-textconv", commit, "--")
	m := map[string]string{}
	recs := bytes.Split(out, []byte{0})
	for i := 0; i < len(recs); i++ {
		status := recs[i]
		if len(status) > 0 && status[0] == 'R' && i+2 < len(recs) {
			m[string(recs[i+1])] = string(recs[i+2])
			i += 2
		} else if len(status) > 0 && status[0] == 'C' && i+2 < len(recs) {
			i += 2
		} else if len(status) > 0 && i+1 < len(recs) {
			i++
		}
	}
	if g.renames == nil {
		g.renames = map[string]*gitAnswer[map[string]string]{}
	}
	g.renames[commit] = &gitAnswer[map[string]string]{val: m, err: err}
	return m, err
}

// renamed returns where git says the path old went, or "": a path of the
// index holding the same blob (a rename that kept the content), else the
// rename git detects since the commit the anchor was recorded at (which
// also finds renames that changed the content, and folders whose files all
// moved together). exists says whether a candidate is in the work tree.
func (g *gitRepo) renamed(ctx context.Context, old, blob, commit string, exists func(string) bool) (string, error) {
	if g.program == "" {
		return "", g.why
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fresh()
	var errs []error
	if blob != "" {
		byBlob, err := g.indexBlobs(ctx)
		errs = append(errs, err)
		if to := bestCandidate(old, byBlob[blob], exists); to != "" {
			return to, nil
		}
	}
	if commit != "" {
		ren, err := g.renamesSince(ctx, commit)
		errs = append(errs, err)
		if to, ok := ren[old]; ok && exists(to) {
			return to, nil
		}
		if to := folderRename(old, ren); to != "" && exists(to) {
			return to, nil
		}
	}
	return "", errors.Join(errs...)
}

// bestCandidate picks, among the paths holding a file's old content, the
// one it was most likely renamed to: one that exists, other than old,
// with old's file name if one has it, then the first in lexical order.
func bestCandidate(old string, paths []string, exists func(string) bool) string {
	var live []string
	for _, p := range paths {
		if p != old && exists(p) {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return ""
	}
	slices.Sort(live)
	for _, p := range live {
		if path.Base(p) == path.Base(old) {
			return p
		}
	}
	return live[0]
}

// folderRename returns the folder that the folder dir was renamed to, when
// the renames move its files to one other folder under the same relative
// names, or "".
func folderRename(dir string, renames map[string]string) string {
	prefix := dir + "/"
	to := ""
	for old, now := range renames {
		rest, ok := strings.CutPrefix(old, prefix)
		if !ok {
			continue
		}
		base, ok := strings.CutSuffix(now, "/"+rest)
		if !ok || base == "" || to != "" && base != to {
			return ""
		}
		to = base
	}
	return to
}

// isObjectID reports whether s is 40 or 64 lower-case hexadecimal digits.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
