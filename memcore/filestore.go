package memcore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forgemem/forgemem/memcore/atomicfile"
	"github.com/rs/zerolog"
)

// File and folder permissions of a FileStore.
const (
	filePerm = 0o600
	dirPerm  = 0o750
)

// tmpPrefix starts the name of a file being written. Such files are hidden,
// do not end in ".md", and are never listed; one left behind by a killed
// writer is removed by NewFileStore once it is an hour old.
const tmpPrefix = ".tmp-"

// staleTmpAge is how old a temporary file must be before NewFileStore
// removes it (a younger one may belong to a writer still at work).
const staleTmpAge = time.Hour

// MaxFileBytes is the largest memory file a [FileStore] reads: 1 MiB, far
// above any memory a person or a model writes (the forgemem command refuses
// content over 64 KiB, capture over 4 KiB by default). A larger file is
// skipped without reading more than MaxFileBytes of it — a repository can
// commit a file of any size, and reading it whole would cost its size in
// memory — and reported by [FileStore.Problems] with a [*TooLargeError];
// [FileStore.Write] refuses a memory whose file would be larger.
const MaxFileBytes = 1 << 20

// FileStore is a [MemoryStore] over two folders of memory files, one per
// scope (by default .forge/memory/ in the repository and ~/.forge/memory/).
//
// Writes are atomic and never overwrite: the file is written under a
// temporary name, fsynced, then hard-linked to its final name, which fails
// if that name exists — so a reader never sees a partial file, a killed
// writer never leaves a visible one, and two processes writing the same id
// at once get one success and one ErrAlreadyExists. The folder's file
// system must support hard links (every common local one does).
//
// Superseding is exclusive across processes: a Write whose memory
// supersedes a version holds a lock file in each folder (an advisory flock
// where the system has one, released when the process dies, however it
// dies) while it checks that the version has no successor in either folder
// and publishes the file, so of two sessions changing one memory at once
// exactly one succeeds and the other gets a [*ConflictError]. The lock
// files live in a .locks folder inside each memory folder, with a
// .gitignore that keeps them out of git; every writer takes the folders'
// locks in one order (their real paths) and never waits for one while
// holding the other, so writers never deadlock. Such a write lists the
// store under the lock, which costs little with the parse cache warm.
//
// Reads and lists are served from a cache of parsed files keyed by name,
// size and modification time, so repeated lists of thousands of files parse
// only what changed; files are parsed in parallel. A file that cannot be
// parsed, whose id differs from its name, or whose scope differs from its
// folder is skipped by List with a log line, and Read reports why; so is a
// file larger than [MaxFileBytes], which is never read whole. Symbolic
// links are not followed: a memory folder committed to a repository is
// untrusted input, and a link could point anywhere — neither a link among
// the memory files nor a memory folder that is itself a link
// ([ErrUnsafeFolder]).
//
// A FileStore is safe for concurrent use by many goroutines, and several
// processes may use the same folders at once.
type FileStore struct {
	dirs [2]string // indexed by scopeIndex
	// absent marks the folders that did not exist when a store with
	// FileStoreConfig.DeferCreate opened, until a Write creates them (see
	// FileStore.created).
	absent  [2]atomic.Bool
	log     zerolog.Logger
	workers int

	mu    sync.Mutex
	cache [2]map[string]*cachedFile
	gen   [2]uint64
	// skipped is, by scope index, what the last read of the folder to
	// finish skipped (see FileStore.Skipped).
	skipped [2][]Problem
}

type cachedFile struct {
	size int64
	mod  time.Time
	m    *MemoryFile
	// repairs says what reading the file repaired (see parseLenient).
	repairs []string
	gen     uint64 // the last List generation that saw the file
}

func scopeIndex(s Scope) int {
	if s == ScopeUser {
		return 1
	}
	return 0
}

// NewFileStore returns a FileStore over repoDir (scope repo) and userDir
// (scope user), creating the folders (mode 0750) if needed — or, with
// cfg.DeferCreate, leaving a missing folder missing until the first Write
// into it (it lists as empty meanwhile). The two must be different
// folders. An empty folder name turns that scope off — outside a
// repository there is no repo scope: the store then lists and reads the
// other scope only, and a write to the scope that is off fails with
// [ErrScopeOff]. At least one folder must be given.
//
// Both folders empty, one folder given for both scopes, or a field of cfg
// out of range is a *[ConfigError] (matching [ErrInvalidConfig]) naming
// every such mistake, and nothing is created. A folder that is a symbolic
// link, or not a folder, is an error wrapping [ErrUnsafeFolder].
func NewFileStore(repoDir, userDir string, cfg FileStoreConfig) (*FileStore, error) {
	bad := folderErrors(repoDir, userDir)
	if err := cfg.Validate(); err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			bad = append(bad, ce.Fields...)
		}
	}
	if err := bad.Err("memcore", ""); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &FileStore{log: cfg.Logger, workers: cfg.Parallelism}
	for i, d := range []string{repoDir, userDir} {
		s.cache[i] = make(map[string]*cachedFile)
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("memcore: new file store: %w", err)
		}
		s.dirs[i] = abs
	}
	if err := s.openFolders(cfg.DeferCreate); err != nil {
		return nil, err
	}
	for _, d := range s.dirs {
		if d != "" {
			s.removeStaleTemps(d)
		}
	}
	return s, nil
}

// folderErrors reports what is wrong with the folders given to
// NewFileStore that can be told without touching the disk: both empty, or
// one folder named twice.
func folderErrors(repoDir, userDir string) FieldErrors {
	var bad FieldErrors
	if repoDir == "" && userDir == "" {
		bad.Check(false, "NewFileStore's folders", Description(`"" and ""`), "at least one folder (an empty one turns its scope off)")
		return bad
	}
	if repoDir == "" || userDir == "" {
		return nil
	}
	a, errA := filepath.Abs(repoDir)
	b, errB := filepath.Abs(userDir)
	if errA == nil && errB == nil {
		bad.Check(a != b, "NewFileStore's userDir", userDir, sameFolderWant)
	}
	return bad
}

// sameFolderWant is what NewFileStore wants of a user folder that is the
// repository's.
const sameFolderWant = "a folder other than repoDir (each scope needs a folder of its own)"

// openFolders checks the store's folders as NewFileStore says: each a real
// folder, created if missing — or, with deferCreate, marked absent — and
// the two not one folder under two names.
func (s *FileStore) openFolders(deferCreate bool) error {
	for i, d := range s.dirs {
		if d == "" {
			continue
		}
		var err error
		if deferCreate {
			if err = checkMemoryFolder(Scopes()[i], d); errors.Is(err, fs.ErrNotExist) {
				s.absent[i].Store(true)
				continue
			}
		} else {
			err = ensureFolder(Scopes()[i], d)
		}
		if err != nil {
			return fmt.Errorf("memcore: new file store: %w", err)
		}
	}
	return s.checkDistinct()
}

// checkDistinct refuses, with a *ConfigError, the two scopes' folders when
// they are one folder under two names (a symbolic link above one of them).
// A folder that does not exist yet is not compared.
func (s *FileStore) checkDistinct() error {
	if s.dirs[0] == "" || s.dirs[1] == "" {
		return nil
	}
	a, errA := os.Stat(s.dirs[0])
	b, errB := os.Stat(s.dirs[1])
	if errA == nil && errB == nil && os.SameFile(a, b) {
		var bad FieldErrors
		bad.Check(false, "NewFileStore's userDir", s.dirs[1], sameFolderWant+"; it is "+s.dirs[0]+" under another name")
		return bad.Err("memcore", "")
	}
	return nil
}

// created is called by a Write that made sure scope's folder exists: the
// first time for a folder that was absent when the store opened, it checks
// what NewFileStore checks of the folders it finds (see checkDistinct).
func (s *FileStore) created(scope Scope) error {
	si := scopeIndex(scope)
	if !s.absent[si].Load() {
		return nil
	}
	if err := s.checkDistinct(); err != nil {
		return err
	}
	s.absent[si].Store(false)
	return nil
}

// ensureFolder creates scope's memory folder dir (mode 0750) if it is
// missing, and checks that it is a real folder (see checkMemoryFolder).
func ensureFolder(scope Scope, dir string) error {
	err := checkMemoryFolder(scope, dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, dirPerm); err != nil {
			return fmt.Errorf("create the %s folder: %w", scope, err)
		}
		err = checkMemoryFolder(scope, dir)
	}
	return err
}

// checkMemoryFolder checks that scope's memory folder dir is a real folder: a
// symbolic link in its place is an error wrapping ErrUnsafeFolder, never
// followed — a repository can commit a link pointing anywhere, and
// memories would be written there — and so is a file; a missing folder is
// an error wrapping fs.ErrNotExist. Folders above dir are the caller's
// choice and may be links.
func checkMemoryFolder(scope Scope, dir string) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	return checkFolderInfo(scope, dir, info)
}

// checkFolderInfo refuses, with an error wrapping ErrUnsafeFolder, a memory
// folder whose Lstat is info if it is a symbolic link or not a folder.
func checkFolderInfo(scope Scope, dir string, info fs.FileInfo) error {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: the %s memory folder %s is a symbolic link, which is never followed (memories would be written where it points); replace it with a real folder, or use the folder it points to by its own path",
			ErrUnsafeFolder, scope, dir)
	case !info.IsDir():
		return fmt.Errorf("%w: the %s memory folder %s is not a folder; move the file away", ErrUnsafeFolder, scope, dir)
	}
	return nil
}

// checkDir checks scope's folder, which is on, before it is read or
// changed (see checkMemoryFolder).
func (s *FileStore) checkDir(scope Scope) error {
	return checkMemoryFolder(scope, s.dirs[scopeIndex(scope)])
}

// Dir returns the absolute folder of scope, or "" for an unknown scope or
// one that is off.
func (s *FileStore) Dir(scope Scope) string {
	if !scope.Valid() {
		return ""
	}
	return s.dirs[scopeIndex(scope)]
}

func (s *FileStore) path(scope Scope, id string) string {
	return filepath.Join(s.dirs[scopeIndex(scope)], id+".md")
}

// Write implements [MemoryStore]. A memory whose file would be larger than
// [MaxFileBytes] is refused with a [*TooLargeError], and a scope folder
// that became a symbolic link with an error wrapping [ErrUnsafeFolder];
// a missing folder (deleted by hand, or not made yet with
// [FileStoreConfig.DeferCreate]) is made (mode 0750).
func (s *FileStore) Write(ctx context.Context, m *MemoryFile) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := encodeFile(m)
	if err != nil {
		return err
	}
	id, scope := m.Meta.ID, m.Meta.Scope
	dir := s.dirs[scopeIndex(scope)]
	if dir == "" {
		return fmt.Errorf("memcore: write %s: %w: this store has no %s folder", id, ErrScopeOff, scope)
	}
	if err := ensureFolder(scope, dir); err != nil {
		return fmt.Errorf("memcore: write %s: %w", id, err)
	}
	if err := s.created(scope); err != nil {
		return fmt.Errorf("memcore: write %s: %w", id, err)
	}
	pending, err := atomicfile.Prepare(dir, tmpPrefix+id+"-*", data, filePerm)
	if err != nil {
		return fmt.Errorf("memcore: write %s: %w", id, err)
	}
	defer pending.Discard()
	if testHookTempWritten != nil {
		testHookTempWritten(pending.Name())
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.Meta.Supersedes != nil {
		// Superseding is exclusive across processes: with every folder's
		// chain lock held, no other writer can publish a successor between
		// the check and the link.
		release, err := s.lockChains(ctx, scope)
		if err != nil {
			return fmt.Errorf("memcore: write %s: %w", id, err)
		}
		defer release()
		if err := s.checkSuccessor(ctx, m); err != nil {
			return fmt.Errorf("memcore: write %s: %w", id, err)
		}
	}
	return s.publish(pending, id, scope)
}

// publish links the written file pending to its final name, the memory id
// in scope's folder, unless id exists in either folder. The same id may not
// exist in the other scope's folder: checking it and publishing are one
// step for every writer in this process; across processes, only a UUID
// collision could race here, while the same-folder race is settled by the
// link itself.
func (s *FileStore) publish(pending *atomicfile.Pending, id string, scope Scope) error {
	lock := &idLocks[idLockIndex(id)]
	lock.Lock()
	defer lock.Unlock()
	other := ScopeUser
	if scope == ScopeUser {
		other = ScopeRepo
	}
	if s.Dir(other) != "" { // a scope that is off holds nothing to collide with
		if _, err := os.Lstat(s.path(other, id)); err == nil {
			return fmt.Errorf("memcore: write %s: %w (in the %s folder)", id, ErrAlreadyExists, other)
		}
	}
	if err := pending.Link(s.path(scope, id)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("memcore: write %s: %w", id, ErrAlreadyExists)
		}
		return fmt.Errorf("memcore: write %s: publish (the folder's file system must support hard links): %w", id, err)
	}
	return nil
}

// encodeFile validates m and returns its file, refusing one larger than
// MaxFileBytes (a *TooLargeError), which no FileStore would read.
func encodeFile(m *MemoryFile) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("memcore: write: %w", err)
	}
	data, err := serialize(m)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("memcore: write %s: %w", m.Meta.ID, &TooLargeError{Size: int64(len(data)), Limit: MaxFileBytes})
	}
	return data, nil
}

// checkSuccessor returns an error wrapping ErrAlreadyExists if m's id is
// stored, and a *ConflictError if the version m supersedes already has a
// successor in either folder; the caller holds the chain locks. It lists the
// store (from the parse cache, so only files changed since are read).
func (s *FileStore) checkSuccessor(ctx context.Context, m *MemoryFile) error {
	all, err := s.List(ctx)
	if err != nil {
		return err
	}
	g := NewGraph(all)
	if _, ok := g.Memory(m.Meta.ID); ok {
		return ErrAlreadyExists
	}
	return conflictIn(g, m)
}

// idLocks serialise the cross-scope check and publication of writes of one
// id, across every FileStore of the process.
var idLocks [64]sync.Mutex

func idLockIndex(id string) int {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	return int(h % uint32(len(idLocks)))
}

// testHookTempWritten, when not nil, is called by Write with the name of
// its temporary file once the data is written and synced, just before the
// file is published under its final name. Tests use it to stop a writer at
// that point; it is always nil otherwise.
var testHookTempWritten func(tmpName string)

// Read implements [MemoryStore].
func (s *FileStore) Read(ctx context.Context, id string) (*MemoryFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ValidateID(id); err != nil {
		return nil, fmt.Errorf("memcore: read: %w", err)
	}
	// A scope whose folder cannot be read does not hide the other: its
	// error is returned only if the other scope does not have the memory.
	var firstErr error
	for _, scope := range s.onScopes() {
		m, err := s.readIn(scope, id)
		switch {
		case err == nil:
			return m.Clone(), nil
		case errors.Is(err, fs.ErrNotExist):
		case firstErr == nil:
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, fmt.Errorf("memcore: read %s: %w", id, firstErr)
	}
	return nil, fmt.Errorf("memcore: read %s: %w", id, ErrNotFound)
}

// Remove deletes the file of the memory id from whichever folder holds it
// (both, should a hand copy have put it in both). Memories are otherwise
// append-only — a change is a new version and forgetting is a retired
// version, see [MemoryMeta.Retired] — so Remove is for what must not be kept
// at all, such as a secret that reached a memory; it is not part of
// [MemoryStore]. It returns an error wrapping [ErrNotFound] if no folder
// holds id, and [ErrInvalidID] if id is not an id (nothing is touched).
// A symbolic link in id's place is removed, never followed.
func (s *FileStore) Remove(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateID(id); err != nil {
		return fmt.Errorf("memcore: remove: %w", err)
	}
	removed := false
	for _, scope := range s.onScopes() {
		if err := s.checkDir(scope); errors.Is(err, ErrUnsafeFolder) {
			return fmt.Errorf("memcore: remove %s: %w", id, err)
		}
		err := os.Remove(s.path(scope, id))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("memcore: remove %s: %w", id, err)
		}
		removed = true
		si := scopeIndex(scope)
		s.mu.Lock()
		delete(s.cache[si], id+".md")
		s.mu.Unlock()
		if d, err := os.Open(s.dirs[si]); err == nil {
			_ = d.Sync() // make the removal durable where the system allows
			d.Close()
		}
	}
	if !removed {
		return fmt.Errorf("memcore: remove %s: %w", id, ErrNotFound)
	}
	return nil
}

// readIn loads the memory id from scope's folder; an error wrapping
// fs.ErrNotExist means the folder does not hold it.
func (s *FileStore) readIn(scope Scope, id string) (*MemoryFile, error) {
	if err := s.checkDir(scope); err != nil {
		return nil, err
	}
	m, _, err := s.load(scope, id+".md", 0, false)
	return m, err
}

// onScopes returns the scopes the store has folders for.
func (s *FileStore) onScopes() []Scope {
	var out []Scope
	for _, scope := range Scopes() {
		if s.Dir(scope) != "" {
			out = append(out, scope)
		}
	}
	return out
}

// load returns the parsed file name of scope's folder, from the cache when
// its size and modification time are unchanged (unless fresh), and what
// reading it repaired (see parseLenient). The result is shared with the
// cache: callers clone it before handing it out.
func (s *FileStore) load(scope Scope, name string, gen uint64, fresh bool) (*MemoryFile, []string, error) {
	si := scopeIndex(scope)
	path := filepath.Join(s.dirs[si], name)
	// A link or a FIFO put in a memory's place is never followed or waited
	// on, even if it replaced the file after the folder was listed.
	f, err := atomicfile.Open(path, os.O_RDONLY, 0)
	if errors.Is(err, atomicfile.ErrSymlink) || errors.Is(err, atomicfile.ErrNotRegular) {
		return nil, nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if info.Size() > MaxFileBytes {
		return nil, nil, fmt.Errorf("%s: %w", path, &TooLargeError{Size: info.Size(), Limit: MaxFileBytes})
	}
	s.mu.Lock()
	if c := s.cache[si][name]; !fresh && c != nil && c.size == info.Size() && c.mod.Equal(info.ModTime()) {
		c.gen = max(c.gen, gen)
		s.mu.Unlock()
		return c.m, c.repairs, nil
	}
	s.mu.Unlock()

	data, err := readAll(f, info.Size(), MaxFileBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	m, repairs, err := parseLenient(data, info.ModTime())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if want := strings.TrimSuffix(name, ".md"); m.Meta.ID != want {
		return nil, nil, fmt.Errorf("%s: %w: id %s does not match the file name", path, ErrInvalidMemory, m.Meta.ID)
	}
	if m.Meta.Scope != scope {
		return nil, nil, fmt.Errorf("%s: %w: scope %s, but the file is in the %s folder", path, ErrInvalidMemory, m.Meta.Scope, scope)
	}
	for _, r := range repairs {
		s.log.Warn().Str("path", path).Str("repair", r).Msg("memcore: memory file read with a repair")
	}
	s.mu.Lock()
	s.cache[si][name] = &cachedFile{size: info.Size(), mod: info.ModTime(), m: m, repairs: repairs, gen: gen}
	s.mu.Unlock()
	return m, repairs, nil
}

// readAll reads f to its end, but never more than limit+1 bytes: a file
// that grew past limit since its Stat is a *TooLargeError. size, from the
// Stat, sizes the buffer so that the usual file needs one read call.
func readAll(f *os.File, size, limit int64) ([]byte, error) {
	buf := make([]byte, 0, min(size, limit)+1)
	for {
		end := min(int64(cap(buf)), limit+1)
		n, err := f.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, &TooLargeError{Size: max(size, int64(len(buf))), Limit: limit}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// List implements [MemoryStore]. Memories are ordered oldest first by
// CreatedAt, then by id. A scope folder that cannot be read (no permission,
// a file where the folder should be) is skipped with a log line, like a
// corrupt file: the other scope is still listed. [FileStore.Problems] says
// what was skipped.
func (s *FileStore) List(ctx context.Context) ([]*MemoryFile, error) {
	var all []*MemoryFile
	for _, scope := range s.onScopes() {
		ms, _, err := s.list(ctx, scope)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if err != nil {
			s.log.Warn().Err(err).Str("scope", string(scope)).Msg("memcore: skipping a memory folder that cannot be read")
			continue
		}
		all = append(all, ms...)
	}
	sortMemories(all)
	return all, nil
}

// ListByScope implements [MemoryStore], in the order of List. A missing
// folder (deleted by hand) lists as empty; one that cannot be read is an
// error; a scope that is off is an error wrapping [ErrScopeOff].
func (s *FileStore) ListByScope(ctx context.Context, scope Scope) ([]*MemoryFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !scope.Valid() {
		return nil, fmt.Errorf("memcore: list: %w: %q", ErrUnknownScope, scope)
	}
	if s.Dir(scope) == "" {
		return nil, fmt.Errorf("memcore: list: %w: this store has no %s folder", ErrScopeOff, scope)
	}
	ms, _, err := s.list(ctx, scope)
	if err != nil {
		return nil, err
	}
	return ms, nil
}

// Problem is something in a memory folder that a [FileStore] does not
// serve as it is: a file it skips, a folder it cannot read, or a file it
// serves repaired (Served).
type Problem struct {
	// Path is the file or the folder.
	Path string
	// Scope is the scope of the folder.
	Scope Scope
	// Err says why. It wraps [ErrMalformed] for a file that is not a memory
	// file (a symbolic link or other file that is not regular included) and
	// for a .locks that is not a folder (writes that supersede then fail),
	// [ErrTooLarge] (a [*TooLargeError]) for a file larger than
	// [MaxFileBytes], [ErrUnsafeFolder] for a scope folder that is a
	// symbolic link,
	// [ErrInvalidMemory] for one whose fields break the schema or whose id
	// or scope does not match its name or folder, [ErrInvalidID] for a .md
	// file whose name is not a memory id, and the file system's error for
	// what cannot be read. For a repair it wraps [ErrInvalidMemory] and
	// says what was done, such as "created_at is missing: the file's
	// modification time, 2025-01-15T10:30:00Z, is used".
	Err error
	// Served is true when the store serves the file anyway, repaired as Err
	// says, and false when it skips it. A file is repaired when it lacks
	// created_at (the file's modification time, in UTC and whole seconds,
	// is used) or holds a related edge with an unknown relationship (the
	// edge is dropped, the memory kept); one Problem is reported for each
	// repair. Rewriting the file with what Read returns ends the problem.
	Served bool
}

// Problems scans both folders afresh (it costs a List) and returns what
// the store does not serve as it is, ordered by path: the files List skips,
// the folders it cannot read, a .locks entry that is not a folder (see
// [FileStore]), and the repairs of the files it serves repaired
// (Problem.Served). A missing folder is not a problem. It is what an
// audit shows a user, so that a hand edit never makes a memory vanish
// without a word.
func (s *FileStore) Problems(ctx context.Context) ([]Problem, error) {
	var out []Problem
	for _, scope := range s.onScopes() {
		_, probs, err := s.list(ctx, scope)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if err != nil {
			out = append(out, Problem{Path: s.Dir(scope), Scope: scope, Err: err})
		}
		out = append(out, probs...)
		ld := filepath.Join(s.Dir(scope), lockDirName)
		if err := checkLockDir(ld); errors.Is(err, ErrMalformed) {
			out = append(out, Problem{Path: ld, Scope: scope, Err: err})
		}
	}
	slices.SortStableFunc(out, func(a, b Problem) int { return cmp.Compare(a.Path, b.Path) })
	return out, nil
}

// Skipped returns what the last read of each folder — by List,
// ListByScope or Problems, whichever finished last — skipped, as Problems
// reports it, ordered by path: the files it does not serve, and the folder
// itself when it could not be read; not the repairs of the files it serves
// repaired (Problem.Served is false in each). It reads nothing: a process
// that lists the store anyway learns what the list missed at no cost,
// where Problems would read the folders again. A folder not read yet, or
// missing, has nothing.
func (s *FileStore) Skipped() []Problem {
	s.mu.Lock()
	out := slices.Concat(s.skipped[0], s.skipped[1])
	s.mu.Unlock()
	slices.SortStableFunc(out, func(a, b Problem) int { return cmp.Compare(a.Path, b.Path) })
	return out
}

// noteSkipped records what a read of the folder of scope index si
// skipped, for Skipped: the problems that are not repairs.
func (s *FileStore) noteSkipped(si int, probs []Problem) {
	var skipped []Problem
	for _, p := range probs {
		if !p.Served {
			skipped = append(skipped, p)
		}
	}
	s.mu.Lock()
	s.skipped[si] = skipped
	s.mu.Unlock()
}

// list reads scope's folder (which is on): the memories it serves, sorted,
// and the problems of the files it skips. A folder that does not exist
// lists as empty; one that cannot be read is an error. What it skipped is
// recorded for Skipped, unless ctx ended first.
func (s *FileStore) list(ctx context.Context, scope Scope) ([]*MemoryFile, []Problem, error) {
	si := scopeIndex(scope)
	names, probs, err := s.memoryNames(scope)
	if errors.Is(err, fs.ErrNotExist) {
		s.noteSkipped(si, nil)
		return nil, nil, nil
	}
	if err != nil {
		err = fmt.Errorf("memcore: list %s: %w", scope, err)
		s.noteSkipped(si, []Problem{{Path: s.Dir(scope), Scope: scope, Err: err}})
		return nil, nil, err
	}
	s.mu.Lock()
	s.gen[si]++
	gen := s.gen[si]
	s.mu.Unlock()

	ms, loadProbs := s.loadAll(ctx, scope, names, gen)
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	s.forgetUnseen(si, gen)
	sortMemories(ms)
	probs = append(probs, loadProbs...)
	s.noteSkipped(si, probs)
	return ms, probs, nil
}

// memoryNames returns the names of the memory files in scope's folder:
// regular files named <id>.md. Symbolic links and other .md files are
// skipped with a log line and returned as problems.
func (s *FileStore) memoryNames(scope Scope) ([]string, []Problem, error) {
	if err := s.checkDir(scope); err != nil {
		return nil, nil, err
	}
	dir := s.dirs[scopeIndex(scope)]
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(entries))
	var probs []Problem
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		path := filepath.Join(dir, name)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			s.log.Warn().Str("path", path).Msg("memcore: skipping a symbolic link: memory files must be regular files")
			probs = append(probs, Problem{Path: path, Scope: scope, Err: fmt.Errorf("%w: a symbolic link (never followed: memory files must be regular files)", ErrMalformed)})
		case !e.Type().IsRegular():
			probs = append(probs, Problem{Path: path, Scope: scope, Err: fmt.Errorf("%w: not a regular file", ErrMalformed)})
		case ValidateID(strings.TrimSuffix(name, ".md")) != nil:
			s.log.Debug().Str("path", path).Msg("memcore: skipping a file whose name is not a memory id")
			probs = append(probs, Problem{Path: path, Scope: scope, Err: fmt.Errorf("%w: the file name is not <memory id>.md, so it is not read as a memory", ErrInvalidID)})
		default:
			names = append(names, name)
		}
	}
	return names, probs, nil
}

// loadAll loads the named files of scope's folder on up to s.workers
// goroutines, marking their cache entries with gen, and returns copies of
// the memories in no particular order, and the problems: of the files that
// cannot be loaded, each logged, and the repairs of those served. It stops
// early when ctx ends.
func (s *FileStore) loadAll(ctx context.Context, scope Scope, names []string, gen uint64) ([]*MemoryFile, []Problem) {
	results := make([]*MemoryFile, len(names))
	repairs := make([][]string, len(names))
	errs := make([]error, len(names))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := min(s.workers, len(names)); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(names) || ctx.Err() != nil {
					return
				}
				m, rs, err := s.load(scope, names[i], gen, false)
				if err != nil {
					errs[i] = err
					continue
				}
				results[i], repairs[i] = m.Clone(), rs
			}
		}()
	}
	wg.Wait()
	out := results[:0]
	var probs []Problem
	for i, m := range results {
		switch err := errs[i]; {
		case m != nil:
			out = append(out, m)
			for _, r := range repairs[i] {
				probs = append(probs, Problem{Path: filepath.Join(s.dirs[scopeIndex(scope)], names[i]), Scope: scope,
					Err: fmt.Errorf("%w: %s", ErrInvalidMemory, r), Served: true})
			}
		case err == nil, errors.Is(err, fs.ErrNotExist): // not reached, or deleted since ReadDir
		default:
			s.log.Warn().Err(err).Str("scope", string(scope)).Msg("memcore: skipping memory file")
			probs = append(probs, Problem{Path: filepath.Join(s.dirs[scopeIndex(scope)], names[i]), Scope: scope, Err: err})
		}
	}
	return out, probs
}

// forgetUnseen drops from the cache of scope index si the files the list
// of generation gen did not see: they were deleted.
func (s *FileStore) forgetUnseen(si int, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, c := range s.cache[si] {
		if c.gen < gen {
			delete(s.cache[si], name)
		}
	}
}

// isTempName reports whether name has the shape of Write's temporary files,
// ".tmp-<id>-<random digits>", so that nobody else's file is ever removed.
func isTempName(name string) bool {
	rest, ok := strings.CutPrefix(name, tmpPrefix)
	if !ok || len(rest) < idLen+2 || ValidateID(rest[:idLen]) != nil || rest[idLen] != '-' {
		return false
	}
	for _, c := range rest[idLen+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// removeStaleTemps deletes temporary files left in dir by writers that were
// killed more than staleTmpAge ago.
func (s *FileStore) removeStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !isTempName(e.Name()) || e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < staleTmpAge {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if err := os.Remove(path); err == nil {
			s.log.Info().Str("path", path).Msg("memcore: removed a temporary file left by an interrupted write")
		}
	}
}

var _ MemoryStore = (*FileStore)(nil)
