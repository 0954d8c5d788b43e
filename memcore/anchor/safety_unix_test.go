//go:build unix

package anchor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// A repository is someone else's input: nothing is read through a
// symbolic link (to a folder or a file outside the tree), a FIFO is never
// waited on, and a file over the size cap is not read. Each is Unchecked,
// never stale and never a hang.
func TestCheckNeverFollowsLinksOrWaits(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.go": "package secret\n\nfunc Secret() {}\n"})
	root := t.TempDir()
	writeTree(t, root, map[string]string{"big.txt": strings.Repeat("x", 2<<10) + " Needle"})
	if err := os.Symlink(outside, filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(root, "secret.go")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(root)
	cfg.NoGit, cfg.MaxFileBytes = true, 1<<10
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	anchors := []memcore.Anchor{
		{Path: "linked/secret.go", Symbol: "Secret"},
		{Path: "secret.go", Symbol: "Secret"},
		{Path: "pipe.txt", Symbol: "Anything"},
		{Path: "big.txt", Symbol: "Needle"},
	}
	done := make(chan Report)
	go func() { done <- c.Check(context.Background(), anchors) }()
	var r Report
	select {
	case r = <-done:
	case <-time.After(time.Minute): // only a hang reaches this
		t.Fatal("the check waited on the FIFO")
	}
	for _, f := range r.Findings {
		if f.Status != Unchecked || f.Stale() {
			t.Errorf("%s: %s (%v), want unchecked", f.Anchor, f.Status, f.Err)
		}
	}
	if !errors.Is(r.Findings[0].Err, errLink) || !errors.Is(r.Findings[3].Err, errTooLarge) {
		t.Errorf("errors: %v; %v", r.Findings[0].Err, r.Findings[3].Err)
	}
	// Nothing outside the tree becomes an anchor either.
	got := c.Anchors(context.Background(), "Secret() in linked/secret.go and secret.go; pipe.txt", nil, nil)
	if txt := anchorsText(got.Anchors); strings.Contains(txt, "Secret") || strings.Contains(txt, "linked") || strings.Contains(txt, "pipe") {
		t.Errorf("anchors through links or a FIFO:\n%s", txt)
	}
}
