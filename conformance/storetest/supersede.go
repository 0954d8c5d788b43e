package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/forgemem/forgemem/memcore"
)

// The rules of superseding: a version gets at most one successor through a
// store (memcore.MemoryStore's Write contract), so chains never fork.

// nextVersion returns the next version of pred in scope.
func nextVersion(pred *memcore.MemoryFile, scope memcore.Scope, content string) *memcore.MemoryFile {
	m := memcore.NewVersion(pred, "session-2", memcore.TriggerCadence)
	m.Meta.Scope = scope
	m.Content = content
	return m
}

// checkConflict reports whether err is the conflict of a write of m
// superseding pred, whose successor and head are succ and head; it reports
// each way it is not with rule as the rule's statement.
func (s *suite) checkConflict(err error, m, pred, succ, head *memcore.MemoryFile, rule string) bool {
	s.t.Helper()
	if !errors.Is(err, memcore.ErrConflict) {
		s.t.Errorf("rule: %s fails with ErrConflict; got %v", rule, err)
		return false
	}
	var ce *memcore.ConflictError
	if !errors.As(err, &ce) {
		s.t.Errorf("rule: %s fails with a *memcore.ConflictError (errors.As); got %T: %v", rule, err, err)
		return false
	}
	id := func(m *memcore.MemoryFile) string {
		if m == nil {
			return "nil"
		}
		return m.Meta.ID
	}
	if ce.ID != m.Meta.ID || ce.Predecessor != pred.Meta.ID || id(ce.Successor) != succ.Meta.ID || id(ce.Head) != head.Meta.ID {
		s.t.Errorf("rule: the ConflictError of %s names the memory, its predecessor, the existing successor and the chain's head:\n"+
			"got ID %s, Predecessor %s, Successor %s, Head %s\nwant %s, %s, %s, %s",
			rule, ce.ID, ce.Predecessor, id(ce.Successor), id(ce.Head), m.Meta.ID, pred.Meta.ID, succ.Meta.ID, head.Meta.ID)
		return false
	}
	return true
}

func testSecondSuccessor(ctx context.Context, s *suite) {
	v1 := memory(memcore.ScopeRepo, "Indent with tabs.")
	s.write(ctx, v1)
	v2 := nextVersion(v1, memcore.ScopeRepo, "Indent with four spaces.")
	s.write(ctx, v2)
	for _, scope := range memcore.Scopes() {
		fork := nextVersion(v1, scope, "Indent with two spaces ("+string(scope)+").")
		err := s.store.Write(ctx, fork)
		s.checkConflict(err, fork, v1, v2, v2, fmt.Sprintf("a second successor of a version, in scope %s,", scope))
		if _, err := s.store.Read(ctx, fork.Meta.ID); !errors.Is(err, memcore.ErrNotFound) {
			s.t.Errorf("rule: a Write refused for a conflict stores nothing; Read gives %v", err)
		}
	}
	v3 := nextVersion(v2, memcore.ScopeUser, "Indent with four spaces; tabs in Makefiles.")
	if err := s.store.Write(ctx, v3); err != nil {
		s.t.Fatalf("rule: superseding a chain's head succeeds; Write: %v", err)
	}
	late := nextVersion(v1, memcore.ScopeRepo, "A late change of version 1.")
	s.checkConflict(s.store.Write(ctx, late), late, v1, v2, v3, "a successor of a version superseded twice over")
}

func testConcurrentSupersedes(ctx context.Context, s *suite) {
	v1 := memory(memcore.ScopeUser, "Prefers pessimistic locking.")
	s.write(ctx, v1)
	n := s.cfg.Writers
	ms := make([]*memcore.MemoryFile, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range n {
		ms[w] = nextVersion(v1, memcore.Scopes()[w%2], fmt.Sprintf("Prefers optimistic locking (writer %d).", w))
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[w] = s.store.Write(ctx, ms[w])
		}()
	}
	close(start)
	wg.Wait()
	var winner *memcore.MemoryFile
	won := 0
	for w, err := range errs {
		if err == nil {
			won++
			winner = ms[w]
		}
	}
	if won != 1 {
		s.t.Fatalf("rule: of %d concurrent writes superseding one version exactly one succeeds; %d did", n, won)
	}
	for w, err := range errs {
		if err != nil && !s.checkConflict(err, ms[w], v1, winner, winner, "a write that loses a race to supersede a version") {
			break
		}
	}
	all, err := s.store.List(ctx)
	if err != nil {
		s.t.Fatalf("List: %v", err)
	}
	var successors []string
	for _, m := range all {
		if m.Meta.Supersedes != nil && *m.Meta.Supersedes == v1.Meta.ID {
			successors = append(successors, m.Meta.ID)
		}
	}
	if len(successors) != 1 || successors[0] != winner.Meta.ID {
		s.t.Errorf("rule: after concurrent supersedes the version has one successor, the winner %s; stored: %v", winner.Meta.ID, successors)
	}
}
