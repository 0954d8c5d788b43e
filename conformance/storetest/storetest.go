package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/conformance/internal/conform"
	"github.com/forgemem/forgemem/memcore"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Harness gives the suite stores to test. A fresh harness is made for every
// subtest, so each starts from empty storage.
type Harness interface {
	// Open returns a store over the harness's storage. Every call returns a
	// store over the same storage: what one wrote, one opened later reads.
	// It may return the same instance every time (an in-memory store).
	Open(ctx context.Context) (memcore.MemoryStore, error)
	// Capabilities declares what the store cannot do.
	Capabilities() Capabilities
	// Close releases the storage.
	Close()
}

// HarnessMaker makes a Harness over fresh, empty storage.
type HarnessMaker func(ctx context.Context, t *testing.T) (Harness, error)

// Capabilities declares a store's limitations. The zero value claims full
// support. Each field, when not empty, is the reason the store cannot meet a
// rule, and the rule's subtest is skipped with it.
type Capabilities struct {
	// NoExtraKeys: MemoryMeta.Extra is not kept.
	NoExtraKeys string
}

// Config changes how hard the suite pushes. A zero field means its
// default, so Config{} is [DefaultConfig]. A field out of range makes [Run]
// fail the test at once, naming every such field and the values it
// accepts, and no rule runs.
type Config struct {
	// Writers is how many goroutines write at once in the concurrency
	// rules: 2–1000; the default is 8.
	Writers int
	// PerWriter is how many memories each writer writes: 1–1000; the
	// default is 25.
	PerWriter int
	// LargeBody is the size in bytes of the large body of the round-trip
	// rule: 1–67108864 (64 MiB); the default is 512 KiB, which a
	// memcore.FileStore holds (it reads no file over memcore.MaxFileBytes,
	// 1 MiB, front matter included). A store without such a limit can ask
	// for more.
	LargeBody int
}

// The ranges of the fields.
const (
	// minWriters is the fewest writers of the concurrency rules: one
	// writer alone races with nobody.
	minWriters   = 2
	maxWriters   = 1000
	maxPerWriter = 1000
	// maxBodySize is the largest body of the round-trip rule, 64 MiB.
	maxBodySize = 64 << 20
)

// DefaultConfig returns the suite's defaults: 8 writers of 25 memories
// each, and a large body of 512 KiB.
func DefaultConfig() Config {
	return Config{Writers: 8, PerWriter: 25, LargeBody: 512 << 10}
}

// Validate reports every field of c out of range at once, in a
// *memcore.ConfigError (which matches memcore.ErrInvalidConfig), or
// returns nil.
func (c Config) Validate() error {
	def := DefaultConfig()
	var bad memcore.FieldErrors
	bad.Check(c.Writers == 0 || (c.Writers >= minWriters && c.Writers <= maxWriters), "Writers", c.Writers,
		fmt.Sprintf("%d–%d (0 means %d)", minWriters, maxWriters, def.Writers))
	bad.Check(c.PerWriter >= 0 && c.PerWriter <= maxPerWriter, "PerWriter", c.PerWriter,
		fmt.Sprintf("1–%d (0 means %d)", maxPerWriter, def.PerWriter))
	bad.Check(c.LargeBody >= 0 && c.LargeBody <= maxBodySize, "LargeBody", c.LargeBody,
		fmt.Sprintf("1–%d, 64 MiB (0 means %d, 512 KiB)", maxBodySize, def.LargeBody))
	return bad.Err("storetest", "")
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	def := DefaultConfig()
	if c.Writers == 0 {
		c.Writers = def.Writers
	}
	if c.PerWriter == 0 {
		c.PerWriter = def.PerWriter
	}
	if c.LargeBody == 0 {
		c.LargeBody = def.LargeBody
	}
	return c
}

// Run runs every rule against stores from newHarness. A field of cfg out
// of range fails t at once (t.Fatalf), naming every such field and the
// values it accepts, and no rule runs.
func Run(t *testing.T, newHarness HarnessMaker, cfg Config) {
	t.Helper()
	conform.FailNow(t, cfg.Validate())
	cfg = cfg.withDefaults()
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			ctx := context.Background()
			h, err := newHarness(ctx, t)
			if err != nil {
				t.Fatalf("storetest: making the harness: %v", err)
			}
			t.Cleanup(h.Close)
			s := &suite{t: t, h: h, cfg: cfg}
			s.store = s.open(ctx)
			r.run(ctx, s)
		})
	}
}

type suite struct {
	t     *testing.T
	h     Harness
	cfg   Config
	store memcore.MemoryStore
}

func (s *suite) open(ctx context.Context) memcore.MemoryStore {
	s.t.Helper()
	st, err := s.h.Open(ctx)
	if err != nil {
		s.t.Fatalf("storetest: opening a store: %v", err)
	}
	if st == nil {
		s.t.Fatalf("storetest: the harness opened a nil store")
	}
	return st
}

// write stores m, failing the set-up if it cannot.
func (s *suite) write(ctx context.Context, m *memcore.MemoryFile) {
	s.t.Helper()
	if err := s.store.Write(ctx, m); err != nil {
		s.t.Fatalf("storetest: set-up: Write(%s): %v", m.Meta.ID, err)
	}
}

type rule struct {
	name string
	run  func(context.Context, *suite)
}

// rules is the suite: one entry per rule, each a subtest of Run.
var rules = []rule{
	{"RoundTripEveryField", testRoundTrip},
	{"ReadMissingIsNotFound", testNotFound},
	{"DuplicateIDIsAlreadyExists", testAlreadyExists},
	{"DuplicateIDAcrossScopes", testAlreadyExistsOtherScope},
	{"InvalidIDRejected", testInvalidID},
	{"InvalidMemoryRejected", testInvalidMemory},
	{"EmptyStoreListsNothing", testEmpty},
	{"ListByScopeIsolation", testScopeIsolation},
	{"ListIsUnionOfScopes", testListUnion},
	{"UnknownScopeRejected", testUnknownScope},
	{"ReturnsCopies", testCopies},
	{"ConcurrentWriters", testConcurrentWriters},
	{"ConcurrentSameID", testConcurrentSameID},
	{"PersistsAcrossOpen", testPersistence},
	{"ContextCancellation", testCancellation},
	{"VersionChains", testVersionChains},
	{"SecondSuccessorIsConflict", testSecondSuccessor},
	{"ConcurrentSupersedes", testConcurrentSupersedes},
}

var baseTime = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)

// memory returns a valid memory of the given scope with a fresh id.
func memory(scope memcore.Scope, content string) *memcore.MemoryFile {
	return &memcore.MemoryFile{
		Meta: memcore.MemoryMeta{
			ID:        memcore.NewMemoryID(),
			CreatedAt: baseTime,
			UpdatedAt: baseTime,
			Version:   1,
			Scope:     scope,
			Category:  memcore.CategoryCodingPreferences,
			SessionID: "session-1",
			Trigger:   memcore.TriggerCadence,
		},
		Content: content,
	}
}

// diff compares memories field by field: times by instant, empty and nil
// slices and maps alike.
func diff(want, got *memcore.MemoryFile) string {
	return cmp.Diff(want, got, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }))
}

func ids(ms []*memcore.MemoryFile) map[string]bool {
	out := make(map[string]bool, len(ms))
	for _, m := range ms {
		out[m.Meta.ID] = true
	}
	return out
}

func testRoundTrip(ctx context.Context, s *suite) {
	t := s.t
	pred := memory(memcore.ScopeRepo, "The repository uses pessimistic locking.")
	s.write(ctx, pred)
	other := memory(memcore.ScopeUser, "Prefers table-driven tests.")
	s.write(ctx, other)

	full := memory(memcore.ScopeRepo, "Uses optimistic locking with retry — changed after a performance issue. 日本語 ✓ émoji 🚀")
	full.Meta.CreatedAt = time.Date(2025, 2, 1, 8, 0, 0, 123456789, time.UTC)
	full.Meta.UpdatedAt = time.Date(2025, 2, 2, 9, 30, 15, 0, time.UTC)
	full.Meta.Version = 2
	full.Meta.Category = memcore.CategoryArchitecturalDecisions
	full.Meta.Supersedes = &pred.Meta.ID
	full.Meta.Related = []memcore.RelatedMemory{
		{ID: other.Meta.ID, Relationship: memcore.RelationshipRelatesTo},
		{ID: pred.Meta.ID, Relationship: memcore.RelationshipContradicts},
	}
	full.Meta.SessionID = "3f2a-ünïcode-session"
	full.Meta.Trigger = memcore.TriggerCompaction
	if s.h.Capabilities().NoExtraKeys == "" {
		full.Meta.Extra = map[string]any{"reviewed_by": "alice", "tags": []any{"locking", "db"}}
	}

	large := memory(memcore.ScopeUser, strings.Repeat("large body line with text ✓\n", s.cfg.LargeBody/30+1))
	large.Meta.Category = memcore.CategoryPatterns
	large.Meta.Trigger = memcore.TriggerManual

	dashes := memory(memcore.ScopeRepo, "Before\n---\nbetween\n---\nafter\n...\n")
	dashes.Meta.Category = memcore.CategoryCorrections

	spaced := memory(memcore.ScopeUser, "\n\n  indented first line\n\ntrailing blank lines\n\n")
	spaced.Meta.Category = memcore.CategoryUserFacts
	spaced.Meta.SessionID = ""
	spaced.Meta.Trigger = ""
	spaced.Meta.UpdatedAt = time.Time{}

	cases := []*memcore.MemoryFile{full, large, dashes, spaced}
	for _, m := range cases {
		s.write(ctx, m)
	}
	listed, err := s.store.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	byID := make(map[string]*memcore.MemoryFile)
	for _, m := range listed {
		byID[m.Meta.ID] = m
	}
	for _, want := range cases {
		got, err := s.store.Read(ctx, want.Meta.ID)
		if err != nil {
			t.Errorf("rule: a written memory reads back: Read(%s): %v", want.Meta.ID, err)
			continue
		}
		if d := diff(want, got); d != "" {
			t.Errorf("rule: Read returns every field as written (-written +read):\n%s", d)
		}
		if d := diff(want, byID[want.Meta.ID]); d != "" {
			t.Errorf("rule: List returns every field as written (-written +listed):\n%s", d)
		}
	}
}

func testNotFound(ctx context.Context, s *suite) {
	id := memcore.NewMemoryID()
	_, err := s.store.Read(ctx, id)
	if !errors.Is(err, memcore.ErrNotFound) {
		s.t.Errorf("rule: Read of an id never written fails with ErrNotFound; got %v", err)
	}
	if errors.Is(err, memcore.ErrInvalidID) {
		s.t.Errorf("rule: a valid missing id is not ErrInvalidID; got %v", err)
	}
	s.write(ctx, memory(memcore.ScopeRepo, "something else"))
	if _, err := s.store.Read(ctx, id); !errors.Is(err, memcore.ErrNotFound) {
		s.t.Errorf("rule: Read of an id never written fails with ErrNotFound in a non-empty store; got %v", err)
	}
}

func testAlreadyExists(ctx context.Context, s *suite) {
	orig := memory(memcore.ScopeRepo, "The original content.")
	s.write(ctx, orig)
	dup := orig.Clone()
	dup.Content = "A replacement that must not be stored."
	dup.Meta.Version = 7
	err := s.store.Write(ctx, dup)
	if !errors.Is(err, memcore.ErrAlreadyExists) {
		s.t.Errorf("rule: a second Write of an id fails with ErrAlreadyExists; got %v", err)
	}
	s.checkIntact(ctx, orig)
}

func testAlreadyExistsOtherScope(ctx context.Context, s *suite) {
	orig := memory(memcore.ScopeRepo, "The original content.")
	s.write(ctx, orig)
	dup := orig.Clone()
	dup.Meta.Scope = memcore.ScopeUser
	dup.Content = "Same id in the other scope."
	if err := s.store.Write(ctx, dup); !errors.Is(err, memcore.ErrAlreadyExists) {
		s.t.Errorf("rule: an id stored in one scope cannot be written in the other (ErrAlreadyExists); got %v", err)
	}
	s.checkIntact(ctx, orig)
	if user, err := s.store.ListByScope(ctx, memcore.ScopeUser); err != nil || len(user) != 0 {
		s.t.Errorf("rule: a refused Write stores nothing: user scope lists %d memories (err %v)", len(user), err)
	}
}

// checkIntact fails unless orig is stored unchanged and only once.
func (s *suite) checkIntact(ctx context.Context, orig *memcore.MemoryFile) {
	s.t.Helper()
	got, err := s.store.Read(ctx, orig.Meta.ID)
	if err != nil {
		s.t.Errorf("rule: the original survives a refused Write: Read: %v", err)
		return
	}
	if d := diff(orig, got); d != "" {
		s.t.Errorf("rule: the original is intact after a refused Write (-original +now):\n%s", d)
	}
	all, err := s.store.List(ctx)
	if err != nil {
		s.t.Errorf("List: %v", err)
		return
	}
	n := 0
	for _, m := range all {
		if m.Meta.ID == orig.Meta.ID {
			n++
		}
	}
	if n != 1 {
		s.t.Errorf("rule: an id is listed once; %s is listed %d times", orig.Meta.ID, n)
	}
}

// badIDs are ids a store must refuse, among them every way to escape a
// folder.
var badIDs = []string{
	"",
	"mem_",
	"../mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b",
	"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b/../../etc/passwd",
	"mem_../../../../../../etc/passwd",
	"/etc/passwd",
	"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b\x00",
	"mem_1b4e28ba\\2fa1-4d3b-a3f5-ef19b5a7633b",
	"mem_1b4e28ba/2fa1-4d3b-a3f5-ef19b5a7633b",
	"mem_1B4E28BA-2FA1-4D3B-A3F5-EF19B5A7633B",
	"1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b",
	"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633",
	"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633bb",
	"mem_zzzzzzzz-2fa1-4d3b-a3f5-ef19b5a7633b",
	" mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b",
}

func testInvalidID(ctx context.Context, s *suite) {
	for _, id := range badIDs {
		m := memory(memcore.ScopeRepo, "content")
		m.Meta.ID = id
		if err := s.store.Write(ctx, m); !errors.Is(err, memcore.ErrInvalidID) {
			s.t.Errorf("rule: Write refuses id %q with ErrInvalidID; got %v", id, err)
		}
		if _, err := s.store.Read(ctx, id); !errors.Is(err, memcore.ErrInvalidID) {
			s.t.Errorf("rule: Read refuses id %q with ErrInvalidID; got %v", id, err)
		}
	}
	all, err := s.store.List(ctx)
	if err != nil || len(all) != 0 {
		s.t.Errorf("rule: refused writes store nothing: List gives %d memories (err %v)", len(all), err)
	}
}

func testInvalidMemory(ctx context.Context, s *suite) {
	self := memory(memcore.ScopeRepo, "links to itself")
	self.Meta.Related = []memcore.RelatedMemory{{ID: self.Meta.ID, Relationship: memcore.RelationshipRefines}}
	cases := map[string]*memcore.MemoryFile{
		"unknown scope":    func() *memcore.MemoryFile { m := memory("global", "x"); return m }(),
		"unknown category": func() *memcore.MemoryFile { m := memory(memcore.ScopeRepo, "x"); m.Meta.Category = "misc"; return m }(),
		"version 0":        func() *memcore.MemoryFile { m := memory(memcore.ScopeRepo, "x"); m.Meta.Version = 0; return m }(),
		"blank content":    memory(memcore.ScopeUser, " \n\t"),
		"no created_at": func() *memcore.MemoryFile {
			m := memory(memcore.ScopeRepo, "x")
			m.Meta.CreatedAt = time.Time{}
			return m
		}(),
		"self link": self,
	}
	for name, m := range cases {
		if err := s.store.Write(ctx, m); !errors.Is(err, memcore.ErrInvalidMemory) {
			s.t.Errorf("rule: Write refuses an invalid memory (%s) with ErrInvalidMemory; got %v", name, err)
		}
	}
	if err := s.store.Write(ctx, nil); err == nil {
		s.t.Errorf("rule: Write(nil) fails")
	}
	all, err := s.store.List(ctx)
	if err != nil || len(all) != 0 {
		s.t.Errorf("rule: refused writes store nothing: List gives %d memories (err %v)", len(all), err)
	}
}

func testEmpty(ctx context.Context, s *suite) {
	all, err := s.store.List(ctx)
	if err != nil || len(all) != 0 {
		s.t.Errorf("rule: an empty store lists nothing without error; got %d memories, err %v", len(all), err)
	}
	for _, scope := range memcore.Scopes() {
		ms, err := s.store.ListByScope(ctx, scope)
		if err != nil || len(ms) != 0 {
			s.t.Errorf("rule: an empty store lists nothing in scope %s; got %d memories, err %v", scope, len(ms), err)
		}
	}
}

// seedScopes writes three repo and two user memories.
func (s *suite) seedScopes(ctx context.Context) (repo, user map[string]bool) {
	repo, user = map[string]bool{}, map[string]bool{}
	for i := 0; i < 3; i++ {
		m := memory(memcore.ScopeRepo, fmt.Sprintf("repo memory %d", i))
		s.write(ctx, m)
		repo[m.Meta.ID] = true
	}
	for i := 0; i < 2; i++ {
		m := memory(memcore.ScopeUser, fmt.Sprintf("user memory %d", i))
		s.write(ctx, m)
		user[m.Meta.ID] = true
	}
	return repo, user
}

func testScopeIsolation(ctx context.Context, s *suite) {
	repo, user := s.seedScopes(ctx)
	for scope, want := range map[memcore.Scope]map[string]bool{memcore.ScopeRepo: repo, memcore.ScopeUser: user} {
		got, err := s.store.ListByScope(ctx, scope)
		if err != nil {
			s.t.Errorf("ListByScope(%s): %v", scope, err)
			continue
		}
		for _, m := range got {
			if m.Meta.Scope != scope {
				s.t.Errorf("rule: ListByScope(%s) returns only that scope; got %s of scope %s", scope, m.Meta.ID, m.Meta.Scope)
			}
		}
		if d := cmp.Diff(want, ids(got)); d != "" {
			s.t.Errorf("rule: ListByScope(%s) returns exactly that scope's memories (-want +got):\n%s", scope, d)
		}
	}
}

func testListUnion(ctx context.Context, s *suite) {
	repo, user := s.seedScopes(ctx)
	want := map[string]bool{}
	for id := range repo {
		want[id] = true
	}
	for id := range user {
		want[id] = true
	}
	all, err := s.store.List(ctx)
	if err != nil {
		s.t.Fatalf("List: %v", err)
	}
	if len(all) != len(want) {
		s.t.Errorf("rule: List returns each memory once; got %d memories for %d ids", len(all), len(want))
	}
	if d := cmp.Diff(want, ids(all)); d != "" {
		s.t.Errorf("rule: List is the union of both scopes (-want +got):\n%s", d)
	}
}

func testUnknownScope(ctx context.Context, s *suite) {
	for _, scope := range []memcore.Scope{"", "global", "REPO", "../repo"} {
		if _, err := s.store.ListByScope(ctx, scope); !errors.Is(err, memcore.ErrUnknownScope) {
			s.t.Errorf("rule: ListByScope(%q) fails with ErrUnknownScope; got %v", scope, err)
		}
	}
}

func testCopies(ctx context.Context, s *suite) {
	other := memory(memcore.ScopeRepo, "other")
	s.write(ctx, other)
	m := memory(memcore.ScopeRepo, "original content")
	m.Meta.Related = []memcore.RelatedMemory{{ID: other.Meta.ID, Relationship: memcore.RelationshipRefines}}
	want := m.Clone()
	s.write(ctx, m)
	// Changing what was written must not change what is stored.
	m.Content = "changed by the caller after Write"
	m.Meta.Related[0].Relationship = memcore.RelationshipContradicts

	got, err := s.store.Read(ctx, want.Meta.ID)
	if err != nil {
		s.t.Fatalf("Read: %v", err)
	}
	got.Content = "changed by the caller after Read"
	got.Meta.Related[0].Relationship = memcore.RelationshipContradicts
	listed, err := s.store.List(ctx)
	if err != nil {
		s.t.Fatalf("List: %v", err)
	}
	for _, l := range listed {
		l.Content = "changed by the caller after List"
		l.Meta.Related = nil
	}
	again, err := s.store.Read(ctx, want.Meta.ID)
	if err != nil {
		s.t.Fatalf("Read: %v", err)
	}
	if d := diff(want, again); d != "" {
		s.t.Errorf("rule: callers' changes to written, read or listed memories do not reach the store (-written +stored):\n%s", d)
	}
}

func testConcurrentWriters(ctx context.Context, s *suite) {
	n, per := s.cfg.Writers, s.cfg.PerWriter
	written := make([][]*memcore.MemoryFile, n)
	errs := make(chan error, n*per+n)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Add(1)
	go func() { // a reader listing while the writers write
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.store.List(ctx); err != nil {
				errs <- fmt.Errorf("a List during the writes: %w", err)
				return
			}
		}
	}()
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			scope := memcore.Scopes()[w%2]
			for i := 0; i < per; i++ {
				m := memory(scope, fmt.Sprintf("writer %d memory %d\n%s", w, i, strings.Repeat("x", 100*i)))
				if err := s.store.Write(ctx, m); err != nil {
					errs <- fmt.Errorf("writer %d: Write: %w", w, err)
					continue
				}
				written[w] = append(written[w], m)
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		s.t.Errorf("rule: concurrent writes and lists of distinct ids all succeed: %v", err)
	}
	all, err := s.store.List(ctx)
	if err != nil {
		s.t.Fatalf("List: %v", err)
	}
	byID := make(map[string]*memcore.MemoryFile, len(all))
	for _, m := range all {
		byID[m.Meta.ID] = m
	}
	for _, ms := range written {
		for _, want := range ms {
			got, ok := byID[want.Meta.ID]
			if !ok {
				s.t.Errorf("rule: every concurrently written memory is visible; %s is missing", want.Meta.ID)
				continue
			}
			if d := diff(want, got); d != "" {
				s.t.Errorf("rule: every concurrently written memory is intact (-written +listed):\n%s", d)
			}
		}
	}
	if len(all) != n*per {
		s.t.Errorf("rule: concurrent writers store exactly what they wrote; List gives %d, want %d", len(all), n*per)
	}
}

func testConcurrentSameID(ctx context.Context, s *suite) {
	id := memcore.NewMemoryID()
	n := s.cfg.Writers
	results := make(chan error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			m := memory(memcore.Scopes()[w%2], fmt.Sprintf("contender %d", w))
			m.Meta.ID = id
			<-start
			results <- s.store.Write(ctx, m)
		}(w)
	}
	close(start)
	wg.Wait()
	close(results)
	won := 0
	for err := range results {
		switch {
		case err == nil:
			won++
		case errors.Is(err, memcore.ErrAlreadyExists):
		default:
			s.t.Errorf("rule: losers of a race on one id get ErrAlreadyExists; got %v", err)
		}
	}
	if won != 1 {
		s.t.Errorf("rule: of %d concurrent writes of one id exactly one succeeds; %d did", n, won)
	}
	got, err := s.store.Read(ctx, id)
	if err != nil {
		s.t.Fatalf("Read: %v", err)
	}
	if !strings.HasPrefix(got.Content, "contender ") {
		s.t.Errorf("rule: the winner of a race on one id is stored whole; content %q", got.Content)
	}
}

func testPersistence(ctx context.Context, s *suite) {
	first := memory(memcore.ScopeRepo, "written by the first store")
	s.write(ctx, first)
	second := s.open(ctx)
	got, err := second.Read(ctx, first.Meta.ID)
	if err != nil {
		s.t.Fatalf("rule: a store opened later reads what an earlier one wrote: Read: %v", err)
	}
	if d := diff(first, got); d != "" {
		s.t.Errorf("rule: a store opened later reads what an earlier one wrote, intact (-written +read):\n%s", d)
	}
	later := memory(memcore.ScopeUser, "written by the second store")
	if err := second.Write(ctx, later); err != nil {
		s.t.Fatalf("Write through the second store: %v", err)
	}
	all, err := s.store.List(ctx)
	if err != nil {
		s.t.Fatalf("List: %v", err)
	}
	if !ids(all)[later.Meta.ID] {
		s.t.Errorf("rule: a store sees what another store over the same storage wrote after it was opened")
	}
	dup := first.Clone()
	dup.Content = "a replacement through the second store"
	if err := second.Write(ctx, dup); !errors.Is(err, memcore.ErrAlreadyExists) {
		s.t.Errorf("rule: ErrAlreadyExists holds across stores over the same storage; got %v", err)
	}
}

func testCancellation(ctx context.Context, s *suite) {
	existing := memory(memcore.ScopeRepo, "stored before cancellation")
	s.write(ctx, existing)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	m := memory(memcore.ScopeRepo, "written with a cancelled context")
	if err := s.store.Write(cctx, m); !errors.Is(err, context.Canceled) {
		s.t.Errorf("rule: Write with a cancelled context fails with context.Canceled; got %v", err)
	}
	if _, err := s.store.Read(cctx, existing.Meta.ID); !errors.Is(err, context.Canceled) {
		s.t.Errorf("rule: Read with a cancelled context fails with context.Canceled; got %v", err)
	}
	if _, err := s.store.List(cctx); !errors.Is(err, context.Canceled) {
		s.t.Errorf("rule: List with a cancelled context fails with context.Canceled; got %v", err)
	}
	if _, err := s.store.ListByScope(cctx, memcore.ScopeUser); !errors.Is(err, context.Canceled) {
		s.t.Errorf("rule: ListByScope with a cancelled context fails with context.Canceled; got %v", err)
	}
	if _, err := s.store.Read(ctx, m.Meta.ID); !errors.Is(err, memcore.ErrNotFound) {
		s.t.Errorf("rule: a Write refused for cancellation stores nothing; Read gives %v", err)
	}
}

func testVersionChains(ctx context.Context, s *suite) {
	v1 := memory(memcore.ScopeUser, "Prefers pessimistic locking.")
	s.write(ctx, v1)
	v2 := memcore.NewVersion(v1, "session-2", memcore.TriggerCadence)
	v2.Content = "Prefers optimistic locking."
	s.write(ctx, v2)
	v3 := memcore.NewVersion(v2, "session-3", memcore.TriggerManual)
	v3.Content = "Prefers optimistic locking with retry."
	s.write(ctx, v3)

	chain, err := memcore.VersionChain(ctx, s.store, v3.Meta.ID, 0)
	if err != nil {
		s.t.Fatalf("rule: VersionChain reads a chain through the store: %v", err)
	}
	var got []string
	for _, m := range chain {
		got = append(got, m.Meta.ID)
	}
	if d := cmp.Diff([]string{v1.Meta.ID, v2.Meta.ID, v3.Meta.ID}, got); d != "" {
		s.t.Errorf("rule: VersionChain through the store is oldest first (-want +got):\n%s", d)
	}
	head, err := memcore.LatestVersion(ctx, s.store, v1.Meta.ID)
	if err != nil || head != v3.Meta.ID {
		s.t.Errorf("rule: LatestVersion through the store finds the head: got %s, %v; want %s", head, err, v3.Meta.ID)
	}
}
