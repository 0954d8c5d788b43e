package membench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/anchor"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/providers/fake"
)

// AnchorCheckMaxP99Ms is how much checking the anchors of the memories a
// turn is about to inject may add to the turn at p99, in milliseconds.
const AnchorCheckMaxP99Ms = 1.0

// The synthetic repository the anchors name: packages of Go files, each
// file declaring funcsPerFile functions.
const (
	anchorPackages     = 50
	anchorFilesPerPkg  = 20
	anchorFuncsPerFile = 5
)

// Anchors holds the figures of memories' anchors: their extraction when a
// memory is written, and their check at each turn.
type Anchors struct {
	// Memories is the number of memories, all with anchors in the
	// synthetic repository; RepoFiles the number of its files.
	Memories  int `json:"memories"`
	RepoFiles int `json:"repo_files"`
	// Git says whether the repository was a git work tree, so that renames
	// were followed (git was found).
	Git bool `json:"git"`
	// AnchorsPerMemory is the mean number of anchors recorded.
	AnchorsPerMemory float64 `json:"anchors_per_memory"`
	// ExtractP50Ms and ExtractP99Ms are percentiles of Checker.Anchors
	// over every memory written (a capture's or a remember's cost per
	// memory); ExtractWalkP50Ms and ExtractWalkP99Ms those of the memories
	// that name a symbol without its file, which walk the repository.
	ExtractP50Ms     float64 `json:"extract_p50_ms"`
	ExtractP99Ms     float64 `json:"extract_p99_ms"`
	ExtractWalkP50Ms float64 `json:"extract_walk_p50_ms"`
	ExtractWalkP99Ms float64 `json:"extract_walk_p99_ms"`
	// StaleMemories counts the memories a check finds outdated once files
	// were deleted, renamed and edited.
	StaleMemories int `json:"stale_memories"`
	// CheckTurnP50Ms and CheckTurnP99Ms are percentiles of the time one
	// turn spends checking the anchors of the memories it is about to
	// inject (memretrieve's Config.StaleCheck), in a process that checked
	// every memory once (its caches warm, as in a long-lived agent or MCP
	// server); CheckedPerTurn and StalePerTurn the mean memories checked
	// and labelled per turn.
	CheckTurnP50Ms float64 `json:"check_turn_p50_ms"`
	CheckTurnP99Ms float64 `json:"check_turn_p99_ms"`
	CheckedPerTurn float64 `json:"checked_per_turn"`
	StalePerTurn   float64 `json:"stale_per_turn"`
	// CheckFirstTurnMs is the check of the first turn's memories in a new
	// process, every cache empty (git asked once): what a hook that lives
	// one turn pays.
	CheckFirstTurnMs float64 `json:"check_first_turn_ms"`
	// CheckAllMs is a check of every memory at once in a new process (what
	// validate does).
	CheckAllMs float64 `json:"check_all_ms"`
}

// measureAnchors writes cfg.Memories memories naming files and functions of
// a synthetic repository, timing the extraction of their anchors; then
// deletes, renames and edits some files, and measures, turn by turn, what
// checking the anchors of each turn's memories adds to it.
func measureAnchors(ctx context.Context, cfg Config, dir string, r *Report, progress func(string, ...any)) error {
	root := filepath.Join(dir, "anchors")
	files, err := writeAnchorRepo(root)
	if err != nil {
		return err
	}
	a := &r.Anchors
	a.Memories, a.RepoFiles = cfg.Memories, len(files)
	run := gitIn(root)
	a.Git = run("init", "-q") == nil && run("add", "-A") == nil && run("commit", "-qm", "repository") == nil
	checker, err := anchor.New(anchor.DefaultConfig(root))
	if err != nil {
		return err
	}
	store, err := memcore.NewFileStore(filepath.Join(root, ".forge", "memory"), filepath.Join(dir, "anchors-home", ".forge", "memory"), memcore.FileStoreConfig{})
	if err != nil {
		return err
	}
	progress("extracting the anchors of %d memories over a repository of %d files", cfg.Memories, len(files))
	if err := writeAnchoredMemories(ctx, cfg.Memories, checker, store, a); err != nil {
		return err
	}
	changeAnchorRepo(root, run, a.Git)
	progress("checking anchors turn by turn (%d turns)", cfg.Retrieves)
	return measureChecks(ctx, cfg, root, store, a)
}

// writeAnchorRepo writes the synthetic repository and returns its Go files.
func writeAnchorRepo(root string) ([]string, error) {
	var files []string
	for p := range anchorPackages {
		for f := range anchorFilesPerPkg {
			rel := fmt.Sprintf("pkg%02d/file%02d.go", p, f)
			var b strings.Builder
			fmt.Fprintf(&b, "package pkg%02d\n", p)
			for k := range anchorFuncsPerFile {
				fmt.Fprintf(&b, "\n// %s does step %d.\nfunc %s(n int) int {\n\treturn n + %d\n}\n", funcName(p, f, k), k, funcName(p, f, k), k)
			}
			path := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				return nil, err
			}
			files = append(files, rel)
		}
	}
	return files, nil
}

func funcName(p, f, k int) string { return fmt.Sprintf("HandleP%02dF%02dStep%d", p, f, k) }

// gitIn returns a runner of git in dir with no user or system
// configuration, or one that fails when git is not installed.
func gitIn(dir string) func(args ...string) error {
	return func(args ...string) error {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=membench", "GIT_AUTHOR_EMAIL=membench@example.invalid",
			"GIT_COMMITTER_NAME=membench", "GIT_COMMITTER_EMAIL=membench@example.invalid")
		return cmd.Run()
	}
}

// anchoredText is the i-th memory's text: a function and its file, or,
// one memory in ten, the function alone (found by a walk of the tree),
// among words of the vocabulary.
func anchoredText(rng *rand.Rand, i int) string {
	p, f, k := rng.IntN(anchorPackages), rng.IntN(anchorFilesPerPkg), rng.IntN(anchorFuncsPerFile)
	var b strings.Builder
	if i%10 == 9 {
		fmt.Fprintf(&b, "Prefer %s for this step:", funcName(p, f, k))
	} else {
		fmt.Fprintf(&b, "Call `%s` in pkg%02d/file%02d.go:", funcName(p, f, k), p, f)
	}
	for range 20 + rng.IntN(30) {
		b.WriteString(" " + words[rng.IntN(len(words))])
	}
	fmt.Fprintf(&b, " (note %d).", i)
	return b.String()
}

// writeAnchoredMemories writes n repo-scope memories with the anchors the
// checker extracts, timing each extraction.
func writeAnchoredMemories(ctx context.Context, n int, checker *anchor.Checker, store *memcore.FileStore, a *Anchors) error {
	rng := newRand(23)
	var all, walks []float64
	total := 0
	for i := range n {
		text := anchoredText(rng, i)
		var res anchor.Result
		d, _ := timed(func() error {
			res = checker.Anchors(ctx, text, nil, nil)
			return nil
		})
		if len(res.Anchors) == 0 {
			return fmt.Errorf("memory %d: no anchor extracted from %q", i, text)
		}
		all = append(all, d/1e6)
		if i%10 == 9 {
			walks = append(walks, d/1e6)
		}
		total += len(res.Anchors)
		t := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
		m := &memcore.MemoryFile{Meta: memcore.MemoryMeta{
			ID: memcore.NewMemoryID(), CreatedAt: t, Version: 1, Scope: memcore.ScopeRepo,
			Category: memcore.CategoryProjectConventions, Trigger: memcore.TriggerManual, Anchors: res.Anchors,
		}, Content: text}
		if err := writeFile(store, m); err != nil {
			return err
		}
	}
	slices.Sort(all)
	slices.Sort(walks)
	a.ExtractP50Ms, a.ExtractP99Ms = percentile(all, 50), percentile(all, 99)
	a.ExtractWalkP50Ms, a.ExtractWalkP99Ms = percentile(walks, 50), percentile(walks, 99)
	a.AnchorsPerMemory = float64(total) / float64(n)
	return nil
}

// changeAnchorRepo deletes one package's files in twenty, renames another
// twentieth with git (moves them without git when there is none), and
// rewrites a third twentieth without their first function.
func changeAnchorRepo(root string, run func(...string) error, git bool) {
	for p := range anchorPackages {
		for f := range anchorFilesPerPkg {
			rel := fmt.Sprintf("pkg%02d/file%02d.go", p, f)
			path := filepath.Join(root, filepath.FromSlash(rel))
			switch (p*anchorFilesPerPkg + f) % 20 {
			case 0:
				os.Remove(path)
			case 1:
				to := fmt.Sprintf("pkg%02d/moved%02d.go", p, f)
				if !git || run("mv", rel, to) != nil {
					os.Rename(path, filepath.Join(root, filepath.FromSlash(to)))
				}
			case 2:
				data, _ := os.ReadFile(path)
				os.WriteFile(path, []byte(strings.Replace(string(data), funcName(p, f, 0)+"(", "removed(", 1)), 0o644)
			}
		}
	}
}

// timedChecker is a StaleChecker that adds the time each check takes to
// the current turn's.
type timedChecker struct {
	c       *anchor.Checker
	mu      sync.Mutex
	elapsed time.Duration
	checked int
	stale   int
}

func (t *timedChecker) Stale(ctx context.Context, m *memcore.MemoryFile) string {
	start := time.Now()
	reason := t.c.Stale(ctx, m)
	d := time.Since(start)
	t.mu.Lock()
	t.elapsed += d
	t.checked++
	if reason != "" {
		t.stale++
	}
	t.mu.Unlock()
	return reason
}

// turn returns the time spent, memories checked and found stale since the
// last call, and starts counting anew.
func (t *timedChecker) turn() (time.Duration, int, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, n, s := t.elapsed, t.checked, t.stale
	t.elapsed, t.checked, t.stale = 0, 0, 0
	return d, n, s
}

// measureChecks checks every memory once with a new process's checker of
// root (what validate does, every cache empty), then runs turns of an
// engine whose StaleCheck is that checker, caches warm, timing each turn's
// checks; and times the checks of the first turn's memories by another new
// checker (a process that lives one turn, as an agent hook does).
func measureChecks(ctx context.Context, cfg Config, root string, store *memcore.FileStore, a *Anchors) error {
	checker, err := anchor.New(anchor.DefaultConfig(root))
	if err != nil {
		return err
	}
	all, err := store.List(ctx)
	if err != nil {
		return err
	}
	d, _ := timed(func() error {
		for _, m := range all {
			if checker.Stale(ctx, m) != "" {
				a.StaleMemories++
			}
		}
		return nil
	})
	a.CheckAllMs = d / 1e6
	first, err := turnChecks(ctx, cfg, store, checker, a)
	if err != nil {
		return err
	}
	cold, err := anchor.New(anchor.DefaultConfig(root))
	if err != nil {
		return err
	}
	d, _ = timed(func() error {
		for _, m := range first {
			cold.Stale(ctx, m)
		}
		return nil
	})
	a.CheckFirstTurnMs = d / 1e6
	return nil
}

// turnChecks runs cfg.Retrieves turns of an identity engine over store
// whose StaleCheck is checker, records the percentiles of each turn's
// checks, and returns the first turn's memories.
func turnChecks(ctx context.Context, cfg Config, store *memcore.FileStore, checker *anchor.Checker, a *Anchors) ([]*memcore.MemoryFile, error) {
	emb, err := fake.NewEmbedder(fake.EmbedderConfig{Dimension: cfg.Dim})
	if err != nil {
		return nil, err
	}
	tc := &timedChecker{c: checker}
	ecfg := identity(memretrieve.DefaultConfig())
	ecfg.StaleCheck = tc
	engine, err := memretrieve.NewEngine(store, emb, nil, ecfg)
	if err != nil {
		return nil, err
	}
	defer engine.Close(ctx)
	if err := engine.Rebuild(ctx); err != nil {
		return nil, err
	}
	var lat []float64
	var first []*memcore.MemoryFile
	checked, stale := 0, 0
	for i := range cfg.Retrieves {
		res, err := engine.Retrieve(ctx, fmt.Sprintf("anchors-turn-%d", i), conversation(8, uint64(i)))
		if err != nil {
			return nil, err
		}
		d, n, s := tc.turn()
		if n == 0 || len(res.Memories) == 0 {
			return nil, fmt.Errorf("turn %d checked nothing; the measurement would not be of a real turn", i)
		}
		if i == 0 {
			for _, rc := range res.Memories {
				first = append(first, rc.Memory)
			}
		}
		lat = append(lat, float64(d)/1e6)
		checked += n
		stale += s
	}
	slices.Sort(lat)
	a.CheckTurnP50Ms, a.CheckTurnP99Ms = percentile(lat, 50), percentile(lat, 99)
	a.CheckedPerTurn, a.StalePerTurn = float64(checked)/float64(len(lat)), float64(stale)/float64(len(lat))
	return first, nil
}

// RunAnchors measures the anchors alone (see Run), at cfg's Memories and
// Retrieves, and returns a report holding only their figures and misses.
func RunAnchors(ctx context.Context, cfg Config) (*Report, error) {
	r := &Report{Machine: machine()}
	r.Config.Dim, r.Config.K, r.Config.Queries, r.Config.Memories = cfg.Dim, cfg.K, cfg.Queries, cfg.Memories
	dir := cfg.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "membench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "membench: "+format+"\n", args...)
		}
	}
	if err := measureAnchors(ctx, cfg, dir, r, progress); err != nil {
		return nil, fmt.Errorf("anchors: %w", err)
	}
	r.Misses = anchorMisses(r)
	if r.Misses == nil {
		r.Misses = []string{}
	}
	return r, nil
}

// anchorMisses lists the anchor targets the figures miss.
func anchorMisses(r *Report) []string {
	var out []string
	if r.Anchors.CheckTurnP99Ms > AnchorCheckMaxP99Ms {
		out = append(out, fmt.Sprintf("anchors: checking a turn's memories takes %.2f ms at p99 (target ≤ %.0f ms)", r.Anchors.CheckTurnP99Ms, AnchorCheckMaxP99Ms))
	}
	if r.Anchors.Memories > 0 && r.Anchors.StaleMemories == 0 {
		out = append(out, "anchors: no memory found stale after the repository changed")
	}
	return out
}
