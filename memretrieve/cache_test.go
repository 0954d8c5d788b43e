package memretrieve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// listStore is a MemoryStore whose memories the test sets directly,
// deletions included (a person deleting files).
type listStore struct {
	mu sync.Mutex
	ms []*memcore.MemoryFile
}

func (s *listStore) set(ms []*memcore.MemoryFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ms = slices.Clone(ms)
}

func (s *listStore) Write(ctx context.Context, m *memcore.MemoryFile) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ms = append(s.ms, m.Clone())
	return nil
}

func (s *listStore) Read(ctx context.Context, id string) (*memcore.MemoryFile, error) {
	return nil, memcore.ErrNotFound
}

func (s *listStore) List(ctx context.Context) ([]*memcore.MemoryFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*memcore.MemoryFile, len(s.ms))
	for i, m := range s.ms {
		out[i] = m.Clone()
	}
	return out, nil
}

func (s *listStore) ListByScope(ctx context.Context, scope memcore.Scope) ([]*memcore.MemoryFile, error) {
	all, _ := s.List(ctx)
	return slices.DeleteFunc(all, func(m *memcore.MemoryFile) bool { return m.Meta.Scope != scope }), nil
}

// warmEngine builds an engine over store with a fresh fake embedder and
// returns it with the number of texts it embedded.
func warmEngine(t testing.TB, store memcore.MemoryStore, emb memcore.Embedder, opts ...cfgOpt) *Engine {
	t.Helper()
	e := newEngine(t, store, emb, nil, cacheConfig(), opts...)
	rebuild(t, e)
	return e
}

func TestCacheRestartEmbedsNothing(t *testing.T) {
	dir := t.TempDir()
	store := memcore.NewMemStore()
	write(t, store, genMemories(1000, 42)...)

	emb1 := newEmbedder(t)
	e1 := warmEngine(t, store, emb1, withCacheDir(dir))
	if emb1.Inputs() != 1000 || emb1.Calls() != 4 {
		t.Fatalf("cold build: %d texts in %d calls, want 1000 in 4 batches of at most 256", emb1.Inputs(), emb1.Calls())
	}

	emb2 := newEmbedder(t)
	e2 := warmEngine(t, store, emb2, withCacheDir(dir))
	if emb2.Inputs() != 0 {
		t.Fatalf("restart with nothing changed embedded %d texts, want 0", emb2.Inputs())
	}
	if e2.snap.Load().idx.Len() != 1000 {
		t.Fatalf("restarted index holds %d memories, want 1000", e2.snap.Load().idx.Len())
	}
	w := userWindow("error wrap sentinel logging zerolog")
	r1, _ := e1.Retrieve(context.Background(), "t", w)
	r2, _ := e2.Retrieve(context.Background(), "t", w)
	if r1.Injection == "" || r1.Injection != r2.Injection {
		t.Fatalf("a restarted engine retrieves differently:\n%s\n---\n%s", r1.Injection, r2.Injection)
	}

	// One new memory costs one text, in the running engine and after a restart.
	write(t, store, mem(memcore.NewMemoryID(), memcore.ScopeRepo, memcore.CategoryPatterns, 1, 3, "A brand new memory about flaky tests."))
	before := emb2.Inputs()
	rebuild(t, e2)
	if got := emb2.Inputs() - before; got != 1 {
		t.Fatalf("one new memory embedded %d texts, want 1", got)
	}
	emb3 := newEmbedder(t)
	warmEngine(t, store, emb3, withCacheDir(dir))
	if emb3.Inputs() != 0 {
		t.Fatalf("restart after the new memory embedded %d texts, want 0", emb3.Inputs())
	}
	// Another engine that was running when the memory was added finds its
	// vector in the file instead of embedding it.
	before = emb1.Inputs()
	rebuild(t, e1)
	if got := emb1.Inputs() - before; got != 0 {
		t.Fatalf("an engine sharing the cache embedded %d texts, want 0", got)
	}
}

func TestCacheInScopeFolders(t *testing.T) {
	fs := newFileStore(t)
	ms := genMemories(20, 5)
	write(t, fs, ms...)
	emb := newEmbedder(t)
	warmEngine(t, fs, emb)
	if emb.Inputs() != 20 {
		t.Fatalf("embedded %d, want 20", emb.Inputs())
	}
	for _, s := range memcore.Scopes() {
		dir := filepath.Join(fs.Dir(s), ".cache")
		ign, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
		if err != nil || !slices.Contains(strings.Split(string(ign), "\n"), "*") {
			t.Errorf("%s: .gitignore = %q, %v; want a line '*'", s, ign, err)
		}
		info, err := os.Stat(filepath.Join(dir, cacheFileName(emb.Model(), nil)))
		if err != nil {
			t.Fatalf("%s: no vector file: %v", s, err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s: vector file mode %v, want 0600", s, info.Mode().Perm())
		}
		if d, _ := os.Stat(dir); d.Mode().Perm() != 0o750 {
			t.Errorf("%s: cache folder mode %v, want 0750", s, d.Mode().Perm())
		}
		// Each scope's file holds that scope's ten memories.
		var st decodeState
		data, _ := os.ReadFile(filepath.Join(dir, cacheFileName(emb.Model(), nil)))
		decodeRecords(data, emb.Model(), 0, &st, func(contentKey, []float32) {})
		if st.records != 10 {
			t.Errorf("%s: %d vectors in its cache, want its 10 memories", s, st.records)
		}
	}
	listed, err := fs.List(context.Background())
	if err != nil || len(listed) != 20 {
		t.Fatalf("the store lists %d memories (%v) with the cache in its folders, want 20", len(listed), err)
	}
	emb2 := newEmbedder(t)
	warmEngine(t, fs, emb2)
	if emb2.Inputs() != 0 {
		t.Fatalf("restart over a FileStore embedded %d texts, want 0", emb2.Inputs())
	}
}

func TestCacheModelChange(t *testing.T) {
	dir := t.TempDir()
	store := memcore.NewMemStore()
	write(t, store, genMemories(30, 6)...)
	warmEngine(t, store, newEmbedder(t), withCacheDir(dir))
	oldFile := filepath.Join(dir, cacheFileName(newEmbedder(t).Model(), nil))
	before, err := os.ReadFile(oldFile)
	if err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name string
		emb  memcore.Embedder
		dim  int
	}{
		{"same dimension, other name", renamedEmbedder{newEmbedder(t), "another-model"}, fake.DefaultDimension},
		{"other dimension", newEmbedder(t, fake.EmbedderConfig{Dimension: 64}), 64},
	} {
		t.Run(tt.name, func(t *testing.T) {
			counted := &countingEmbedder{Embedder: tt.emb}
			e := warmEngine(t, store, counted, withCacheDir(dir))
			if counted.inputs.Load() != 30 {
				t.Fatalf("a new model embedded %d texts, want all 30", counted.inputs.Load())
			}
			if got := e.snap.Load().idx.Dim; got != tt.dim {
				t.Fatalf("index dimension %d, want %d: the old model's vectors were used", got, tt.dim)
			}
			res, _ := e.Retrieve(context.Background(), "", userWindow(genContent(randFor(1))))
			if len(res.Memories) == 0 {
				t.Errorf("no memories with the new model")
			}
		})
	}
	after, _ := os.ReadFile(oldFile)
	if !bytes.Equal(before, after) {
		t.Errorf("the old model's cache file was changed")
	}

	// Within one engine, an embedder reporting a new model re-embeds too.
	emb := &countingEmbedder{Embedder: newEmbedder(t)}
	e := warmEngine(t, store, emb, withCacheDir(dir))
	if emb.inputs.Load() != 0 {
		t.Fatalf("warm start embedded %d", emb.inputs.Load())
	}
	other := &countingEmbedder{Embedder: renamedEmbedder{newEmbedder(t), "third-model"}}
	e.embedder = other
	rebuild(t, e)
	if other.inputs.Load() != 30 {
		t.Fatalf("model change in a running engine embedded %d, want 30", other.inputs.Load())
	}
}

// countingEmbedder counts the texts it is asked to embed.
type countingEmbedder struct {
	memcore.Embedder
	inputs counter
}

type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) Add(n int) {
	c.mu.Lock()
	c.n += n
	c.mu.Unlock()
}

func (c *counter) Load() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.inputs.Add(len(texts))
	return c.Embedder.Embed(ctx, texts)
}

func keyOf(m *memcore.MemoryFile) contentKey {
	return sha256.Sum256([]byte(strings.TrimSpace(m.Content)))
}

func TestCacheDamageIsAMiss(t *testing.T) {
	const n = 10
	model := newEmbedder(t).Model()
	dim := fake.DefaultDimension
	vec := func(m *memcore.MemoryFile, d int) []float32 {
		v, _ := newEmbedder(t, fake.EmbedderConfig{Dimension: d}).Embed(context.Background(), []string{strings.TrimSpace(m.Content)})
		return v[0]
	}
	tests := []struct {
		name string
		// damage changes the warm cache file (data) of the memories ms.
		damage func(data []byte, ms []*memcore.MemoryFile) []byte
		want   int // texts embedded afterwards
		// query: the damage is only detectable from the embedder's own
		// vectors, so the first query finds it and the next build repairs.
		query bool
	}{
		{"intact", func(d []byte, _ []*memcore.MemoryFile) []byte { return d }, 0, false},
		{"empty file", func([]byte, []*memcore.MemoryFile) []byte { return nil }, n, false},
		{"garbage", func(d []byte, _ []*memcore.MemoryFile) []byte {
			g := make([]byte, len(d))
			r := rand.New(rand.NewPCG(1, 1))
			for i := range g {
				g[i] = byte(r.IntN(256))
			}
			return g
		}, n, false},
		{"truncated last record", func(d []byte, _ []*memcore.MemoryFile) []byte { return d[:len(d)-100] }, 1, false},
		{"truncated inside a record header", func(d []byte, _ []*memcore.MemoryFile) []byte {
			return d[:len(d)-(recHeaderLen+33+4*dim)+5]
		}, 1, false},
		{"flipped byte in a record", func(d []byte, _ []*memcore.MemoryFile) []byte {
			d = slices.Clone(d)
			d[len(d)/2] ^= 0x40
			return d
		}, 1, false},
		{"garbage before the records", func(d []byte, _ []*memcore.MemoryFile) []byte {
			return append([]byte("FMV1\xff\xff\xff\xffjunkjunk FMV1"), d...)
		}, 0, false},
		{"garbage after the records", func(d []byte, _ []*memcore.MemoryFile) []byte {
			return append(slices.Clone(d), "FMV1\x10\x00\x00\x00trailing junk"...)
		}, 0, false},
		{"foreign model header", func(_ []byte, ms []*memcore.MemoryFile) []byte {
			d := appendHeaderRecord(nil, "someone-else", dim)
			for _, m := range ms {
				d, _ = appendVectorRecord(d, nil, keyOf(m), vec(m, dim))
			}
			return d
		}, n, false},
		{"header of another dimension", func(_ []byte, ms []*memcore.MemoryFile) []byte {
			d := appendHeaderRecord(nil, model, 8)
			for _, m := range ms {
				d, _ = appendVectorRecord(d, nil, keyOf(m), vec(m, 8))
			}
			return d
		}, n, true},
		{"one record of a wrong dimension", func(_ []byte, ms []*memcore.MemoryFile) []byte {
			d := appendHeaderRecord(nil, model, dim)
			for i, m := range ms {
				v := vec(m, dim)
				if i == 3 {
					v = vec(m, dim+1)
				}
				d, _ = appendVectorRecord(d, nil, keyOf(m), v)
			}
			return d
		}, 1, false},
		{"records before the header", func(_ []byte, ms []*memcore.MemoryFile) []byte {
			var d []byte
			d, _ = appendVectorRecord(d, nil, keyOf(ms[0]), vec(ms[0], dim))
			d = appendHeaderRecord(d, model, dim)
			for _, m := range ms[1:] {
				d, _ = appendVectorRecord(d, nil, keyOf(m), vec(m, dim))
			}
			return d
		}, 1, false},
		{"zero vector", func(_ []byte, ms []*memcore.MemoryFile) []byte {
			d := appendHeaderRecord(nil, model, dim)
			for i, m := range ms {
				v := vec(m, dim)
				if i == 0 {
					v = make([]float32, dim)
				}
				d, _ = appendVectorRecord(d, nil, keyOf(m), v)
			}
			return d
		}, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			store := memcore.NewMemStore()
			ms := genMemories(n, 9)
			write(t, store, ms...)
			warmEngine(t, store, newEmbedder(t), withCacheDir(dir))
			path := filepath.Join(dir, cacheFileName(model, nil))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tt.damage(data, ms), 0o600); err != nil {
				t.Fatal(err)
			}

			emb := newEmbedder(t)
			e := newEngine(t, store, emb, nil, cacheConfig(), withCacheDir(dir))
			if err := e.Rebuild(context.Background()); err != nil {
				t.Fatalf("Rebuild over a damaged cache = %v, want nil", err)
			}
			queries := 0
			if tt.query {
				res, err := e.Retrieve(context.Background(), "", userWindow(ms[0].Content))
				if err != nil || !noVectorHits(res) || res.VectorSkipped != SkipEmbedderError || !errors.Is(res.Err, memcore.ErrInvalidResponse) || !strings.Contains(res.Err.Error(), "dimension") {
					t.Fatalf("query against vectors of another dimension: %+v, %v; want no vector hits, an embedder error naming the dimension", res, err)
				}
				queries = 1
				rebuild(t, e)
			}
			if emb.Inputs()-queries != tt.want {
				t.Errorf("embedded %d texts, want %d", emb.Inputs()-queries, tt.want)
			}
			if got := e.snap.Load().idx.Len(); got != n {
				t.Errorf("index holds %d memories, want %d", got, n)
			}
			// What was re-embedded was written back usably: a restart
			// embeds nothing.
			again := newEmbedder(t)
			warmEngine(t, store, again, withCacheDir(dir))
			if again.Inputs() != 0 {
				t.Errorf("restart after the repair embedded %d texts, want 0", again.Inputs())
			}
		})
	}
}

func TestCacheCompaction(t *testing.T) {
	dir := t.TempDir()
	all := genMemories(400, 11)
	store := &listStore{}
	store.set(all)
	emb := newEmbedder(t)
	e := warmEngine(t, store, emb, withCacheDir(dir))
	path := filepath.Join(dir, cacheFileName(emb.Model(), nil))
	full, _ := os.Stat(path)

	store.set(all[:50]) // a person deleted 350 memory files
	rebuild(t, e)
	small, _ := os.Stat(path)
	if small.Size()*4 > full.Size() {
		t.Fatalf("cache of %d bytes after deleting most memories (was %d): not compacted", small.Size(), full.Size())
	}
	var st decodeState
	data, _ := os.ReadFile(path)
	decodeRecords(data, emb.Model(), 0, &st, func(contentKey, []float32) {})
	if st.records != 50 {
		t.Fatalf("compacted cache holds %d vectors, want the 50 in use", st.records)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	again := newEmbedder(t)
	warmEngine(t, store, again, withCacheDir(dir))
	if again.Inputs() != 0 {
		t.Errorf("restart after compaction embedded %d texts, want 0", again.Inputs())
	}
	// Appending after compaction works.
	store.set(all[:51])
	rebuild(t, e)
	if emb.Inputs() != 401 {
		t.Errorf("one memory back embedded %d texts, want 1", emb.Inputs()-400)
	}
}

// TestCacheNotCompactedIntoAnEmptiedFolder: most memories going at once is
// what compacts the cache, and what rm -r of the memory folder looks like
// to a running engine: once the cache folder was emptied, a rebuild writes
// nothing into it (no compaction, no calibration), which would make the
// folder's removal fail.
func TestCacheNotCompactedIntoAnEmptiedFolder(t *testing.T) {
	dir := t.TempDir()
	all := genMemories(400, 11)
	store := &listStore{}
	store.set(all)
	e := warmEngine(t, store, newEmbedder(t), withCacheDir(dir))
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		if err := os.Remove(filepath.Join(dir, en.Name())); err != nil {
			t.Fatal(err)
		}
	}
	store.set(all[:50])
	rebuild(t, e)
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the emptied cache folder holds %v (%v) after most memories went, want nothing", entries, err)
	}
}

func TestCacheDimensionChangeUnderSameModel(t *testing.T) {
	for _, trigger := range []string{"query", "new memory"} {
		t.Run(trigger, func(t *testing.T) {
			dir := t.TempDir()
			store := memcore.NewMemStore()
			write(t, store, genMemories(12, 13)...)
			warmEngine(t, store, renamedEmbedder{newEmbedder(t, fake.EmbedderConfig{Dimension: 32}), "m"}, withCacheDir(dir))

			emb := &countingEmbedder{Embedder: renamedEmbedder{newEmbedder(t, fake.EmbedderConfig{Dimension: 48}), "m"}}
			e := warmEngine(t, store, emb, withCacheDir(dir))
			switch trigger {
			case "query":
				if emb.inputs.Load() != 0 {
					t.Fatalf("embedded %d before any query", emb.inputs.Load())
				}
				res, err := e.Retrieve(context.Background(), "", userWindow("error wrap"))
				if err != nil || !noVectorHits(res) || res.VectorSkipped != SkipEmbedderError || !errors.Is(res.Err, memcore.ErrInvalidResponse) || !strings.Contains(res.Err.Error(), "dimension") {
					t.Fatalf("a query of another dimension: %+v, %v; want no vector hits, an embedder error naming the dimension", res, err)
				}
			case "new memory":
				write(t, store, mem(memcore.NewMemoryID(), memcore.ScopeUser, memcore.CategoryPatterns, 1, 1, "A fresh memory."))
			}
			rebuild(t, e)
			if got := e.snap.Load().idx.Dim; got != 48 {
				t.Fatalf("index dimension %d, want 48", got)
			}
			res, err := e.Retrieve(context.Background(), "", userWindow(genContent(randFor(2))))
			if err != nil || len(res.Memories) == 0 {
				t.Fatalf("after re-embedding: %+v, %v; want memories", res, err)
			}
			again := &countingEmbedder{Embedder: renamedEmbedder{newEmbedder(t, fake.EmbedderConfig{Dimension: 48}), "m"}}
			warmEngine(t, store, again, withCacheDir(dir))
			if again.inputs.Load() != 0 {
				t.Errorf("restart embedded %d texts, want 0", again.inputs.Load())
			}
		})
	}
}

func TestCacheSharedByTwoEngines(t *testing.T) {
	fs := newFileStore(t)
	a, b := newEmbedder(t), newEmbedder(t)
	ea := newEngine(t, fs, a, nil, cacheConfig(), withEmbedBatch(7))
	eb := newEngine(t, fs, b, nil, cacheConfig(), withEmbedBatch(5))
	var wg sync.WaitGroup
	for i, e := range []*Engine{ea, eb} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j, m := range genMemories(40, uint64(100+i)) {
				if err := fs.Write(context.Background(), m); err != nil {
					t.Error(err)
					return
				}
				if j%4 == 0 {
					if err := e.Rebuild(context.Background()); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	rebuild(t, ea)
	rebuild(t, eb)
	if got := a.Inputs() + b.Inputs(); got < 80 || got > 160 {
		t.Errorf("the two engines embedded %d texts, want between 80 and 160", got)
	}
	fresh := newEmbedder(t)
	e := warmEngine(t, fs, fresh)
	if fresh.Inputs() != 0 || e.snap.Load().idx.Len() != 80 {
		t.Fatalf("restart after two engines shared the cache: embedded %d, indexed %d; want 0 and 80", fresh.Inputs(), e.snap.Load().idx.Len())
	}
}

// childEnv names the variables a re-executed test binary reads in
// TestCacheChildProcess.
const (
	childRepoEnv = "MEMRETRIEVE_CHILD_REPO"
	childUserEnv = "MEMRETRIEVE_CHILD_USER"
	childSeedEnv = "MEMRETRIEVE_CHILD_SEED"
)

// TestCacheChildHelper is the other process of TestCacheChildProcess; it
// does nothing in a normal run.
func TestCacheChildHelper(t *testing.T) {
	repo := os.Getenv(childRepoEnv)
	if repo == "" {
		t.Skip("runs only as the child of TestCacheChildProcess")
	}
	seed, _ := strconv.ParseUint(os.Getenv(childSeedEnv), 10, 64)
	fs, err := memcore.NewFileStore(repo, os.Getenv(childUserEnv), memcore.FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, fs, newEmbedder(t), nil, cacheConfig(), withEmbedBatch(3))
	for j, m := range genMemories(60, seed) {
		write(t, fs, m)
		if j%5 == 0 {
			rebuild(t, e)
		}
	}
	rebuild(t, e)
}

func TestCacheChildProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts another process")
	}
	fs := newFileStore(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCacheChildHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		childRepoEnv+"="+fs.Dir(memcore.ScopeRepo), childUserEnv+"="+fs.Dir(memcore.ScopeUser), childSeedEnv+"=777")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, fs, newEmbedder(t), nil, cacheConfig(), withEmbedBatch(3))
	for j, m := range genMemories(60, 778) {
		write(t, fs, m)
		if j%5 == 0 {
			rebuild(t, e)
		}
	}
	rebuild(t, e)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child process: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "PASS") {
		t.Fatalf("child process did not run its part:\n%s", out.String())
	}
	fresh := newEmbedder(t)
	r := warmEngine(t, fs, fresh)
	if fresh.Inputs() != 0 || r.snap.Load().idx.Len() != 120 {
		t.Fatalf("after two processes shared the cache: embedded %d, indexed %d; want 0 and 120", fresh.Inputs(), r.snap.Load().idx.Len())
	}
}

func TestDecodeRecordsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const dim = 9
	var buf []byte
	buf = appendHeaderRecord(buf, "m", dim)
	want := make(map[contentKey][]float32)
	for i := range 20 {
		v := randomUnit(r, dim)
		k := sha256.Sum256([]byte(fmt.Sprint(i)))
		want[k] = v
		buf, _ = appendVectorRecord(buf, nil, k, v)
	}
	var st decodeState
	got := make(map[contentKey][]float32)
	settled := decodeRecords(buf, "m", 0, &st, func(k contentKey, v []float32) { got[k] = v })
	if settled != len(buf) || !st.header || st.dim != dim || st.records != 20 {
		t.Fatalf("settled %d of %d, state %+v", settled, len(buf), st)
	}
	for k, v := range want {
		g := got[k]
		for i := range v {
			if d := g[i] - v[i]; d > 1e-6 || d < -1e-6 {
				t.Fatalf("vector %x differs: %v vs %v", k[:4], g, v)
			}
		}
	}
	// Read in two steps, split inside a record: the first step settles
	// only up to the last complete record.
	var st2 decodeState
	cut := len(buf) - 50
	n := 0
	s1 := decodeRecords(buf[:cut], "m", 0, &st2, func(contentKey, []float32) { n++ })
	s2 := decodeRecords(buf[s1:], "m", 0, &st2, func(contentKey, []float32) { n++ })
	if s1 >= cut || s1+s2 != len(buf) || n != 20 {
		t.Fatalf("split read: settled %d then %d of %d, %d vectors", s1, s2, len(buf), n)
	}
}

func FuzzDecodeRecords(f *testing.F) {
	const dim = 4
	good := appendHeaderRecord(nil, "m", dim)
	good, _ = appendVectorRecord(good, nil, contentKey{1}, []float32{1, 0, 0, 0})
	good, _ = appendVectorRecord(good, nil, contentKey{2}, []float32{0, 1, 0, 0})
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(append([]byte("FMV1\x05\x00\x00\x00"), good...))
	f.Add([]byte("FMV1"))
	f.Add(appendHeaderRecord(nil, "other", dim))
	f.Fuzz(func(t *testing.T, data []byte) {
		var st decodeState
		settled := decodeRecords(data, "m", 0, &st, func(k contentKey, v []float32) {
			if !st.header || st.foreign || len(v) != st.dim {
				t.Fatalf("vector of %d values used with state %+v", len(v), st)
			}
			var sum float64
			for _, x := range v {
				sum += float64(x) * float64(x)
			}
			if sum < 0.999 || sum > 1.001 {
				t.Fatalf("vector of squared length %v used", sum)
			}
		})
		if settled < 0 || settled > len(data) {
			t.Fatalf("settled %d of %d bytes", settled, len(data))
		}
	})
}

func TestCacheRemovesStaleTempFiles(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".tmp-vectors-111")
	fresh := filepath.Join(dir, ".tmp-vectors-222")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	store := memcore.NewMemStore()
	write(t, store, genMemories(3, 1)...)
	warmEngine(t, store, newEmbedder(t), withCacheDir(dir))
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a temporary file of a compaction killed two hours ago is still there (%v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a recent temporary file (maybe another process's compaction at work) was removed: %v", err)
	}
}
