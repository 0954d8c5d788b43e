//go:build unix

package anchor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The repository's own git configuration is someone else's input: no
// file system monitor, filter, text conversion, external diff, pager or
// hook it names ever runs when a checker asks git about renames and the
// commit.
func TestGitConfigurationRunsNothing(t *testing.T) {
	root, git := gitShop(t)
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "evil.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$0 $*\" >> '"+marker+"'\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(t.TempDir(), "hooks")
	for _, h := range []string{"post-checkout", "post-index-change", "fsmonitor-watchman", "reference-transaction"} {
		writeTree(t, hooks, map[string]string{h: ""})
		if err := os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\necho hook >> '"+marker+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range [][2]string{
		{"core.fsmonitor", script}, {"core.pager", script}, {"pager.diff", script}, {"core.hooksPath", hooks},
		{"diff.external", script}, {"diff.evil.textconv", script}, {"diff.evil.command", script},
		{"filter.evil.clean", script}, {"filter.evil.smudge", script}, {"filter.evil.process", script},
	} {
		git("config", kv[0], kv[1])
	}
	writeTree(t, root, map[string]string{".gitattributes": "* filter=evil diff=evil\n"})
	os.Remove(marker)
	c, err := New(DefaultConfig(root))
	if err != nil {
		t.Fatal(err)
	}
	rec := c.Anchors(context.Background(), "GetOrder in internal/db/queries.go; ListOrders in internal/db/orders.go", nil, nil).Anchors
	if len(rec) == 0 || rec[0].Commit == "" {
		t.Fatalf("anchors %+v: want a commit", rec)
	}
	// A rename git must detect, and a modified work tree file it would
	// have to filter were it to read the work tree.
	if err := os.Rename(filepath.Join(root, "internal/db/orders.go"), filepath.Join(root, "internal/db/list.go")); err != nil {
		t.Fatal(err)
	}
	writeTree(t, root, map[string]string{"internal/db/queries.go": shop["internal/db/queries.go"] + "\n// edited\n"})
	fresh, err := New(DefaultConfig(root))
	if err != nil {
		t.Fatal(err)
	}
	r := fresh.Check(context.Background(), rec)
	if got := r.Reason(); got != "internal/db/orders.go no longer exists; `ListOrders` moved to internal/db/list.go" {
		t.Errorf("Reason = %q", got)
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Errorf("the repository's configuration ran something:\n%s", data)
	}
	// The trap is armed: git as people run it does run the configuration.
	git("diff", "--stat")
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("git diff ran nothing of the configuration, so this test proves nothing: %v", err)
	}
}
