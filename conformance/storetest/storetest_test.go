package storetest_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/conformance/internal/conform"
	"github.com/forgemem/forgemem/conformance/storetest"
	"github.com/forgemem/forgemem/memcore"
)

// memcore.FileStore runs the suite in TestExampleHarness (example_run_test.go),
// with the harness the package example shows.

// memHarness returns the same MemStore on every call.
type memHarness struct{ s memcore.MemoryStore }

func (h memHarness) Open(context.Context) (memcore.MemoryStore, error) { return h.s, nil }
func (memHarness) Capabilities() storetest.Capabilities                { return storetest.Capabilities{} }
func (memHarness) Close()                                              {}

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(context.Context, *testing.T) (storetest.Harness, error) {
		return memHarness{memcore.NewMemStore()}, nil
	}, storetest.Config{})
}

const brokenEnv = "STORETEST_BROKEN"

// TestBrokenStoresFail proves the suite catches stores broken in each way,
// and that the failure points at the rule that was broken.
func TestBrokenStoresFail(t *testing.T) {
	if os.Getenv(brokenEnv) != "" {
		t.Skip("running as a child process")
	}
	cases := []struct {
		broken string
		rules  []string // rules that must be reported as failed
	}{
		{"overwrites", []string{"DuplicateIDIsAlreadyExists", "ConcurrentSameID"}},
		{"ignores-context", []string{"ContextCancellation"}},
		{"string-errors", []string{"ReadMissingIsNotFound", "DuplicateIDIsAlreadyExists", "InvalidIDRejected", "UnknownScopeRejected"}},
		{"drops-related", []string{"RoundTripEveryField"}},
		{"no-id-check", []string{"InvalidIDRejected"}},
		{"shares-memory", []string{"ReturnsCopies"}},
		{"forgets-on-open", []string{"PersistsAcrossOpen"}},
		{"leaks-scopes", []string{"ListByScopeIsolation"}},
		{"forks", []string{"SecondSuccessorIsConflict", "ConcurrentSupersedes"}},
	}
	for _, c := range cases {
		t.Run(c.broken, func(t *testing.T) {
			got := conform.RunTestInSubprocess(t, "TestBrokenStoreChild", 2*time.Minute, brokenEnv+"="+c.broken)
			if got.Passed {
				t.Fatalf("the suite passed a store that %s; it must fail.\n%s", c.broken, got.Output)
			}
			for _, r := range c.rules {
				if !slices.Contains(got.Failed, r) {
					t.Errorf("a store that %s must fail rule %s; the suite failed %v\n%s", c.broken, r, got.Failed, got.Output)
				}
			}
			if slices.Contains(got.Failed, "EmptyStoreListsNothing") {
				t.Errorf("a store that %s fails an unrelated rule (EmptyStoreListsNothing): failures must point at the broken rule", c.broken)
			}
		})
	}
}

// TestBrokenStoreChild runs the suite against a broken store; it runs only
// as the child process of TestBrokenStoresFail.
func TestBrokenStoreChild(t *testing.T) {
	kind := os.Getenv(brokenEnv)
	if kind == "" {
		t.Skip("runs only as a child process of TestBrokenStoresFail")
	}
	storetest.Run(t, func(context.Context, *testing.T) (storetest.Harness, error) {
		return &brokenHarness{kind: kind, s: newBroken(kind)}, nil
	}, storetest.Config{})
}

type brokenHarness struct {
	kind string
	s    memcore.MemoryStore
}

func (h *brokenHarness) Open(context.Context) (memcore.MemoryStore, error) {
	if h.kind == "forgets-on-open" {
		return newBroken(h.kind), nil
	}
	return h.s, nil
}
func (*brokenHarness) Capabilities() storetest.Capabilities { return storetest.Capabilities{} }
func (*brokenHarness) Close()                               {}

// broken is a store that gets one thing wrong. Most kinds wrap a MemStore;
// the kinds that break its guarantees keep their own map.
type broken struct {
	kind string
	mem  *memcore.MemStore
	mu   sync.Mutex
	raw  map[string]*memcore.MemoryFile
}

func newBroken(kind string) *broken {
	return &broken{kind: kind, mem: memcore.NewMemStore(), raw: map[string]*memcore.MemoryFile{}}
}

// usesRaw reports whether the kind bypasses MemStore.
func (b *broken) usesRaw() bool {
	return b.kind == "overwrites" || b.kind == "no-id-check" || b.kind == "shares-memory" || b.kind == "forks"
}

func (b *broken) flatten(err error) error {
	if b.kind == "string-errors" && err != nil && !errors.Is(err, context.Canceled) {
		return errors.New(err.Error())
	}
	return err
}

func (b *broken) ctx(ctx context.Context) context.Context {
	if b.kind == "ignores-context" {
		return context.Background()
	}
	return ctx
}

func (b *broken) Write(ctx context.Context, m *memcore.MemoryFile) error {
	if b.kind == "drops-related" && m != nil {
		m = m.Clone()
		m.Meta.Related = nil
	}
	if !b.usesRaw() {
		return b.flatten(b.mem.Write(b.ctx(ctx), m))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if m == nil {
		return errors.New("nil memory")
	}
	if err := m.Validate(); err != nil && !(b.kind == "no-id-check" && errors.Is(err, memcore.ErrInvalidID)) {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.raw[m.Meta.ID]; ok && b.kind != "overwrites" {
		return memcore.ErrAlreadyExists
	}
	if err := b.conflict(m); err != nil && b.kind != "forks" {
		return err
	}
	if b.kind != "shares-memory" {
		m = m.Clone()
	}
	b.raw[m.Meta.ID] = m
	return nil
}

func (b *broken) Read(ctx context.Context, id string) (*memcore.MemoryFile, error) {
	if !b.usesRaw() {
		m, err := b.mem.Read(b.ctx(ctx), id)
		return m, b.flatten(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := memcore.ValidateID(id); err != nil && b.kind != "no-id-check" {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.raw[id]
	if !ok {
		return nil, memcore.ErrNotFound
	}
	if b.kind != "shares-memory" {
		m = m.Clone()
	}
	return m, nil
}

func (b *broken) List(ctx context.Context) ([]*memcore.MemoryFile, error) {
	if !b.usesRaw() {
		ms, err := b.mem.List(b.ctx(ctx))
		return ms, b.flatten(err)
	}
	return b.rawList(ctx, "")
}

func (b *broken) ListByScope(ctx context.Context, scope memcore.Scope) ([]*memcore.MemoryFile, error) {
	switch {
	case b.kind == "leaks-scopes":
		return b.mem.List(ctx)
	case b.usesRaw():
		if !scope.Valid() {
			return nil, memcore.ErrUnknownScope
		}
		return b.rawList(ctx, scope)
	}
	ms, err := b.mem.ListByScope(b.ctx(ctx), scope)
	return ms, b.flatten(err)
}

func (b *broken) rawList(ctx context.Context, scope memcore.Scope) ([]*memcore.MemoryFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*memcore.MemoryFile
	for _, m := range b.raw {
		if scope == "" || m.Meta.Scope == scope {
			if b.kind != "shares-memory" {
				m = m.Clone()
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// conflict returns the *memcore.ConflictError of writing m into the raw
// map, or nil; the caller holds b.mu.
func (b *broken) conflict(m *memcore.MemoryFile) error {
	if m.Meta.Supersedes == nil {
		return nil
	}
	all := make([]*memcore.MemoryFile, 0, len(b.raw))
	for _, o := range b.raw {
		all = append(all, o)
	}
	g := memcore.NewGraph(all)
	for _, o := range all {
		if o.Meta.Supersedes != nil && *o.Meta.Supersedes == *m.Meta.Supersedes {
			head, _ := g.Head(o.Meta.ID)
			return &memcore.ConflictError{ID: m.Meta.ID, Predecessor: *m.Meta.Supersedes, Successor: o.Clone(), Head: head.Clone()}
		}
	}
	return nil
}
