package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/golden"
	"github.com/forgemem/forgemem/memcore"
)

// now is the clock of every run: the memories remember and forget write
// are dated with it.
var now = time.Date(2025, time.March, 10, 9, 30, 0, 0, time.UTC)

// fixture is a repository and a home folder in a temporary folder, and
// the environment the command runs in.
type fixture struct {
	t    *testing.T
	root string
	repo string // a folder holding .git
	home string
	env  []string
	// terminal makes stderr look like a terminal (progress bars).
	terminal bool
	// httpClient sends the providers' requests; nil means a default client.
	httpClient *http.Client
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{t: t, root: root, repo: filepath.Join(root, "repo"), home: filepath.Join(root, "home")}
	for _, d := range []string{filepath.Join(f.repo, ".git"), f.home} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// result is what one run printed and its exit code.
type result struct {
	stdout, stderr string
	code           int
}

// run runs the command in the repository with no input.
func (f *fixture) run(args ...string) result {
	f.t.Helper()
	return f.runIn(context.Background(), f.repo, "", args...)
}

// runIn runs the command in dir with stdin.
func (f *fixture) runIn(ctx context.Context, dir, stdin string, args ...string) result {
	f.t.Helper()
	return f.runReading(ctx, dir, strings.NewReader(stdin), args...)
}

// runReading runs the command in dir with stdin read from r.
func (f *fixture) runReading(ctx context.Context, dir string, r io.Reader, args ...string) result {
	f.t.Helper()
	var stdout, stderr bytes.Buffer
	env := cli.Env{
		Args: args, Stdin: r, Stdout: &stdout, Stderr: &stderr,
		Now: func() time.Time { return now }, HTTPClient: f.httpClient,
	}
	env.Settings.WorkDir, env.Settings.Home, env.Settings.Env = dir, f.home, f.env
	if f.terminal {
		env.IsTerminal = func(w io.Writer) bool { return w == &stderr }
	}
	code := cli.Run(ctx, env)
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// endOfInput is how the command names the keys that end what is typed at
// a terminal of the system the tests run on.
func endOfInput() string {
	if runtime.GOOS == "windows" {
		return "Ctrl-Z then Enter"
	}
	return "Ctrl-D"
}

// repoDir and userDir are the memory folders.
func (f *fixture) repoDir() string { return filepath.Join(f.repo, ".forge", "memory") }
func (f *fixture) userDir() string { return filepath.Join(f.home, ".forge", "memory") }

// store opens the fixture's memory folders.
func (f *fixture) store() *memcore.FileStore {
	f.t.Helper()
	s, err := memcore.NewFileStore(f.repoDir(), f.userDir(), memcore.FileStoreConfig{})
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// write stores memories.
func (f *fixture) write(ms ...*memcore.MemoryFile) {
	f.t.Helper()
	s := f.store()
	for _, m := range ms {
		if err := s.Write(context.Background(), m); err != nil {
			f.t.Fatal(err)
		}
	}
}

// writeFile writes a file by hand, as a person would.
func (f *fixture) writeFile(path, content string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

// id is the n-th fixed memory id.
func id(n int) string { return fmt.Sprintf("mem_%08d-0000-4000-8000-%012d", n, n) }

// memory is a fixed memory n, created on day d of March 2025.
func memory(n int, scope memcore.Scope, cat memcore.Category, d int, content string) *memcore.MemoryFile {
	t := time.Date(2025, time.March, d, 10, 0, 0, 0, time.UTC)
	return &memcore.MemoryFile{Meta: memcore.MemoryMeta{
		ID: id(n), CreatedAt: t, UpdatedAt: t, Version: 1, Scope: scope, Category: cat,
		SessionID: "s" + fmt.Sprint(d), Trigger: memcore.TriggerCadence,
	}, Content: content}
}

// supersedes makes m the next version of prev.
func supersedes(m, prev *memcore.MemoryFile) *memcore.MemoryFile {
	p := prev.Meta.ID
	m.Meta.Supersedes = &p
	m.Meta.Version = prev.Meta.Version + 1
	m.Meta.Scope = prev.Meta.Scope
	return m
}

// link adds a related edge to m.
func link(m *memcore.MemoryFile, rel memcore.Relationship, target string) *memcore.MemoryFile {
	m.Meta.Related = append(m.Meta.Related, memcore.RelatedMemory{ID: target, Relationship: rel})
	return m
}

// seed writes the memories most tests start from: a decision that
// changed, with a contradicting correction and a refining convention; a
// repository convention; and two personal preferences.
func (f *fixture) seed() {
	f.t.Helper()
	v1 := memory(1, memcore.ScopeRepo, memcore.CategoryArchitecturalDecisions, 2,
		"Use pessimistic locking (SELECT … FOR UPDATE) for user updates.")
	v2 := supersedes(memory(2, memcore.ScopeRepo, memcore.CategoryArchitecturalDecisions, 5,
		"Use optimistic locking with a version column for user updates, because row locks caused timeouts under load."), v1)
	f.write(v1, v2,
		link(memory(3, memcore.ScopeRepo, memcore.CategoryCorrections, 6,
			"Payments keep pessimistic locking: an optimistic retry once charged a customer twice."), memcore.RelationshipContradicts, id(2)),
		memory(4, memcore.ScopeRepo, memcore.CategoryProjectConventions, 3, "Migrations live in db/migrations, one file per change."),
		memory(5, memcore.ScopeUser, memcore.CategoryCodingPreferences, 1, "Prefers table-driven tests."),
		memory(6, memcore.ScopeUser, memcore.CategoryCorrections, 4,
			"Never start a goroutine without a way to stop it: pass a context and wait for it to end."),
	)
}

// idPattern matches memory ids, whole or cut to their first 8 digits.
var idPattern = regexp.MustCompile(`mem_([0-9a-f]{8})(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})?`)

// normalize makes output stable: the temporary folders become $REPO and
// $HOME, and ids other than the fixed ones become mem_NEW00001, … in order
// of appearance.
func (f *fixture) normalize(s string) string {
	s = strings.ReplaceAll(s, f.repo, "$REPO")
	s = strings.ReplaceAll(s, f.home, "$HOME")
	s = strings.ReplaceAll(s, f.root, "$TMP")
	seen := map[string]string{}
	return idPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := idPattern.FindStringSubmatch(m)
		if strings.HasPrefix(sub[1], "0000") {
			return m
		}
		n, ok := seen[sub[1]]
		if !ok {
			n = fmt.Sprintf("NEW%05d", len(seen)+1)
			seen[sub[1]] = n
		}
		if sub[2] == "" {
			return "mem_" + n
		}
		return "mem_" + n + "-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
	})
}

// check compares a run's exit code with want and its normalised stdout
// with a golden file.
func (f *fixture) check(name string, r result, wantCode int) {
	f.t.Helper()
	if r.code != wantCode {
		f.t.Errorf("exit code %d, want %d; stderr:\n%s", r.code, wantCode, r.stderr)
	}
	golden.Check(f.t, filepath.Join("testdata", name+".golden"), []byte(f.normalize(r.stdout)))
}

// conversation writes messages as JSON Lines.
func conversation(msgs ...string) string {
	var b strings.Builder
	for i, m := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&b, "{\"role\":%q,\"content\":%q}\n", role, m)
	}
	return b.String()
}

// handWrite writes m as a file in the folder of scope, as a person editing
// the folder would: nothing checks the chain.
func (f *fixture) handWrite(scope memcore.Scope, name string, m *memcore.MemoryFile) {
	f.t.Helper()
	data, err := memcore.Serialize(m)
	if err != nil {
		f.t.Fatal(err)
	}
	dir := f.repoDir()
	if scope == memcore.ScopeUser {
		dir = f.userDir()
	}
	f.writeFile(filepath.Join(dir, name+".md"), string(data))
}
