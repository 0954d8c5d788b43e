package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/fakeopenai"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
)

const queries = "package db\n\n// GetOrder reads an order.\nfunc GetOrder(id int) error { return nil }\n\nfunc ListOrders() {}\n"

// shopRepo is a workspace over a git repository holding
// internal/db/queries.go, committed, and a function running git in it.
func shopRepo(t *testing.T) (*workspace.Workspace, string, func(args ...string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws := open(t)
	root := filepath.Dir(filepath.Dir(ws.Store().Dir(memcore.ScopeRepo)))
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Env = append(withoutGit(os.Environ()), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.RemoveAll(filepath.Join(root, ".git")); err != nil {
		t.Fatal(err)
	}
	writeRepoFile(t, root, "internal/db/queries.go", queries)
	git("init", "-q")
	git("add", "internal")
	git("commit", "-qm", "shop")
	return ws, root, git
}

func writeRepoFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestRememberRecordsAnchors(t *testing.T) {
	ws, _, _ := shopRepo(t)
	ctx := context.Background()
	res, err := ws.Remember(ctx, workspace.RememberInput{
		Text: "Call `GetOrder` in internal/db/queries.go; never raw SQL in handlers.", Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions,
		Anchors:  []memcore.Anchor{{Path: "internal/db/gone.go"}},
		Proposed: []memcore.Anchor{{Path: "internal/db/queries.go", Symbol: "ListOrders"}, {Path: "invented.go"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range res.Memory.Anchors {
		got = append(got, a.Path+"#"+a.Symbol)
		if a.Path == "internal/db/queries.go" && (a.Blob == "" || a.Commit == "") {
			t.Errorf("%+v: no state recorded", a)
		}
	}
	want := "internal/db/gone.go#,internal/db/queries.go#ListOrders,internal/db/queries.go#,internal/db/queries.go#GetOrder"
	if strings.Join(got, ",") != want {
		t.Errorf("anchors %v, want %s", got, want)
	}
	if len(res.MissingAnchors) != 1 || len(res.DroppedAnchors) != 1 {
		t.Errorf("missing %v, dropped %v", res.MissingAnchors, res.DroppedAnchors)
	}
	_, err = ws.Remember(ctx, workspace.RememberInput{Text: "Prefers short names.", Scope: memcore.ScopeUser,
		Category: memcore.CategoryCodingPreferences, Anchors: []memcore.Anchor{{Path: "x.go"}}})
	if !errors.Is(err, workspace.ErrInvalidInput) || !strings.Contains(err.Error(), "--scope repo") {
		t.Errorf("user memory with anchors: %v", err)
	}
	_, err = ws.Remember(ctx, workspace.RememberInput{Text: "Bad anchor.", Scope: memcore.ScopeRepo,
		Category: memcore.CategoryPatterns, Anchors: []memcore.Anchor{{Path: "/etc/passwd"}}})
	if !errors.Is(err, workspace.ErrInvalidInput) {
		t.Errorf("absolute anchor: %v", err)
	}
	// More anchors than a memory records: refused, not cut without a word.
	many := make([]memcore.Anchor, 17)
	for i := range many {
		many[i] = memcore.Anchor{Path: fmt.Sprintf("internal/db/f%d.go", i)}
	}
	_, err = ws.Remember(ctx, workspace.RememberInput{Text: "Too many anchors.", Scope: memcore.ScopeRepo,
		Category: memcore.CategoryPatterns, Anchors: many})
	if !errors.Is(err, workspace.ErrInvalidInput) || !strings.Contains(err.Error(), "17 anchors given") {
		t.Errorf("17 anchors: %v", err)
	}
	if _, err = ws.Remember(ctx, workspace.RememberInput{Text: "As many anchors as a memory records.", Scope: memcore.ScopeRepo,
		Category: memcore.CategoryPatterns, Anchors: many[:16]}); err != nil {
		t.Errorf("16 anchors: %v", err)
	}
}

// A memory whose function is deleted is reported, listed, shown and
// recalled as possibly outdated; one whose file is renamed gets a fix.
func TestStaleMemoryIsReportedAndFixed(t *testing.T) {
	ws, root, git := shopRepo(t)
	ctx := context.Background()
	res, err := ws.Remember(ctx, workspace.RememberInput{Text: "Call `GetOrder` in internal/db/queries.go.",
		Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Memory.ID
	if probs := staleOnly(t, ws); len(probs) != 0 {
		t.Fatalf("fresh: %+v", probs)
	}

	writeRepoFile(t, root, "internal/db/queries.go", "package db\n\nfunc ListOrders() {}\n")
	const reason = "`GetOrder` is no longer defined in internal/db/queries.go"
	probs := staleOnly(t, ws)
	if len(probs) != 1 || probs[0].ID != id || probs[0].Status != "undefined" || probs[0].Anchor == nil ||
		probs[0].Anchor.Symbol != "GetOrder" || !strings.HasPrefix(probs[0].Message, reason) {
		t.Errorf("validate: %+v", probs)
	}
	list, err := ws.List(ctx, workspace.ListOptions{Stale: true})
	if err != nil || len(list.Memories) != 1 || list.Memories[0].Stale != reason {
		t.Errorf("list --stale: %+v, %v", list, err)
	}
	d, err := ws.Show(ctx, id)
	if err != nil || d.Memory.Stale != reason {
		t.Errorf("show: %q, %v", d.Memory.Stale, err)
	}
	rec, err := ws.Recall(ctx, []memcore.Message{{Role: memcore.RoleUser, Content: "how do I read an order with GetOrder"}})
	if err != nil || !strings.Contains(rec.Injection, "May be outdated: "+reason+".") {
		t.Errorf("recall: %v\n%s", err, rec.Injection)
	}

	writeRepoFile(t, root, "internal/db/queries.go", queries)
	git("mv", "internal/db/queries.go", "internal/db/orders.go")
	fix, err := ws.FixStale(ctx, true)
	if err != nil || len(fix.Fixes) != 1 || fix.Fixes[0].Content != "Call `GetOrder` in internal/db/orders.go." || fix.Fixes[0].Written != "" {
		t.Fatalf("fix, dry run: %+v, %v", fix, err)
	}
	if after, _ := ws.Show(ctx, id); after.Memory.Version != 1 || len(after.Chain) != 1 {
		t.Errorf("the dry run wrote a version: %+v", after.Chain)
	}
	fix, err = ws.FixStale(ctx, false)
	if err != nil || len(fix.Fixes) != 1 || fix.Fixes[0].Written == "" || fix.Fixes[0].StillStale != "" {
		t.Fatalf("fix: %+v, %v", fix, err)
	}
	d, err = ws.Show(ctx, id)
	if err != nil || len(d.Chain) != 2 || d.Chain[1].ID != fix.Fixes[0].Written || d.Chain[1].Content != fix.Fixes[0].Content {
		t.Errorf("the new version is not the chain's head: %+v, %v", d, err)
	}
	// The fix is a revision (memcore.Writer.Revise): who stated the memory,
	// and that it is in force, are the version's it revises.
	if v := d.Chain[len(d.Chain)-1]; v.Source != d.Chain[0].Source || v.Source != "user" || v.Status != "" {
		t.Errorf("the fixed version: source %s, status %q; want the user's, in force", v.Source, v.Status)
	}
	if probs := staleOnly(t, ws); len(probs) != 0 {
		t.Errorf("after the fix: %+v", probs)
	}
}

// staleOnly returns the stale problems validate reports.
func staleOnly(t *testing.T, ws *workspace.Workspace) []workspace.Problem {
	t.Helper()
	probs, err := ws.Validate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []workspace.Problem
	for _, p := range probs {
		if p.Kind == workspace.ProblemStale {
			out = append(out, p)
		}
	}
	return out
}

// memory.stale: drop leaves a stale memory out of recall; search still
// shows it, labelled.
func TestStaleSettingDropsFromRecall(t *testing.T) {
	ws, root, _ := shopRepo(t)
	ctx := context.Background()
	if _, err := ws.Remember(ctx, workspace.RememberInput{Text: "Call `GetOrder` in internal/db/queries.go.",
		Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions}); err != nil {
		t.Fatal(err)
	}
	writeRepoFile(t, root, "internal/db/queries.go", "package db\n")
	if ws.Settings().Stale = memretrieve.StaleDrop; ws.Settings().RetrieveConfig().Stale != memretrieve.StaleDrop {
		t.Fatal("the setting does not reach the retrieval config")
	}
	rec, err := ws.Recall(ctx, []memcore.Message{{Role: memcore.RoleUser, Content: "how do I read an order with GetOrder"}})
	if err != nil || len(rec.Memories) != 0 || rec.StaleDropped != 1 {
		t.Errorf("recall with drop: %d memories, %d dropped, %v", len(rec.Memories), rec.StaleDropped, err)
	}
	hits, err := ws.Search(ctx, "GetOrder", 5)
	if err != nil || len(hits.Hits) != 1 || hits.Hits[0].Memory.Stale == "" {
		t.Errorf("search: %+v, %v", hits, err)
	}
}

// A capture pass records the classifier's anchors the repository has and
// those the text names, and lists a memory whose folder went away to the
// classifier as possibly outdated.
func TestCaptureRecordsAnchorsAndShowsStaleMemories(t *testing.T) {
	var mu sync.Mutex
	var prompts []string
	srv, err := fakeopenai.Start(func(req fakeopenai.ChatRequest) string {
		if req.SchemaName != memcapture.ClassifierSchemaName {
			return "{}"
		}
		mu.Lock()
		prompts = append(prompts, req.Messages[len(req.Messages)-1].Content)
		first := len(prompts) == 1
		mu.Unlock()
		if !first {
			return `{"memories": []}`
		}
		return `{"memories": [{"content": "Migrations live in db/migrations, one file per change.", "scope": "repo", "category": "project-conventions",
			"supersedes": "", "related": [], "anchors": [{"path": "db/migrations", "symbol": ""}, {"path": "invented/dir", "symbol": ""}, {"path": "", "symbol": "MissingFunc"}],
			"evidence": {"messages": [1], "quote": "migrations go in db/migrations"}}]}`
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ws := open(t, "FORGEMEM_PROVIDER=openai", "FORGEMEM_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=sk-test",
		"FORGEMEM_CLASSIFIER_MODEL=classifier", "FORGEMEM_EMBEDDING_MODEL=embedder")
	root := filepath.Dir(filepath.Dir(ws.Store().Dir(memcore.ScopeRepo)))
	writeRepoFile(t, root, "db/migrations/0001.sql", "create table t (id int);\n")
	ctx := context.Background()
	window := []memcore.Message{{Role: memcore.RoleUser, Content: "migrations go in db/migrations"}, {Role: memcore.RoleAssistant, Content: "noted"}}
	res, err := ws.Capture(ctx, window, "s1")
	if err != nil || len(res.Written) != 1 {
		t.Fatalf("capture: %+v, %v", res, err)
	}
	if a := res.Written[0].Anchors; len(a) != 1 || a[0].Path != "db/migrations" || a[0].Symbol != "" {
		t.Errorf("anchors %+v, want db/migrations alone", a)
	}
	if err := os.RemoveAll(filepath.Join(root, "db")); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Capture(ctx, append(window, memcore.Message{Role: memcore.RoleUser, Content: "we moved them"}), "s2"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(prompts[1], "(may be outdated: db/migrations no longer exists)") {
		t.Errorf("the classifier's list does not say the memory may be outdated:\n%s", prompts[1])
	}
}

// withoutGit returns env without its GIT_* variables, for a test's own git
// commands: a git hook or git rebase -x running the tests sets GIT_DIR,
// which would point them at the repository being worked on.
func withoutGit(env []string) []string {
	return slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
}
