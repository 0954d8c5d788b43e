package memretrieve

import (
	"context"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/forgemem/forgemem/memcore"
)

// wordsEmbedder is a deterministic bag-of-words embedder: texts sharing
// words have similar vectors.
type wordsEmbedder struct{}

func (wordsEmbedder) Model() string { return "words-test-256" }

func (wordsEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, 256)
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%256]++
		}
		v[255] += 0.01 // never the zero vector
		out[i] = v
	}
	return out, nil
}

// handWrite puts m into the store's folder as a person or a git merge
// would, bypassing Write (which refuses a second successor of a version).
func handWrite(t *testing.T, s *memcore.FileStore, m *memcore.MemoryFile) {
	t.Helper()
	data, err := memcore.Serialize(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(m.Meta.Scope), m.Meta.ID+".md"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Two branches, merged in git, each changed one memory: the chain forks.
// Retrieval resolves it to the head every reader picks (same version: the
// newer), and shows the other branch's change in the history, marked as a
// parallel change, instead of losing it.
func TestForkedChainShowsTheLosingBranch(t *testing.T) {
	store := newFileStore(t)
	v1 := mem(testID(301), memcore.ScopeRepo, memcore.CategoryProjectConventions, 1, 0,
		"Indent Go test fixtures with tabs.")
	ours := supersede(mem(testID(302), memcore.ScopeRepo, memcore.CategoryProjectConventions, 2, 10,
		"Indent Go test fixtures with tabs, YAML fixtures with two spaces."), v1)
	theirs := supersede(mem(testID(303), memcore.ScopeRepo, memcore.CategoryProjectConventions, 2, 12,
		"Indent Go test fixtures with tabs, and keep golden files byte for byte."), v1)
	write(t, store, v1, ours)
	handWrite(t, store, theirs) // the merged branch's version

	cfg := identityConfig()
	cfg.HopDepth = 0
	cfg.MinScore = 0.3
	e := newEngine(t, store, wordsEmbedder{}, nil, cfg)
	rebuild(t, e)
	res, err := e.Retrieve(context.Background(), "t", userWindow("How do we indent YAML fixtures, with two spaces?"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res); !slices.Equal(got, []string{theirs.Meta.ID}) {
		t.Fatalf("memories = %v, want only the chain's head %s (the newer of two version 2s)", got, theirs.Meta.ID)
	}
	var hist []string
	for _, h := range res.Memories[0].History {
		hist = append(hist, h.Meta.ID)
	}
	if want := []string{v1.Meta.ID, ours.Meta.ID}; !slices.Equal(hist, want) {
		t.Errorf("history = %v, want %v: the first version and the losing branch, oldest first", hist, want)
	}
	for _, s := range []string{
		"History, oldest first (changed 2 times):",
		"  - version 1, 2025-01-15: " + v1.Content,
		"  - version 2, 2025-01-25, " + lostNote + ": " + ours.Content,
		"  - version 2, 2025-01-27: the current text above.",
	} {
		if !strings.Contains(res.Injection, s+"\n") {
			t.Errorf("injection lacks the line %q:\n%s", s, res.Injection)
		}
	}
}

// Two branches that made the same change (two teammates approving one
// memory each on their own branch) fork the chain with one text: the
// history does not show the other branch's copy as a parallel change the
// current text does not include, since it does.
func TestForkOfOneChangeIsOneChange(t *testing.T) {
	store := newFileStore(t)
	v1 := mem(testID(321), memcore.ScopeRepo, memcore.CategoryProjectConventions, 1, 0, "Release notes go in CHANGELOG.md.")
	text := "Release notes go in CHANGELOG.md, one section per module."
	ours := supersede(mem(testID(322), memcore.ScopeRepo, memcore.CategoryProjectConventions, 2, 10, text), v1)
	theirs := supersede(mem(testID(323), memcore.ScopeRepo, memcore.CategoryProjectConventions, 2, 12, text), v1)
	write(t, store, v1, ours)
	handWrite(t, store, theirs)

	cfg := identityConfig()
	cfg.HopDepth = 0
	e := newEngine(t, store, wordsEmbedder{}, nil, cfg)
	rebuild(t, e)
	res, err := e.Retrieve(context.Background(), "t", userWindow("Where do release notes go, one section per module?"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 1 {
		t.Fatalf("memories = %v, want the chain's head", ids(res))
	}
	var hist []string
	for _, h := range res.Memories[0].History {
		hist = append(hist, h.Meta.ID)
	}
	if want := []string{v1.Meta.ID}; !slices.Equal(hist, want) {
		t.Errorf("history = %v, want %v: the first version only", hist, want)
	}
	if strings.Contains(res.Injection, lostNote) || !strings.Contains(res.Injection, "History, oldest first (changed 1 time):") {
		t.Errorf("injection shows the same change twice:\n%s", res.Injection)
	}
}

// An edge recorded on the losing branch of a fork is history, like one on a
// superseded version: the memory it points at does not list it as a link.
func TestInjectionLeavesOutEdgesOfLosingBranches(t *testing.T) {
	target := mem(testID(311), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 0, "Golden files live in testdata.")
	v1 := mem(testID(312), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 1, "Tests compare output with golden files.")
	lost := relate(supersede(mem(testID(313), memcore.ScopeRepo, memcore.CategoryPatterns, 2, 2,
		"Tests compare output with golden files, updated with -update."), v1), memcore.RelationshipRefines, target.Meta.ID)
	head := relate(supersede(mem(testID(314), memcore.ScopeRepo, memcore.CategoryPatterns, 2, 3,
		"Tests compare output with golden files, reviewed in every diff."), v1), memcore.RelationshipRefines, target.Meta.ID)
	g := memcore.NewGraph([]*memcore.MemoryFile{target, v1, lost, head})
	recs := []Recalled{{Memory: target, Score: 0.9, Via: Via{Matched: target.Meta.ID}}}
	text, kept := newRenderer(g, recs).inject(1_000_000)
	if kept != 1 {
		t.Fatalf("kept %d", kept)
	}
	if strings.Contains(text, lost.Meta.ID) {
		t.Errorf("the losing branch's edge is listed:\n%s", text)
	}
	if !strings.Contains(text, "  - is refined by "+head.Meta.ID) {
		t.Errorf("the head's edge is not listed:\n%s", text)
	}
}
