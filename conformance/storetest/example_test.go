package storetest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/forgemem/forgemem/conformance/storetest"
	"github.com/forgemem/forgemem/memcore"
)

// dirHarness is what a store plug-in writes to run the suite: a harness that
// opens the store under test over the same storage on every call. Here the
// store is memcore's FileStore over two folders; a plug-in opens its own
// store (a database, say) over the storage the harness made.
type dirHarness struct{ repo, user string }

// newDirHarness is the storetest.HarnessMaker; Run calls it for every rule,
// so each starts from empty storage.
func newDirHarness(_ context.Context, t *testing.T) (storetest.Harness, error) {
	dir := t.TempDir()
	return dirHarness{repo: filepath.Join(dir, "repo"), user: filepath.Join(dir, "user")}, nil
}

func (h dirHarness) Open(context.Context) (memcore.MemoryStore, error) {
	return memcore.NewFileStore(h.repo, h.user, memcore.FileStoreConfig{})
}

// Capabilities: a store that cannot keep unknown front-matter keys would say
// so here, with the reason, and the rule that needs them would be skipped.
func (dirHarness) Capabilities() storetest.Capabilities { return storetest.Capabilities{} }

func (dirHarness) Close() {}

// Example shows a store plug-in author how to run the suite: a harness type
// and a test that passes it to storetest.Run —
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, newDirHarness, storetest.Config{})
//	}
//
// (see TestExampleHarness, which is that test). The example itself checks
// that the harness opens stores over shared storage, which the persistence
// rule relies on.
func Example() {
	h := dirHarness{repo: filepath.Join(tempDir, "repo"), user: filepath.Join(tempDir, "user")}
	ctx := context.Background()
	first, _ := h.Open(ctx)
	m := &memcore.MemoryFile{Content: "Prefers table-driven tests."}
	m.Meta = memcore.MemoryMeta{ID: memcore.NewMemoryID(), CreatedAt: exampleTime, Version: 1,
		Scope: memcore.ScopeUser, Category: memcore.CategoryCodingPreferences}
	_ = first.Write(ctx, m)
	second, _ := h.Open(ctx)
	got, err := second.Read(ctx, m.Meta.ID)
	fmt.Println(got.Content, err)
	// Output: Prefers table-driven tests. <nil>
}
