package memretrieve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
	"github.com/forgemem/forgemem/memretrieve/internal/vecmath"
	"github.com/forgemem/forgemem/providers/fake"
	"github.com/rs/zerolog"
)

// baseTime is the creation time of test memories.
var baseTime = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)

// testID returns a fixed, valid memory id for n.
func testID(n int) string {
	return fmt.Sprintf("mem_00000000-0000-4000-8000-%012d", n)
}

// mem builds a valid memory.
func mem(id string, scope memcore.Scope, cat memcore.Category, version int, day int, content string) *memcore.MemoryFile {
	return &memcore.MemoryFile{
		Meta: memcore.MemoryMeta{
			ID:        id,
			CreatedAt: baseTime.AddDate(0, 0, day),
			Version:   version,
			Scope:     scope,
			Category:  cat,
			Trigger:   memcore.TriggerCadence,
		},
		Content: content,
	}
}

// supersede makes m the successor of prev.
func supersede(m, prev *memcore.MemoryFile) *memcore.MemoryFile {
	id := prev.Meta.ID
	m.Meta.Supersedes = &id
	return m
}

// relate adds an edge from m to target.
func relate(m *memcore.MemoryFile, rel memcore.Relationship, target string) *memcore.MemoryFile {
	m.Meta.Related = append(m.Meta.Related, memcore.RelatedMemory{ID: target, Relationship: rel})
	return m
}

// storeKinds runs f for a MemStore and for a FileStore in temporary folders.
func storeKinds(t *testing.T, f func(t *testing.T, newStore func(t *testing.T) memcore.MemoryStore)) {
	t.Run("memstore", func(t *testing.T) {
		f(t, func(t *testing.T) memcore.MemoryStore { return memcore.NewMemStore() })
	})
	t.Run("filestore", func(t *testing.T) {
		f(t, func(t *testing.T) memcore.MemoryStore { return newFileStore(t) })
	})
}

func newFileStore(t testing.TB) *memcore.FileStore {
	t.Helper()
	dir := t.TempDir()
	fs, err := memcore.NewFileStore(dir+"/repo", dir+"/user", memcore.FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func write(t testing.TB, s memcore.MemoryStore, ms ...*memcore.MemoryFile) {
	t.Helper()
	for _, m := range ms {
		if err := s.Write(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// vocabulary for generated memories.
var vocab = strings.Fields(`error errors wrap sentinel logging zerolog structured table driven tests subtests
fixtures golden files migrations database postgres sqlite schema index query transaction locking optimistic
pessimistic retry backoff jitter timeout context cancel goroutine lifecycle channel mutex atomic cache
eviction LRU redis queue worker pool batch stream parser lexer token budget window prompt model embedding
vector search ranking score graph edge node chain version head history config flag env yaml json toml http
handler middleware router grpc protobuf api client server auth token session cookie csrf cors docker
compose kubernetes helm terraform ci pipeline lint vet gofmt staticcheck release tag semver module
workspace replace vendor dependency upgrade deprecation interface struct method receiver pointer value
generic constraint slice map string builder bytes buffer reader writer file path folder permission fsync
rename atomic write append log rotate metric trace span otel prometheus alert dashboard benchmark profile
allocation escape inline bounds check unroll simd heap sort binary search hash sha256 crc checksum
prefers uses avoids always never chose decided because after incident review convention rule pattern`)

// genContent returns a deterministic memory text.
func genContent(r *rand.Rand) string {
	n := 8 + r.IntN(12)
	words := make([]string, n)
	for i := range words {
		words[i] = vocab[r.IntN(len(vocab))]
	}
	return strings.Join(words, " ") + "."
}

func randFor(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }

// randomUnit returns a random unit vector of dim values.
func randomUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	index.Normalize(v)
	return v
}

// containsAny reports whether a line holds substr.
func containsAny(lines []string, substr string) bool {
	for _, l := range lines {
		if strings.Contains(l, substr) {
			return true
		}
	}
	return false
}

// genMemories returns n valid memories with distinct contents, alternating
// scopes, from seed.
func genMemories(n int, seed uint64) []*memcore.MemoryFile {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]*memcore.MemoryFile, n)
	cats := memcore.Categories()
	for i := range out {
		scope := memcore.ScopeRepo
		if i%2 == 1 {
			scope = memcore.ScopeUser
		}
		out[i] = mem(memcore.NewMemoryID(), scope, cats[i%len(cats)], 1, i%300, fmt.Sprintf("%s (%d)", genContent(r), i))
	}
	return out
}

// identityConfig is a config for ModeIdentity with a short timeout.
func identityConfig() Config {
	c := DefaultConfig()
	c.Mode = ModeIdentity
	return c
}

// ungated turns the relevance gate off (and with it the probes a build
// embeds and the gate's calibration), for tests of the engine's other
// parts: the ranking, the cache, the budget, which count the memory texts a
// build embeds or expect every ranked memory in the injection. The gate's
// own tests are in gate_test.go.
func ungated(c Config) Config {
	c.GateChance = 1
	c.MaxMemories = defaultUngatedMaxMemories
	return c
}

// defaultUngatedMaxMemories is the MaxMemories of ungated tests: the cap of
// the engine before the gate, so that every hit of a small store is
// injected.
const defaultUngatedMaxMemories = 30

// cacheConfig is identityConfig ungated: for the cache's tests.
func cacheConfig() Config { return ungated(identityConfig()) }

// vectorOnly turns the lexical index off, for tests of the vector search
// alone: scores are then cosine similarities, and a failed model call
// leaves the turn without memories.
func vectorOnly(c Config) Config {
	c.LexicalWeight = 0
	return c
}

// noVectorHits reports whether the vector search took no part in res: it
// says why, and nothing in its ranking came from the vector search.
func noVectorHits(res *Result) bool {
	for _, c := range res.Ranked {
		if c.VectorRank != 0 {
			return false
		}
	}
	return res.VectorSkipped != SkipNone
}

// quantizedTests, set by TestQuantizedCacheSuite while it runs other tests,
// makes newEngine build every engine with the quantised index.
var quantizedTests bool

// cfgOpt changes one field of a Config, as the host's options of a test.
type cfgOpt func(*Config)

func withCacheDir(dir string) cfgOpt            { return func(c *Config) { c.CacheDir = dir } }
func withCacheSecret(s []byte) cfgOpt           { return func(c *Config) { c.CacheSecret = s } }
func withLogger(l zerolog.Logger) cfgOpt        { return func(c *Config) { c.Logger = l } }
func withEmbedBatch(n int) cfgOpt               { return func(c *Config) { c.EmbedBatch = n } }
func withTurnCacheSize(n int) cfgOpt            { return func(c *Config) { c.TurnCacheSize = n } }
func withRetryDelay(d time.Duration) cfgOpt     { return func(c *Config) { c.RetryDelay = d } }
func withParallelism(n int) cfgOpt              { return func(c *Config) { c.Parallelism = n } }
func withBuildProgress(f func(int, int)) cfgOpt { return func(c *Config) { c.BuildProgress = f } }

// with returns c changed by opts.
func with(c Config, opts ...cfgOpt) Config {
	for _, o := range opts {
		o(&c)
	}
	return c
}

// newEngine builds an engine or fails the test.
func newEngine(t testing.TB, store memcore.MemoryStore, emb memcore.Embedder, llm memcore.LLMProvider, cfg Config, opts ...cfgOpt) *Engine {
	t.Helper()
	if quantizedTests {
		cfg.Quantized = true
	}
	e, err := NewEngine(store, emb, llm, with(cfg, opts...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Close(ctx)
	})
	return e
}

func rebuild(t testing.TB, e *Engine) {
	t.Helper()
	if err := e.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// userWindow is a window of one user message.
func userWindow(text string) []memcore.Message {
	return []memcore.Message{{Role: memcore.RoleUser, Content: text}}
}

// hypothesesReply is a JSON reply carrying hs.
func hypothesesReply(hs ...string) string {
	b, _ := json.Marshal(map[string][]string{"hypotheses": hs})
	return string(b)
}

// hypothesisLLM is a scripted hypothesis model: it answers the hypothesis
// call, which it recognises by its schema name, with hs, and fails any
// other call.
func hypothesisLLM(t testing.TB, hs ...string) *fake.LLM {
	reply := hypothesesReply(hs...)
	return newLLM(t, fake.LLMConfig{ReplyFunc: func(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		if req.ResponseSchema == nil || req.ResponseSchema.Name != HypothesisSchemaName {
			return nil, fmt.Errorf("%w: not the hypothesis call", memcore.ErrInvalidRequest)
		}
		return &memcore.CompletionResponse{Text: reply}, nil
	}})
}

// ids lists the memory ids of a result, in order.
func ids(r *Result) []string {
	var out []string
	for _, m := range r.Memories {
		out = append(out, m.Memory.Meta.ID)
	}
	return out
}

// cosine is the cosine similarity the fake embedder gives two texts.
func cosine(t testing.TB, emb memcore.Embedder, a, b string) float64 {
	t.Helper()
	v, err := emb.Embed(context.Background(), []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	x, y := append([]float32(nil), v[0]...), append([]float32(nil), v[1]...)
	index.Normalize(x)
	index.Normalize(y)
	return float64(vecmath.Dot(x, y))
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// logBuffer is a zerolog logger writing JSON lines to a buffer, safe for
// concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) logger() zerolog.Logger { return zerolog.New(l).Level(zerolog.DebugLevel) }

// lines returns the logged lines of level.
func (l *logBuffer) lines(level string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["level"] == level {
			out = append(out, line)
		}
	}
	return out
}

// countingStore counts List calls and can hold them until released.
type countingStore struct {
	memcore.MemoryStore
	lists atomic.Int64
	// entered, when set, receives the number of each List call as it
	// starts; gate, when set, holds List until closed.
	entered chan int64
	gate    chan struct{}
}

func (s *countingStore) List(ctx context.Context) ([]*memcore.MemoryFile, error) {
	n := s.lists.Add(1)
	if s.entered != nil {
		s.entered <- n
	}
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.MemoryStore.List(ctx)
}

// Dir forwards to the wrapped store's folders, if any.
func (s *countingStore) Dir(scope memcore.Scope) string {
	if d, ok := s.MemoryStore.(ScopeDirs); ok {
		return d.Dir(scope)
	}
	return ""
}

// blockingLLM ignores its context and answers only when released: a
// provider that hangs regardless of deadlines.
type blockingLLM struct {
	release chan struct{}
	calls   atomic.Int64
}

func (l *blockingLLM) Complete(ctx context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	l.calls.Add(1)
	<-l.release
	return &memcore.CompletionResponse{Text: hypothesesReply("anything")}, nil
}

// blockingEmbedder ignores its context: every call blocks until released.
type blockingEmbedder struct {
	*fake.Embedder
	release chan struct{}
}

func (b *blockingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	<-b.release
	return b.Embedder.Embed(context.Background(), texts)
}

// gatedEmbedder holds calls of more than one text (index builds) until the
// gate is closed, and reports single-text calls (identity-mode queries) on
// queried.
type gatedEmbedder struct {
	*fake.Embedder
	gate    chan struct{}
	queried chan struct{}
}

func (g *gatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) > 1 {
		select {
		case <-g.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	} else if g.queried != nil {
		select {
		case g.queried <- struct{}{}:
		default:
		}
	}
	return g.Embedder.Embed(ctx, texts)
}

// renamedEmbedder is the fake embedder under another model name.
type renamedEmbedder struct {
	*fake.Embedder
	name string
}

func (r renamedEmbedder) Model() string { return r.name }

// newLLM returns fake.NewLLM of the first of cfg (the defaults without
// one), failing the test if it reports an
// error.
func newLLM(t testing.TB, cfg ...fake.LLMConfig) *fake.LLM {
	t.Helper()
	l, err := fake.NewLLM(first(cfg))
	if err != nil {
		t.Fatalf("fake.NewLLM: %v", err)
	}
	return l
}

// newEmbedder returns fake.NewEmbedder of the first of cfg (the defaults
// without one), failing the test if it
// reports an error.
func newEmbedder(t testing.TB, cfg ...fake.EmbedderConfig) *fake.Embedder {
	t.Helper()
	e, err := fake.NewEmbedder(first(cfg))
	if err != nil {
		t.Fatalf("fake.NewEmbedder: %v", err)
	}
	return e
}

// failNext schedules failures with f.FailNext, failing the test if it
// reports an error.
func failNext(t testing.TB, f interface{ FailNext(int, error) error }, n int, err error) {
	t.Helper()
	if e := f.FailNext(n, err); e != nil {
		t.Fatalf("FailNext(%d, %v): %v", n, err, e)
	}
}

// first returns the first of cfgs, or the zero value (the defaults).
func first[C any](cfgs []C) C {
	var c C
	if len(cfgs) > 0 {
		c = cfgs[0]
	}
	return c
}
