package anchor

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// writeTree writes files (slash paths relative to root, contents) under
// root.
func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newChecker returns a Checker of root that never runs git and walks the
// tree at every check of a symbol without a path.
func newChecker(t testing.TB, root string) *Checker {
	t.Helper()
	cfg := DefaultConfig(root)
	cfg.NoGit = true
	cfg.TreeTTL = -1
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// anchorsText writes anchors one per line, "path#symbol", for comparing.
func anchorsText(anchors []memcore.Anchor) string {
	var b strings.Builder
	for _, a := range anchors {
		b.WriteString(a.Path)
		if a.Symbol != "" {
			b.WriteString("#" + a.Symbol)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// needGit skips the test when git is not installed, and returns a
// function running git in dir with a fixed identity and no user
// configuration.
func needGit(t testing.TB, dir string) func(args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(withoutGit(os.Environ()), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
			"GIT_AUTHOR_DATE=2025-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2025-01-01T00:00:00Z")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
}

// withoutGit returns env without its GIT_* variables, for a test's own git
// commands: a git hook or git rebase -x running the tests sets GIT_DIR,
// which would point them at the repository being worked on.
func withoutGit(env []string) []string {
	return slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
}
