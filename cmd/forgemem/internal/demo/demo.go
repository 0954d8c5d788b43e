package demo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/providers/fake"
)

// Options configure [Run].
type Options struct {
	// Dir is the folder the memory files are kept in: Dir/repo stands for the
	// repository's .forge/memory folder and Dir/user for the user's
	// ~/.forge/memory. It is created if it does not exist and must be
	// empty if it does, so that the demo never mixes its memories with
	// others. The files stay there after Run. Empty means a new temporary
	// folder, removed when Run returns.
	Dir string
}

// firstSession is when the first session happens. The clock is fixed, so
// every run writes the same dates.
var firstSession = time.Date(2025, time.March, 3, 9, 12, 0, 0, time.UTC)

// closeTimeout bounds the wait for a capture pipeline to stop when a
// session ends early.
const closeTimeout = 10 * time.Second

// Run plays the demo's scripted agent sessions through forgemem's capture
// pipeline, file store and retrieval engine, with offline fake models, and
// writes what happens to w: each session's conversation, the memories
// recalled for its turns, the memory files capture wrote, and at the end
// where the files are. It makes no network call and needs no API key.
//
// Run returns when the demo is over, with every pipeline and engine it
// started closed, or when ctx ends, with ctx's error. Its other errors are
// a Dir it may not use and failures to write to w or to the folder.
func Run(ctx context.Context, w io.Writer, opts Options) error {
	_, err := run(ctx, w, opts)
	return err
}

// record is what a run did, for the tests to check beyond its output.
type record struct {
	// dir is the memory folder, absolute.
	dir      string
	sessions []sessionRecord
	// llm is the scripted classifier, which recorded every request.
	llm *fake.LLM
}

// sessionRecord is what one session did.
type sessionRecord struct {
	// written are the memories capture wrote, in the order shown.
	written []*memcore.MemoryFile
	// recalled are the non-empty retrieval results of the session's turns.
	recalled []*memretrieve.Result
	stats    memcapture.Stats
}

// runner plays the sessions of one run.
type runner struct {
	out *printer
	dir string
	// temp is true when dir is a temporary folder, removed at the end.
	temp bool
	llm  *fake.LLM
	emb  *fake.Embedder
	rec  *record
	// stated holds the texts capture wrote into the repository from the
	// user's words, over the sessions.
	stated statedTexts
}

func run(ctx context.Context, w io.Writer, opts Options) (rec *record, err error) {
	dir, temp, err := prepareDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	if temp {
		defer func() {
			if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
				err = fmt.Errorf("removing the temporary folder: %w", rerr)
			}
		}()
	}
	llm, emb, err := newModels(script)
	if err != nil {
		return nil, fmt.Errorf("making the offline models: %w", err)
	}
	r := &runner{out: &printer{w: w}, dir: dir, temp: temp, llm: llm, emb: emb,
		rec: &record{dir: dir, llm: llm}}
	r.intro()
	for i, s := range script {
		if err := r.session(ctx, i, s); err != nil {
			return r.rec, err
		}
	}
	if err := r.summary(ctx); err != nil {
		return r.rec, err
	}
	if r.out.err != nil {
		return r.rec, fmt.Errorf("writing the output: %w", r.out.err)
	}
	return r.rec, nil
}

// prepareDir returns the absolute memory folder for dir, creating it, and
// whether it is a new temporary folder.
func prepareDir(dir string) (string, bool, error) {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "forgemem-demo-")
		if err != nil {
			return "", false, fmt.Errorf("making a temporary folder: %w", err)
		}
		return tmp, true, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false, fmt.Errorf("the folder --dir names: %w", err)
	}
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(abs, 0o750); err != nil {
			return "", false, fmt.Errorf("making the folder --dir names: %w", err)
		}
	case err != nil:
		return "", false, fmt.Errorf("reading the folder --dir names: %w", err)
	case len(entries) > 0:
		return "", false, fmt.Errorf("%s is not empty; give the demo a new or empty folder", abs)
	}
	return abs, false, nil
}

// store opens the memory folders, as each agent process does.
func (r *runner) store() (*memcore.FileStore, error) {
	s, err := memcore.NewFileStore(filepath.Join(r.dir, "repo"), filepath.Join(r.dir, "user"), memcore.FileStoreConfig{})
	if err != nil {
		return nil, fmt.Errorf("opening the memory folders: %w", err)
	}
	return s, nil
}

// retrievalConfig is the engine's configuration: the defaults, searching
// with the conversation itself, as no hypothesis model is used offline,
// and the user's repository memories labelled the user's (see
// statedTexts).
func (r *runner) retrievalConfig() memretrieve.Config {
	cfg := memretrieve.DefaultConfig()
	cfg.Mode = memretrieve.ModeIdentity
	cfg.StatedCheck = &r.stated
	return cfg
}

// statedTexts holds the texts of the repository memories that capture
// wrote from the user's words, as the forgemem command records
// them: the block labels those "stated by the user", any other repository
// memory that says so a contributor's (memretrieve.Config.StatedCheck).
type statedTexts struct {
	mu    sync.Mutex
	texts map[string]bool
}

// Stated implements memretrieve.StatedChecker.
func (s *statedTexts) Stated(m *memcore.MemoryFile) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.texts[strings.TrimSpace(m.Content)]
}

// add records text as the user's.
func (s *statedTexts) add(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.texts == nil {
		s.texts = map[string]bool{}
	}
	s.texts[strings.TrimSpace(text)] = true
}

// statingStore records in stated, after each write, the text of a
// repository memory that the user stated (in force or waiting for review).
type statingStore struct {
	memcore.MemoryStore
	stated *statedTexts
}

func (s statingStore) Write(ctx context.Context, m *memcore.MemoryFile) error {
	if err := s.MemoryStore.Write(ctx, m); err != nil {
		return err
	}
	if mt := m.Meta; mt.Scope == memcore.ScopeRepo && mt.Source == memcore.SourceUser && !mt.Retired {
		s.stated.add(m.Content)
	}
	return nil
}

func (r *runner) intro() {
	r.out.para("forgemem demo: four sessions of a coding agent with long-term memory, over two " +
		"weeks. They run through forgemem's real capture pipeline, memory files and retrieval " +
		"engine, offline: the classifier model is a scripted fake that answers as a model would, " +
		"and the embeddings come from a deterministic hashing fake, which matches words rather " +
		"than meaning (so relevance scores are low). No network, no API key.")
	r.out.para("Each session is a new agent process, which indexes the memory folders when it " +
		"starts. When the user's message arrives, the agent " +
		"recalls the memories relevant to the conversation and adds them to its context; after " +
		"each turn it hands the conversation to capture, which asks the classifier in the " +
		"background what is worth remembering and writes it as memory files.")
	r.out.printf("Memory folder: %s\n", r.dir)
	r.out.printf("  repo/  stands for the repository's .forge/memory/ (scope repo, shared with the team)\n")
	r.out.printf("  user/  stands for ~/.forge/memory/ (scope user: this person, in every project)\n")
}

// session plays session n.
func (r *runner) session(ctx context.Context, n int, s session) error {
	at := firstSession.Add(s.after)
	r.out.heading(fmt.Sprintf("Session %d, %s: %s", n+1, at.Format("Mon 2 Jan 2006, 15:04 UTC"), s.title))
	rec := sessionRecord{}

	store, err := r.store()
	if err != nil {
		return err
	}
	before, err := store.List(ctx)
	if err != nil {
		return fmt.Errorf("listing the memories: %w", err)
	}
	// The index is built once, synchronously, when the session starts, so
	// every turn of a session recalls from the same index whatever capture
	// is doing, and each run prints the same; capture is therefore given
	// no rebuild callback.
	engine, err := memretrieve.NewEngine(store, r.emb, nil, r.retrievalConfig())
	if err != nil {
		return fmt.Errorf("making the retrieval engine: %w", err)
	}
	defer func() { _ = engine.Close(context.WithoutCancel(ctx)) }() // never started: nothing to wait for
	if err := engine.Rebuild(ctx); err != nil {
		return fmt.Errorf("building the retrieval index: %w", err)
	}
	// Memories written during a session carry the session's date.
	p, err := memcapture.NewPipeline(r.llm, statingStore{store, &r.stated}, memcapture.Config{
		ClassifierModel: classifierModel,
		Embedder:        r.emb,
		Clock:           func() time.Time { return at },
	})
	if err != nil {
		return fmt.Errorf("making the capture pipeline: %w", err)
	}
	obs, err := memcapture.NewObserver(p)
	if err != nil {
		return fmt.Errorf("making the observer: %w", err)
	}
	if err := p.Start(ctx); err != nil {
		return fmt.Errorf("starting capture: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
			defer cancel()
			_ = p.Close(cctx) // the session already failed; this only stops the goroutine
		}
	}()

	if err := r.converse(ctx, s, engine, obs, len(before), &rec); err != nil {
		return err
	}
	// Close hands the waiting conversation to the classifier and waits
	// for the last pass: what capture wrote is on disk when it returns.
	closed = true
	if err := p.Close(ctx); err != nil {
		return fmt.Errorf("closing capture: %w", err)
	}
	rec.stats = p.Stats()
	if err := r.showWritten(ctx, store, before, &rec); err != nil {
		return err
	}
	r.rec.sessions = append(r.rec.sessions, rec)
	return nil
}

// converse plays the turns of s: each user message, the memories recalled
// for the turn, the assistant's reply, and the hand-off to capture.
func (r *runner) converse(ctx context.Context, s session, engine *memretrieve.Engine, obs *memcapture.Observer, stored int, rec *sessionRecord) error {
	var window []memcore.Message
	for i, t := range s.turns {
		window = append(window, memcore.Message{Role: memcore.RoleUser, Content: t.user})
		r.out.labelled("User:      ", t.user)
		r.out.printf("\n")

		res, err := engine.Retrieve(ctx, fmt.Sprintf("%s-turn-%d", s.id, i+1), window)
		if err != nil {
			return fmt.Errorf("recalling memories: %w", err)
		}
		if res.Injection != "" {
			rec.recalled = append(rec.recalled, res)
		}
		r.showRecalled(i, res, stored)

		window = append(window, memcore.Message{Role: memcore.RoleAssistant, Content: t.assistant})
		r.out.labelled("Assistant: ", t.assistant)
		r.out.printf("\n")
		obs.OnTurnComplete(window, s.id)
	}
	return nil
}

// showRecalled shows what retrieval found for turn i: the whole injection
// block on the session's first turn, a line for each memory on later ones;
// that nothing was found, on the first turn only.
func (r *runner) showRecalled(i int, res *memretrieve.Result, stored int) {
	switch {
	case res.Injection == "" && i > 0:
		return // said at the first turn
	case res.Injection == "" && stored == 0:
		r.out.labelled("  ", "Recalled for this turn: nothing yet, the memory folders are empty.")
	case res.Injection == "" && len(res.Dropped) > 0:
		r.out.labelled("  ", fmt.Sprintf("Recalled for this turn: nothing. The search ranked %s, but none is "+
			"relevant enough: the relevance gate lets a memory in only when it matches this turn "+
			"better than unrelated text matches these memories, and these are about other things.",
			plural(len(res.Dropped), "memory", "memories")))
	case res.Injection == "":
		r.out.labelled("  ", "Recalled for this turn: nothing relevant.")
	case i == 0:
		r.out.labelled("  ", fmt.Sprintf("Recalled for this turn: %s, in the block the agent adds to its context:",
			plural(len(res.Memories), "memory", "memories")))
		r.out.framed("injection block", res.Injection)
	default:
		r.out.labelled("  ", fmt.Sprintf("Recalled for this turn: %s, best first:",
			plural(len(res.Memories), "memory", "memories")))
		for k, m := range res.Memories {
			line := fmt.Sprintf("    [%d] %.2f %s: %s", k+1, m.Score, m.Memory.Meta.Category, m.Memory.Title())
			r.out.printf("%s\n", termtext.Clip(line, width))
		}
	}
	r.out.printf("\n")
}

// showWritten shows the memory files written during the session, each as
// it is on disk.
func (r *runner) showWritten(ctx context.Context, store *memcore.FileStore, before []*memcore.MemoryFile, rec *sessionRecord) error {
	after, err := store.List(ctx)
	if err != nil {
		return fmt.Errorf("listing the memories: %w", err)
	}
	old := make(map[string]bool, len(before))
	for _, m := range before {
		old[m.Meta.ID] = true
	}
	for _, m := range after {
		if !old[m.Meta.ID] {
			rec.written = append(rec.written, m)
		}
	}
	order := scriptOrder()
	slices.SortStableFunc(rec.written, func(a, b *memcore.MemoryFile) int {
		return cmp.Or(cmp.Compare(order(a), order(b)), cmp.Compare(a.Meta.ID, b.Meta.ID))
	})

	st := rec.stats
	if len(rec.written) == 0 {
		r.out.para("Capture wrote nothing: the classifier found nothing new worth keeping, as in most " +
			"sessions.")
		return nil
	}
	summary := fmt.Sprintf("Capture ran in the background after each turn; by the end of the session "+
		"it had written %s", plural(len(rec.written), "memory file", "memory files"))
	if st.Redactions > 0 {
		summary += fmt.Sprintf(" and replaced %s with %s", plural(int(st.Redactions), "secret", "secrets"),
			redact.Placeholder)
	}
	r.out.para(summary + ":")
	byID := make(map[string]*memcore.MemoryFile, len(after))
	for _, m := range after {
		byID[m.Meta.ID] = m
	}
	for _, m := range rec.written {
		data, err := os.ReadFile(r.path(store, m))
		if err != nil {
			return fmt.Errorf("reading a memory file: %w", err)
		}
		r.out.framed(r.rel(store, m), string(data))
		if m.Meta.Supersedes != nil {
			if pred, ok := byID[*m.Meta.Supersedes]; ok {
				r.out.labelled("  ", fmt.Sprintf("Version %d, superseding %s (kept as history).",
					m.Meta.Version, r.rel(store, pred)))
			}
		}
		r.out.printf("\n")
	}
	return nil
}

// scriptOrder returns a function giving a memory's position in the script,
// found by its first line, so that a session's memories are shown in the
// order the conversation made them.
func scriptOrder() func(*memcore.MemoryFile) int {
	pos := make(map[string]int)
	for _, s := range script {
		for _, t := range s.turns {
			for _, m := range t.remember {
				pos[firstLine(m.content)] = len(pos)
			}
		}
	}
	return func(m *memcore.MemoryFile) int {
		if p, ok := pos[m.Title()]; ok {
			return p
		}
		return len(pos)
	}
}

// path is the file of memory m.
func (r *runner) path(store *memcore.FileStore, m *memcore.MemoryFile) string {
	return filepath.Join(store.Dir(m.Meta.Scope), m.Meta.ID+".md")
}

// rel is the file of memory m relative to the memory folder, with forward
// slashes.
func (r *runner) rel(store *memcore.FileStore, m *memcore.MemoryFile) string {
	p, err := filepath.Rel(r.dir, r.path(store, m))
	if err != nil {
		return r.path(store, m)
	}
	return filepath.ToSlash(p)
}

// summary shows what is on disk at the end, checks the files and the
// classifier's requests for the tool output and the files for secrets, and
// says how to go on.
func (r *runner) summary(ctx context.Context) error {
	r.out.heading("At the end")
	store, err := r.store()
	if err != nil {
		return err
	}
	all, err := store.List(ctx)
	if err != nil {
		return fmt.Errorf("listing the memories: %w", err)
	}
	counts := map[memcore.Scope]int{}
	var toolFiles, secretFiles int
	for _, m := range all {
		counts[m.Meta.Scope]++
		data, err := os.ReadFile(r.path(store, m))
		if err != nil {
			return fmt.Errorf("reading a memory file: %w", err)
		}
		if strings.Contains(string(data), toolOutput) {
			toolFiles++
		}
		if len(redact.Find(string(data))) > 0 {
			secretFiles++
		}
	}
	toolRequests := 0
	for _, req := range r.llm.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, toolOutput) {
				toolRequests++
				break
			}
		}
	}
	var redacted uint64
	for _, s := range r.rec.sessions {
		redacted += s.stats.Redactions
	}

	r.out.printf("%s in %s:\n", plural(len(all), "memory file", "memory files"), r.dir)
	r.out.printf("  repo/  %s\n", plural(counts[memcore.ScopeRepo], "file", "files"))
	r.out.printf("  user/  %s\n\n", plural(counts[memcore.ScopeUser], "file", "files"))
	r.out.para(fmt.Sprintf("They hold %s: a changed memory keeps each version as a file, and only "+
		"the newest is current. Retrieval caches its vectors in repo/.cache/ and user/.cache/: "+
		"derived data, rebuilt when missing, never committed.",
		plural(len(memcore.NewGraph(all).Heads()), "current memory", "current memories")))
	r.out.para(fmt.Sprintf("Checked just now: the tool output of session 1 is in %s and in %s; "+
		"%s holds a secret (capture replaced %s with %s).",
		noneOr(toolRequests, "classifier request", "classifier requests"),
		noneOr(toolFiles, "memory file", "memory files"),
		noneOr(secretFiles, "memory file", "memory files"),
		plural(int(redacted), "secret", "secrets"), redact.Placeholder))
	r.out.para("With real models, choose a provider and its models in ~/.forge/config.yaml — " +
		"memory.provider (openai or gemini), memory.classifier_model, memory.retrieval_model, " +
		"memory.embedding_model — and put the API key in OPENAI_API_KEY or GEMINI_API_KEY.")
	if r.temp {
		r.out.para("The temporary folder is removed now; run forgemem demo --dir DIR to keep the files.")
	} else {
		r.out.para("The files stay in " + r.dir + ": read them, edit them, or delete the folder.")
	}
	return nil
}
