package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/live"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/spool"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/anchor"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/settings"
	"github.com/rs/zerolog"
)

// Options configure [Open]. The zero value is ready to use.
type Options struct {
	// Logger receives the libraries' logs; the zero Logger logs nothing.
	Logger zerolog.Logger
	// Progress, when set, is told how far an index build that embeds
	// memories has got (see memretrieve.Config.BuildProgress).
	Progress func(done, total int)
	// HTTPClient sends the requests of the openai and gemini providers;
	// nil means a default client.
	HTTPClient *http.Client
	// Now is the clock of the memories Remember and Forget write; nil
	// means time.Now.
	Now func() time.Time
	// LiveDir, when set, keeps the memories the retrieval engines index
	// in memory, exact by the system's file events rather than by reading
	// the folders before each recall and search (package live), with its
	// barrier files in this folder, which must be private to the user and
	// outside any repository. For a long-lived process: the MCP server, the
	// recall server. Where the events cannot be had, the workspace reads
	// the folders as without it ([Workspace.Live] says why).
	LiveDir string
	// DeferCreate opens the memory folders as they are, creating none: a
	// folder that does not exist holds no memories, and the first write
	// into it creates it (memcore.FileStoreConfig.DeferCreate). Nor is the
	// user's capture key made, in the user's folder, until something needs
	// it: queueing a capture, recording an approval, or naming the
	// embedding cache's files for memories to cache — an engine made over
	// no memories then keeps its cache in memory for the workspace's life.
	// For the commands that read memories, or change ones that exist, and
	// must leave no folder behind where there was none.
	DeferCreate bool
}

// Workspace is the memory folders of one place — a repository's and the
// user's, as the settings locate them — with the model providers and the
// retrieval engines made on first use. Its methods are safe for concurrent
// use.
type Workspace struct {
	settings *settings.Settings
	store    *memcore.FileStore
	// writer writes every memory the workspace writes, as capture does.
	writer *memcore.Writer
	opts   Options

	mu     sync.Mutex
	models *Models
	// engines by purpose: recall (the settings' retrieval) and search.
	engines map[string]*memretrieve.Engine
	// built holds, by purpose, the folders' state that engine's index
	// was last built from; builds counts the index builds.
	built  map[string]folderState
	builds atomic.Int64
	// buildMu serialises engine's look at the folders and the build that
	// follows.
	buildMu sync.Mutex
	// live is the memory folders kept in memory (Options.LiveDir), nil
	// when off or lost; liveErr says why it is off.
	live    *live.Folders
	liveErr error

	// approvals is the user's record of approved texts, made on first use
	// (see Workspace.approved); stated the record of the texts written into
	// the repository from the user's own words (see Workspace.statedTexts).
	approvalsOnce sync.Once
	approvals     *textRecord
	statedOnce    sync.Once
	stated        *textRecord

	// captureKey signs and checks the capture queue's entries, loaded on
	// first use (see Workspace.loadKey); keyDone says it was.
	keyMu   sync.Mutex
	keyDone bool
	key     spool.Key
	keyErr  error

	// anchors checks the repository's anchors (see Workspace.Anchors).
	anchorsMu   sync.Mutex
	anchorsMade bool
	anchors     *anchor.Checker
}

// Open opens the memory folders s locates (s.Paths): the repository's,
// unless the command runs outside a repository (the repository scope is
// then off), and the user's, creating them unless opts.DeferCreate. It
// fails when neither folder is known (no home folder and no repository),
// when a folder cannot be created, and when a memory folder, or the .forge
// folder holding it, is a symbolic link (an error wrapping
// memcore.ErrUnsafeFolder): nothing is made where the link points.
func Open(s *settings.Settings, opts Options) (*Workspace, error) {
	if s == nil {
		return nil, errors.New("workspace: no settings")
	}
	if s.Paths.RepoDir == "" && s.Paths.UserDir == "" {
		return nil, fmt.Errorf("no memory folder: there is no home folder and %w", s.Paths.RequireRepo())
	}
	if err := checkFolders(s.Paths); err != nil {
		return nil, err
	}
	store, err := memcore.NewFileStore(s.Paths.RepoDir, s.Paths.UserDir, memcore.FileStoreConfig{Logger: opts.Logger, DeferCreate: opts.DeferCreate})
	if err != nil {
		return nil, fmt.Errorf("opening the memory folders: %w", err)
	}
	w := &Workspace{settings: s, store: store, opts: opts, engines: map[string]*memretrieve.Engine{}, built: map[string]folderState{}}
	if w.writer, err = memcore.NewWriter(hookedStore{statingStore{store, w}}, memcore.WriterConfig{Review: s.Review, Logger: opts.Logger}); err != nil {
		return nil, err
	}
	w.openLive()
	return w, nil
}

// checkFolders refuses memory folders that are, or sit in a .forge folder
// that is, a symbolic link (see spool.CheckMemoryDir), naming the setting
// that chooses another folder.
func checkFolders(p settings.Paths) error {
	for _, f := range []struct{ dir, flag, env string }{
		{p.RepoDir, "--repo-dir", "FORGEMEM_REPO_DIR"},
		{p.UserDir, "--user-dir", "FORGEMEM_USER_DIR"},
	} {
		if f.dir == "" {
			continue
		}
		if err := spool.CheckMemoryDir(f.dir); err != nil {
			return fmt.Errorf("opening the memory folders: %w, or name a real folder with %s (or %s)", err, f.flag, f.env)
		}
	}
	return nil
}

// Settings returns the settings the workspace was opened with.
func (w *Workspace) Settings() *settings.Settings { return w.settings }

// Store returns the memory folders' store.
func (w *Workspace) Store() *memcore.FileStore { return w.store }

// Close stops the retrieval engines made so far, waiting until ctx ends
// for a build in progress.
func (w *Workspace) Close(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	for name, e := range w.engines {
		errs = append(errs, e.Close(ctx))
		delete(w.engines, name)
		delete(w.built, name)
	}
	if w.live != nil {
		errs = append(errs, w.live.Close())
		w.live, w.liveErr = nil, errClosed
	}
	return errors.Join(errs...)
}

// Models returns the provider's clients, made on first use (see
// [NewModels]).
func (w *Workspace) Models() (*Models, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.models != nil {
		return w.models, nil
	}
	m, err := NewModels(w.settings, w.opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	w.models = m
	return m, nil
}

// requireScope checks that scope's folder is on.
func (w *Workspace) requireScope(scope memcore.Scope) error {
	if w.store.Dir(scope) != "" {
		return nil
	}
	if scope == memcore.ScopeRepo {
		return fmt.Errorf("the repo scope is off: %w", w.settings.Paths.RequireRepo())
	}
	return fmt.Errorf("the user scope is off: there is no home folder; pass --user-dir")
}

// snapshot is the store's memories with their graph.
type snapshot struct {
	all []*memcore.MemoryFile
	g   *memcore.Graph
}

// load lists every memory of both scopes.
func (w *Workspace) load(ctx context.Context) (*snapshot, error) {
	all, err := w.store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the memories: %w", err)
	}
	return &snapshot{all: all, g: memcore.NewGraph(all)}, nil
}

// engine returns the engine named purpose, made with cfg on first use,
// with its index reflecting the store now: the engine is kept for the
// workspace's life, and its index is rebuilt only when the memory folders
// changed since its last build (see folderState), whoever changed them. A
// build that could not embed every memory is an error wrapping
// ErrProvider, returned with the engine, which searches what it could
// index.
func (w *Workspace) engine(ctx context.Context, purpose string, cfg memretrieve.Config, llm memcore.LLMProvider, emb memcore.Embedder) (*memretrieve.Engine, error) {
	return w.engineOver(ctx, purpose, nil, cfg, llm, emb)
}

// engineConfig is cfg with what this workspace gives every engine: its
// logger and progress bar, the hold on a repository's memories that read
// like instructions (see heldBy), and the secret that names the embedding
// cache's files. The secret comes from the user's capture key, so a repository that
// commits its .cache folder cannot have its vectors or gate calibration
// read (memretrieve.Config.CacheSecret). Without a user's memory folder to
// keep the key in, the files are named as the library names them, with a
// warning in the log.
func (w *Workspace) engineConfig(cfg memretrieve.Config) memretrieve.Config {
	cfg = w.engineChecks(cfg)
	key, err := w.captureKey()
	if err != nil {
		w.opts.Logger.Warn().Err(err).Msg("forgemem: the embedding cache's files are named without the user's key; a repository's committed cache would be read")
		return cfg
	}
	cfg.CacheSecret = key.Derive(cacheSecretPurpose)
	return cfg
}

// engineChecks is cfg with the logger, the progress bar and the checks this
// workspace gives every engine (see engineConfig), without the secret.
func (w *Workspace) engineChecks(cfg memretrieve.Config) memretrieve.Config {
	cfg.Logger, cfg.BuildProgress = w.opts.Logger, w.opts.Progress
	cfg.HoldCheck, cfg.StatedCheck = repoHold{w}, repoStated{w}
	return cfg
}

// nothingToCache reports whether an engine over store is to keep its
// embedding cache in memory, named by no secret: in a workspace opened
// with Options.DeferCreate whose user has no capture key yet, when store
// holds no memory. There is nothing to cache, and making the key to name
// the cache's files would write into the user's folder for nothing.
func (w *Workspace) nothingToCache(ctx context.Context, store memcore.MemoryStore) bool {
	if _, err := w.existingKey(); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	ms, err := store.List(ctx)
	return err == nil && len(ms) == 0
}

// noCacheFolders is a store whose memories a retrieval engine caches in
// memory only: it hides the folders (memretrieve.ScopeDirs) of the store
// it holds.
type noCacheFolders struct{ memcore.MemoryStore }

// cacheSecretPurpose is what the capture key is derived for to name the
// embedding cache's files (see Workspace.engineConfig).
const cacheSecretPurpose = "embedding cache file names"

// engineOver is engine over store, a view of the workspace's folders; nil
// means the store of the workspace's engines (see engineStore), chosen
// once the folders were looked at.
func (w *Workspace) engineOver(ctx context.Context, purpose string, store memcore.MemoryStore, cfg memretrieve.Config, llm memcore.LLMProvider, emb memcore.Embedder) (*memretrieve.Engine, error) {
	// One call at a time looks and builds: a call that waited for
	// another's build then finds the index up to date.
	w.buildMu.Lock()
	defer w.buildMu.Unlock()
	// The state is read before the build, so that a change made during
	// the build makes the next call build again.
	state, known := w.freshness(ctx)
	if store == nil {
		store = w.engineStore()
	}
	w.mu.Lock()
	if last, ok := w.built[purpose]; ok && known && last == state && w.engines[purpose] != nil {
		e := w.engines[purpose]
		w.mu.Unlock()
		return e, nil
	}
	e := w.engines[purpose]
	if e == nil {
		var ecfg memretrieve.Config
		if w.nothingToCache(ctx, store) {
			ecfg, store = w.engineChecks(cfg), noCacheFolders{store}
		} else {
			ecfg = w.engineConfig(cfg)
		}
		var err error
		e, err = memretrieve.NewEngine(store, emb, llm, ecfg)
		if err != nil {
			w.mu.Unlock()
			return nil, fmt.Errorf("making the retrieval engine: %w", err)
		}
		w.engines[purpose] = e
	}
	w.mu.Unlock()
	w.builds.Add(1)
	if err := e.Rebuild(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The index was published without what could not be embedded (or
		// not at all: a turn then says SkipNoIndex); the next call builds
		// again.
		return e, fmt.Errorf("%w: indexing the memories: %w", ErrProvider, err)
	}
	if known {
		w.mu.Lock()
		w.built[purpose] = state
		w.mu.Unlock()
	}
	return e, nil
}

// now is the clock of written memories: UTC, whole seconds, as memcore
// writes times.
func (w *Workspace) now() time.Time {
	t := time.Now()
	if w.opts.Now != nil {
		t = w.opts.Now()
	}
	return t.UTC().Truncate(time.Second)
}
