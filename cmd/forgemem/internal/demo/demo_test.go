package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/golden"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
)

// idPattern matches a memory id.
var idPattern = regexp.MustCompile(`mem_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// normalize makes a run's output comparable: the memory folder becomes
// $DIR, and each distinct memory id becomes mem_<n>, numbered in order of
// first appearance.
func normalize(out, dir string) string {
	out = strings.ReplaceAll(out, dir, "$DIR")
	seen := map[string]string{}
	return idPattern.ReplaceAllStringFunc(out, func(id string) string {
		if _, ok := seen[id]; !ok {
			seen[id] = fmt.Sprintf("mem_%d", len(seen)+1)
		}
		return seen[id]
	})
}

// play runs the demo, failing the test on an error, and returns its
// output and record.
func play(t *testing.T, opts Options) (string, *record) {
	t.Helper()
	var out bytes.Buffer
	rec, err := run(context.Background(), &out, opts)
	if err != nil {
		t.Fatalf("run: %v\noutput so far:\n%s", err, out.String())
	}
	return out.String(), rec
}

func TestOutputGolden(t *testing.T) {
	out, rec := play(t, Options{})
	golden.Check(t, filepath.Join("testdata", "demo.golden"), []byte(normalize(out, rec.dir)))
}

// Capture runs in the background and a turn trigger may replace one still
// waiting, yet every run must print the same.
func TestRunsPrintTheSame(t *testing.T) {
	first, rec := play(t, Options{})
	want := normalize(first, rec.dir)
	for range 2 {
		out, rec := play(t, Options{})
		if got := normalize(out, rec.dir); got != want {
			t.Fatalf("two runs differ:\n%s", golden.FirstDifference(got, want))
		}
	}
}

func TestTheDecisionChangesAndIsRecalledWithItsHistory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	_, rec := play(t, Options{Dir: dir})
	if len(rec.sessions) != len(script) {
		t.Fatalf("%d sessions recorded, want %d", len(rec.sessions), len(script))
	}

	// Session 2 decides, session 3 changes the decision.
	v1 := only(t, rec.sessions[1].written, memcore.CategoryArchitecturalDecisions)
	if v1.Meta.Version != 1 || v1.Meta.Supersedes != nil || !strings.Contains(v1.Content, "optimistic locking") {
		t.Errorf("session 2's decision: version %d, supersedes %v, content %q", v1.Meta.Version, v1.Meta.Supersedes, v1.Content)
	}
	if n := len(rec.sessions[2].written); n != 1 {
		t.Fatalf("session 3 wrote %d memories, want 1", n)
	}
	v2 := rec.sessions[2].written[0]
	if v2.Meta.Version != 2 || v2.Meta.Supersedes == nil || *v2.Meta.Supersedes != v1.Meta.ID {
		t.Fatalf("session 3's memory: version %d, supersedes %v; want version 2 superseding %s",
			v2.Meta.Version, v2.Meta.Supersedes, v1.Meta.ID)
	}
	if v2.Meta.Scope != v1.Meta.Scope || v2.Meta.Category != v1.Meta.Category {
		t.Errorf("session 3's memory is %s/%s, want %s/%s", v2.Meta.Scope, v2.Meta.Category, v1.Meta.Scope, v1.Meta.Category)
	}
	if !v2.Meta.CreatedAt.After(v1.Meta.CreatedAt) {
		t.Errorf("version 2 was created at %v, not after version 1 (%v)", v2.Meta.CreatedAt, v1.Meta.CreatedAt)
	}

	// The store on disk holds the chain, version 2 at its head.
	store, err := memcore.NewFileStore(filepath.Join(dir, "repo"), filepath.Join(dir, "user"), memcore.FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	chain, err := memcore.VersionChain(context.Background(), store, v2.Meta.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(chain) != 2 || chain[0].Meta.ID != v1.Meta.ID || chain[1].Meta.ID != v2.Meta.ID {
		t.Errorf("the chain of %s has %d versions, want %s then %s", v2.Meta.ID, len(chain), v1.Meta.ID, v2.Meta.ID)
	}
	head, err := memcore.LatestVersion(context.Background(), store, v1.Meta.ID)
	if err != nil || head != v2.Meta.ID {
		t.Errorf("the head of %s is %q (%v), want %s", v1.Meta.ID, head, err, v2.Meta.ID)
	}

	// Session 4 recalls the changed decision with its history, and the
	// correction of session 1, and writes nothing.
	if n := len(rec.sessions[3].written); n != 0 {
		t.Errorf("session 4 wrote %d memories, want none", n)
	}
	if len(rec.sessions[3].recalled) == 0 {
		t.Fatal("session 4 recalled nothing")
	}
	res := rec.sessions[3].recalled[0]
	correction := only(t, rec.sessions[0].written, memcore.CategoryCorrections)
	for _, want := range []string{"History", firstLine(v1.Content), firstLine(v2.Content), firstLine(correction.Content)} {
		if !strings.Contains(res.Injection, want) {
			t.Errorf("session 4's injection lacks %q:\n%s", want, res.Injection)
		}
	}
	found := false
	for _, m := range res.Memories {
		if m.Memory.Meta.ID == v2.Meta.ID {
			found = true
			if len(m.History) != 1 || m.History[0].Meta.ID != v1.Meta.ID {
				t.Errorf("the recalled decision's history has %d versions, want version 1 (%s)", len(m.History), v1.Meta.ID)
			}
		}
		if m.Memory.Meta.ID == v1.Meta.ID {
			t.Errorf("session 4 recalls the superseded version %s as a memory of its own", v1.Meta.ID)
		}
	}
	if !found {
		t.Errorf("session 4 does not recall the decision's head %s", v2.Meta.ID)
	}
}

// only returns the one memory of category c among ms.
func only(t *testing.T, ms []*memcore.MemoryFile, c memcore.Category) *memcore.MemoryFile {
	t.Helper()
	var out []*memcore.MemoryFile
	for _, m := range ms {
		if m.Meta.Category == c {
			out = append(out, m)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d memories of category %s, want 1", len(out), c)
	}
	return out[0]
}

func TestSessionOneCapturesPreferencesAndACorrection(t *testing.T) {
	_, rec := play(t, Options{})
	got := map[string]int{}
	for _, m := range rec.sessions[0].written {
		got[string(m.Meta.Scope)+"/"+string(m.Meta.Category)]++
		if m.Meta.SessionID != "demo-1" || m.Meta.Trigger != memcore.TriggerCadence {
			t.Errorf("%s: session %q, trigger %q", m.Meta.ID, m.Meta.SessionID, m.Meta.Trigger)
		}
		if !m.Meta.CreatedAt.Equal(firstSession) {
			t.Errorf("%s was created at %v, want the session's time %v", m.Meta.ID, m.Meta.CreatedAt, firstSession)
		}
	}
	want := map[string]int{"user/coding-preferences": 2, "user/corrections": 1, "repo/project-conventions": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("session 1 wrote %v, want %v", got, want)
	}
}

func TestToolOutputReachesNoClassifierAndNoFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	out, rec := play(t, Options{Dir: dir})
	if !strings.Contains(out, "<tool_result>") || !strings.Contains(out, "coverage: 91.3%") {
		t.Fatal("the conversation shown holds no tool result: the test proves nothing")
	}
	reqs := rec.llm.Requests()
	if len(reqs) == 0 {
		t.Fatal("the classifier was never called")
	}
	sawReply := false
	for i, req := range reqs {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "coverage: 91.3%") || strings.Contains(m.Content, "<tool_") {
				t.Errorf("classifier request %d holds tool content:\n%s", i, m.Content)
			}
			// The rest of the same assistant message does reach it.
			sawReply = sawReply || strings.Contains(m.Content, "Added httpx.Retry with exponential backoff")
		}
	}
	if !sawReply {
		t.Error("no classifier request holds the assistant's reply around the tool result")
	}
	forEachFile(t, dir, func(path string, data []byte) {
		if bytes.Contains(data, []byte("coverage: 91.3%")) {
			t.Errorf("%s holds the tool output", path)
		}
	})
}

func TestNoSecretReachesDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	out, rec := play(t, Options{Dir: dir})
	if !strings.Contains(out, "User:      Good. The integration test needs the staging key") ||
		!strings.Contains(out, pastedKey) {
		t.Fatal("the user never pastes the key in the conversation shown: the test proves nothing")
	}
	if got := rec.sessions[0].stats.Redactions; got != 1 {
		t.Errorf("capture redacted %d secrets in session 1, want 1", got)
	}
	redacted := 0
	forEachFile(t, dir, func(path string, data []byte) {
		if bytes.Contains(data, []byte(pastedKey)) || bytes.Contains(data, []byte("sk-proj-")) {
			t.Errorf("%s holds the pasted key", path)
		}
		if strings.HasSuffix(path, ".md") {
			if found := redact.Find(string(data)); len(found) > 0 {
				t.Errorf("%s holds a secret: %s", path, found[0].Rule)
			}
			if bytes.Contains(data, []byte("STAGING_API_KEY")) && bytes.Contains(data, []byte(redact.Placeholder)) {
				redacted++
			}
		}
	})
	if redacted != 1 {
		t.Errorf("%d memory files about the staging key show %s, want 1", redacted, redact.Placeholder)
	}
}

// forEachFile calls f with every regular file under dir, the embedding
// cache included.
func forEachFile(t *testing.T, dir string, f func(path string, data []byte)) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		f(path, data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no file under %s", dir)
	}
}

func TestGivenDirKeepsValidMemories(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "memory")
	out, rec := play(t, Options{Dir: dir})
	if !strings.Contains(out, "The files stay in "+dir) {
		t.Errorf("the output does not say the files stay in %s", dir)
	}
	written := map[string]bool{}
	for _, s := range rec.sessions {
		for _, m := range s.written {
			written[m.Meta.ID] = true
		}
	}
	found := map[memcore.Scope]int{}
	for _, scope := range memcore.Scopes() {
		paths, err := filepath.Glob(filepath.Join(dir, string(scope), "*.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			m, err := memcore.Parse(data)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				continue
			}
			if err := m.Validate(); err != nil {
				t.Errorf("%s: %v", p, err)
			}
			if filepath.Base(p) != m.Meta.ID+".md" || m.Meta.Scope != scope {
				t.Errorf("%s holds %s of scope %s", p, m.Meta.ID, m.Meta.Scope)
			}
			if !written[m.Meta.ID] {
				t.Errorf("%s was not shown as written by a session", p)
			}
			found[scope]++
		}
	}
	if found[memcore.ScopeRepo] != 4 || found[memcore.ScopeUser] != 3 {
		t.Errorf("found %d repo and %d user memory files, want 4 and 3", found[memcore.ScopeRepo], found[memcore.ScopeUser])
	}
	if total := found[memcore.ScopeRepo] + found[memcore.ScopeUser]; total != len(written) {
		t.Errorf("%d memory files on disk, %d shown as written", total, len(written))
	}
}

func TestWithoutDirTheTemporaryFolderIsRemoved(t *testing.T) {
	out, rec := play(t, Options{})
	if rec.dir == "" || !strings.Contains(out, "Memory folder: "+rec.dir) {
		t.Fatalf("the output does not name the temporary folder %q", rec.dir)
	}
	if _, err := os.Stat(rec.dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary folder %s is still there (%v)", rec.dir, err)
	}
}

func TestDirMustBeNewOrEmpty(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(mine, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Run(context.Background(), &out, Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("Run in a folder that is not empty: %v, want an error saying so", err)
	}
	if out.Len() != 0 {
		t.Errorf("Run printed %q before refusing the folder", out.String())
	}
	entries, _ := os.ReadDir(dir)
	if data, _ := os.ReadFile(mine); string(data) != "mine" || len(entries) != 1 {
		t.Errorf("the folder was changed: %d entries, notes.md %q", len(entries), data)
	}

	empty := t.TempDir()
	if err := Run(context.Background(), &out, Options{Dir: empty}); err != nil {
		t.Errorf("Run in an empty folder: %v", err)
	}
}

func TestCancelledContextStopsTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	rec, err := run(ctx, &out, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run with a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := os.Stat(rec.dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary folder %s is still there (%v)", rec.dir, err)
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestOutputErrorIsReturned(t *testing.T) {
	err := Run(context.Background(), failingWriter{}, Options{})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Run with a failing writer: %v, want the write error", err)
	}
}

// BenchmarkRun measures a whole demo, which a new user waits for: go test
// -bench Run ./cmd/forgemem/internal/demo.
func BenchmarkRun(b *testing.B) {
	for b.Loop() {
		if err := Run(context.Background(), io.Discard, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
