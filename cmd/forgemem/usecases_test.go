package main_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// The use cases of forgemem, each played with the built command against a
// scripted model behind the OpenAI wire format: sessions are captured with
// `forgemem capture`, and what a later session's agent gets is `forgemem
// recall`.

// apiKey is a secret a user pastes; the model repeats it in a memory.
const apiKey = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"

// toolMarker is in tool output only; it must never reach the classifier
// or the disk.
const toolMarker = "TOOL-OUTPUT-7f3a"

// UC-1: the user corrects the agent once (session 3); in session 4 the
// agent gets the preference without being told.
func TestUC1PreferenceRetention(t *testing.T) {
	w := newWorld(t, remember{
		when:     "use structured logging",
		content:  "In library code use structured logging with zerolog, never fmt.Println. (The user pasted the key " + apiKey + ".)",
		scope:    "user",
		category: "corrections",
	})
	repo := w.repo("service")

	// Sessions 1 and 2 hold nothing worth keeping.
	out := w.session(repo, "Rename the handler to userHandler.", "Renamed.")
	contains(t, "session 1's capture", out, "Nothing new worth remembering")

	// Session 3: the correction, with a tool call and a pasted key.
	out = w.session(repo,
		"Stop using fmt.Println in library code — use structured logging. My key is "+apiKey+", by the way.",
		"Understood. <tool_result>"+toolMarker+" grep -rn Println</tool_result> I will use zerolog from now on.",
		"tool:"+toolMarker+" 3 files changed",
	)
	contains(t, "session 3's capture", out, "Captured 1 memory", "user/corrections", "Replaced 1 secret with [REDACTED].")

	// Session 4: a task where the preference matters, never restated.
	block := w.recall(repo, "Add logging to the parser in the library code.")
	contains(t, "session 4's recalled block", block, "<recalled_memories>", "corrections, user scope, stated by the user, version 1",
		"In library code use structured logging with zerolog, never fmt.Println.")

	// No tool output reached a model, no secret reached the disk.
	for _, req := range w.srv.Requests() {
		if strings.Contains(req.Text(), toolMarker) {
			t.Errorf("tool output reached the %q request", req.SchemaName)
		}
	}
	disk := onDisk(t, filepath.Join(w.home, ".forge"), filepath.Join(repo, ".forge"))
	for _, leak := range []string{apiKey, toolMarker} {
		if strings.Contains(disk, leak) {
			t.Errorf("%q is on disk", leak)
		}
	}
	if out, errOut, code := w.run(repo, "", "validate"); code != 0 {
		t.Errorf("validate: exit %d\n%s%s", code, out, errOut)
	}
}

// UC-2: over several sessions in one repository the agent learns where
// migrations live, the error-handling pattern and which package owns what;
// by session six all of it comes back.
func TestUC2ProjectConventionsAccumulate(t *testing.T) {
	w := newWorld(t,
		remember{when: "db/migrations", content: "Migrations live in db/migrations, one numbered SQL file per change.", scope: "repo", category: "project-conventions"},
		remember{when: "wrap errors", content: "Errors are wrapped with %w and a verb phrase; callers check them with errors.Is.", scope: "repo", category: "project-conventions"},
		remember{when: "package store", content: "Package store owns the database; package api owns the HTTP handlers and never runs SQL.", scope: "repo", category: "project-conventions"},
	)
	repo := w.repo("shop")
	w.session(repo, "Put the new migration in db/migrations like the others.", "Done.")
	w.session(repo, "Let's refactor the retry loop.", "Refactored.") // nothing new
	w.session(repo, "Always wrap errors with %w, and check them with errors.Is.", "Will do.")
	w.session(repo, "Remember that package store owns the database, not package api.", "Understood.")
	w.session(repo, "Put the new migration in db/migrations like the others.", "Done.") // nothing new

	list := w.ok(repo, "", "list", "--scope", "repo", "--category", "project-conventions")
	contains(t, "the repository's conventions", list, "3 memories (3 repo, 0 user)", "db/migrations", "Errors are wrapped with %w", "Package store owns the database")

	// Session six: a task that names all three (the relevance gate wants
	// more than one shared word as evidence offline, where the fake
	// embedder knows no meaning).
	block := w.recall(repo, "Add a migration to db/migrations for the orders table, and wrap errors in package store.")
	contains(t, "session 6's recalled block", block, "Migrations live in db/migrations", "Errors are wrapped with %w", "Package store owns the database")
}

// UC-3: a decision with its reason (session 2) changes after an incident
// (session 5), and a correction contradicts it; in session 8 the agent
// gets the decision, its history with the original reason, and the
// contradiction.
func TestUC3DecisionPreservedWithRationale(t *testing.T) {
	w := newWorld(t,
		remember{when: "optimistic locking over pessimistic", scope: "repo", category: "architectural-decisions",
			content: "User updates use optimistic locking (a version column), because row locks caused timeouts under load."},
		remember{when: "at most three retries", scope: "repo", category: "architectural-decisions", supersedes: "optimistic locking (a version column)",
			content: "User updates use optimistic locking with at most three retries, then fail with a conflict; changed after the retry storm incident."},
		remember{when: "charged a customer twice", scope: "repo", category: "corrections", contradicts: "optimistic locking with at most three retries",
			content: "Payments keep pessimistic locking: an optimistic retry once charged a customer twice."},
	)
	repo := w.repo("accounts")
	w.session(repo, "We decided: optimistic locking over pessimistic for user updates, because row locks caused timeouts.", "Recorded.")
	w.session(repo, "After the incident: optimistic locking still, but at most three retries, then fail.", "Updated.")
	w.session(repo, "Careful: payments stay pessimistic, an optimistic retry once charged a customer twice.", "Noted.")

	block := w.recall(repo, "Two admins edit the same user at once; how should user updates handle locking?")
	contains(t, "session 8's recalled block", block,
		"architectural-decisions, repo scope, stated by the user, version 2",
		"at most three retries",
		"History, oldest first (changed 1 time):",
		"version 1, ", "because row locks caused timeouts under load.",
		"is contradicted by", "Payments keep pessimistic locking",
	)

	// The person can see the same history and the link.
	var d struct {
		Memory struct{ ID string }
		Chain  []struct{ Version int }
		In     []struct{ Relationship string } `json:"links_in"`
	}
	list := w.ok(repo, "", "list", "--category", "architectural-decisions", "--json")
	var l struct{ Memories []struct{ ID string } }
	if err := json.Unmarshal([]byte(list), &l); err != nil || len(l.Memories) != 1 {
		t.Fatalf("list --json: %v, %s", err, list)
	}
	if err := json.Unmarshal([]byte(w.ok(repo, "", "show", l.Memories[0].ID, "--json")), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Chain) != 2 || len(d.In) != 1 || d.In[0].Relationship != "contradicts" {
		t.Errorf("show: %d versions and links in %+v; want 2 versions and one contradiction", len(d.Chain), d.In)
	}
}

// UC-4: preferences stated in one project are the user's, and apply in
// every project: a second repository sees them and has none of the first
// one's conventions.
func TestUC4CrossProjectPersonalStyle(t *testing.T) {
	w := newWorld(t,
		remember{when: "table-driven", scope: "user", category: "coding-preferences",
			content: "Prefers table-driven tests with t.Run subtests."},
		remember{when: "functional options", scope: "user", category: "coding-preferences",
			content: "Prefers the functional options pattern for constructors with optional settings."},
		remember{when: "short variable names", scope: "user", category: "coding-preferences",
			content: "Prefers short variable names in small scopes (i, n, err)."},
		remember{when: "vendor folder", scope: "repo", category: "project-conventions",
			content: "This repository vendors its dependencies in the vendor folder."},
	)
	first, second := w.repo("billing"), w.repo("search")
	w.session(first, "I always want table-driven tests, functional options for constructors, and short variable names.", "Got it.")
	w.session(first, "We keep the vendor folder checked in here.", "OK.")

	block := w.recall(second, "Write tests for the config parser and its constructor options.")
	contains(t, "the second repository's recalled block", block, "user scope", "table-driven tests", "functional options pattern")
	if strings.Contains(block, "vendor folder") {
		t.Errorf("the first repository's convention reached the second:\n%s", block)
	}
	contains(t, "list in the second repository", w.ok(second, "", "list"), "3 memories (0 repo, 3 user)")
	contains(t, "list --scope repo in the second repository", w.ok(second, "", "list", "--scope", "repo"), "No memories here.")
}

// UC-5: the agent made the same mistake in sessions 1, 3 and 5 and was
// corrected each time; the correction is kept once and applied from
// session 6 on.
func TestUC5RecurringCorrection(t *testing.T) {
	w := newWorld(t, remember{when: "goroutine", scope: "user", category: "corrections",
		content: "Never start a goroutine without lifecycle management: give it a context to stop it and wait for it (errgroup or a WaitGroup)."})
	repo := w.repo("worker")
	for _, session := range []int{1, 3, 5} {
		out := w.session(repo,
			"You started a goroutine again without any way to stop it. Pass a context and wait for it.",
			"Sorry, fixed: it now takes a context and the caller waits.")
		if session == 1 {
			contains(t, "session 1's capture", out, "Captured 1 memory", "user/corrections")
		} else if !strings.Contains(out, "Nothing new worth remembering") {
			t.Errorf("session %d captured the correction again:\n%s", session, out)
		}
	}
	list := w.ok(repo, "", "list", "--category", "corrections")
	contains(t, "the corrections", list, "1 memory (0 repo, 1 user)", "Never start a goroutine without lifecycle management")

	for _, task := range []string{
		"Session 6: start a background goroutine that polls the job queue.",
		"Session 7: add a goroutine that refreshes the cache every minute.",
	} {
		contains(t, "the recalled block", w.recall(repo, task), "Never start a goroutine without lifecycle management")
	}
}

// Forgetting is safe: a forgotten correction is no longer recalled, its
// history stays on disk, and remembering it again brings it back.
func TestForgetAndRevive(t *testing.T) {
	w := newWorld(t, remember{when: "goroutine", scope: "user", category: "corrections",
		content: "Never start a goroutine without lifecycle management."})
	repo := w.repo("worker")
	w.session(repo, "Never start a goroutine you cannot stop.", "Understood.")
	var l struct{ Memories []struct{ ID string } }
	if err := json.Unmarshal([]byte(w.ok(repo, "", "list", "--json")), &l); err != nil || len(l.Memories) != 1 {
		t.Fatalf("list --json: %v", err)
	}
	id := l.Memories[0].ID
	task := "Start a goroutine that polls the queue."

	contains(t, "forget", w.ok(repo, "", "forget", id[:12], "--reason", "we use a job runner now"), "Forgot "+id)
	if block := w.recall(repo, task); block != "" {
		t.Errorf("a forgotten memory was recalled:\n%s", block)
	}
	contains(t, "list --retired", w.ok(repo, "", "list", "--retired"), "retired")
	if _, _, code := w.run(repo, "", "validate"); code != 0 {
		t.Errorf("validate after forgetting: exit %d", code)
	}

	w.ok(repo, "", "remember", "Never start a goroutine without lifecycle management; the job runner does not change that.", "--supersedes", id)
	contains(t, "the recalled block after reviving", w.recall(repo, task), "the job runner does not change that", "version 3")
}
