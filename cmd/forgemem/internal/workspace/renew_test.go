package workspace_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/settings"
)

// After RenewAnchors, a long-lived workspace checks anchors as a new
// process does: here a function that left its file and came back, by an
// edit in place, in another file of the same folder — which a checker that
// searched the folder before may not look for again.
func TestRenewAnchorsChecksAsANewProcess(t *testing.T) {
	ws, root, git := shopRepo(t)
	ctx := context.Background()
	writeRepoFile(t, root, "internal/db/orders.go", "package db\n\nfunc Orders() {}\n")
	git("add", "internal")
	git("commit", "-qm", "orders")
	res, err := ws.Remember(ctx, workspace.RememberInput{Text: "Call `GetOrder` in internal/db/queries.go.",
		Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ws.Store().Read(ctx, res.Memory.ID)
	if err != nil {
		t.Fatal(err)
	}
	fresh := func() string { // what a new process says
		t.Helper()
		s, err := settings.Load(settings.Options{WorkDir: root, Home: filepath.Join(filepath.Dir(root), "home")})
		if err != nil {
			t.Fatal(err)
		}
		other, err := workspace.Open(s, workspace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return other.Anchors().Stale(ctx, m)
	}
	writeRepoFile(t, root, "internal/db/queries.go", "package db\n\nfunc ListOrders() {}\n")
	if got := ws.Anchors().Stale(ctx, m); got == "" || got != fresh() {
		t.Fatalf("GetOrder gone: %q; a new process says %q", got, fresh())
	}
	// Back, in orders.go, written in place: the folder's listing is the
	// same.
	writeRepoFile(t, root, "internal/db/orders.go", "package db\n\nfunc Orders() {}\n\nfunc GetOrder(id int) error { return nil }\n")
	ws.RenewAnchors()
	if got, want := ws.Anchors().Stale(ctx, m), fresh(); got != want {
		t.Errorf("GetOrder back in orders.go, after RenewAnchors: %q; a new process says %q", got, want)
	}
}
