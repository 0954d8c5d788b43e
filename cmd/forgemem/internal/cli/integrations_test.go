package cli_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/fakeopenai"
)

// hookInput is a Claude Code hook payload for the fixture's repository.
func (f *fixture) hookInput(event string, extra map[string]any) string {
	in := map[string]any{"session_id": "s1", "transcript_path": "", "cwd": f.repo, "hook_event_name": event, "permission_mode": "default"}
	for k, v := range extra {
		in[k] = v
	}
	data, _ := json.Marshal(in)
	return string(data)
}

// transcriptFile writes a transcript in Claude Code's format.
func (f *fixture) transcriptFile(lines ...string) string {
	path := filepath.Join(f.root, "transcript.jsonl")
	f.writeFile(path, strings.Join(lines, "\n")+"\n")
	return path
}

func TestHookPromptInProcess(t *testing.T) {
	f := newFixture(t)
	f.seed()
	transcript := f.transcriptFile(
		`{"type":"user","message":{"role":"user","content":"We are changing how user updates are saved."}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"user.go"}}]}}`,
	)
	r := f.runIn(t.Context(), f.root, f.hookInput("UserPromptSubmit", map[string]any{
		"transcript_path": transcript, "prompt": "How should user updates lock rows?",
	}), "hook", "claude-code")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var out map[string]map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not the hook output: %v\n%s", err, r.stdout)
	}
	ctx := out["hookSpecificOutput"]
	if len(out) != 1 || len(ctx) != 2 || ctx["hookEventName"] != "UserPromptSubmit" || !strings.Contains(ctx["additionalContext"], "optimistic locking") {
		t.Errorf("output %v", out)
	}

	// A transcript that cannot be read: the prompt alone is recalled for,
	// and one line says so.
	r = f.runIn(t.Context(), f.root, f.hookInput("UserPromptSubmit", map[string]any{
		"transcript_path": filepath.Join(f.root, "gone.jsonl"), "prompt": "How should user updates lock rows?",
	}), "hook", "claude-code")
	if r.code != 0 || !strings.Contains(r.stdout, "optimistic locking") || strings.Count(r.stderr, "\n") != 1 ||
		!strings.Contains(r.stderr, "recalled for the prompt alone") {
		t.Errorf("without the transcript: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// With the fake provider captures are queued and wait; stats and the worker
// say why.
func TestQueuedCapturesWaitWithoutAModel(t *testing.T) {
	f := newFixture(t)
	transcript := f.transcriptFile(
		`{"type":"user","message":{"role":"user","content":"Always wrap errors with %w."}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Will do."}]}}`,
	)
	for _, event := range []string{"Stop", "PreCompact"} {
		r := f.runIn(t.Context(), f.root, f.hookInput(event, map[string]any{"transcript_path": transcript}), "hook", "claude-code")
		if r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", event, r.code, r.stdout, r.stderr)
		}
	}
	entries, err := filepath.Glob(filepath.Join(f.repoDir(), ".spool", "*.json"))
	if err != nil || len(entries) != 2 {
		t.Fatalf("queued %v, %v; want a turn and a compaction", entries, err)
	}
	f.check("stats_pending", f.run("stats"), 0)
	var st struct {
		Pending int    `json:"pending_captures"`
		Reason  string `json:"pending_reason"`
	}
	if err := json.Unmarshal([]byte(f.run("stats", "--json").stdout), &st); err != nil || st.Pending != 2 || !strings.Contains(st.Reason, "fake provider") {
		t.Errorf("stats --json: %+v, %v", st, err)
	}
	r := f.run("worker")
	if r.code != 1 || !strings.Contains(r.stderr, "the queued captures wait: a real model is needed") {
		t.Errorf("worker: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestHookInstallInProcess(t *testing.T) {
	f := newFixture(t)
	r := f.run("hook", "install", "claude-code")
	f.check("hook_install", r, 0)
	if _, err := os.Stat(filepath.Join(f.repo, ".claude", "settings.json")); err != nil {
		t.Error(err)
	}
	f.check("hook_install_again", f.run("hook", "install", "claude-code"), 0)
	r = f.run("hook", "install", "cursor")
	if r.code != 2 || !strings.Contains(r.stderr, `"cursor" is not an agent forgemem installs hooks for`) {
		t.Errorf("hook install cursor: exit %d, %s", r.code, r.stderr)
	}
}

// The hook's command line lives in the agent's settings, written perhaps
// by another version of forgemem: a flag or an argument this binary does
// not take still exits 0 with one line on stderr, since Claude Code takes
// exit 2 from a UserPromptSubmit hook as "block the prompt" and from a
// Stop hook as "do not stop".
func TestHookCommandLineErrorsNeverBreakTheTurn(t *testing.T) {
	f := newFixture(t)
	for _, args := range [][]string{
		{"hook", "claude-code", "--from-a-newer-version"},
		{"hook", "claude-code", "extra"},
		{"--provider", "nope", "hook", "claude-code"},
		{"hook", "claude-code", "--worker-idle", "soon"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := f.runIn(t.Context(), f.root, f.hookInput("UserPromptSubmit", map[string]any{"prompt": "How should user updates lock rows?"}), args...)
			if r.code != 0 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "forgemem hook claude-code: ") {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0, nothing and one line", r.code, r.stdout, r.stderr)
			}
		})
	}
	// Other commands keep their usage errors.
	if r := f.run("hook", "install", "claude-code", "--from-a-newer-version"); r.code != 2 {
		t.Errorf("hook install with an unknown flag: exit %d, want 2", r.code)
	}
}

// The hook's line on stderr never holds a secret, even when the provider
// quotes the API key in its error; with the embedder failing, what the
// lexical index finds still reaches the prompt.
func TestHookFailureLineIsRedacted(t *testing.T) {
	const key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
	srv := httptest.NewServer(fakeopenai.RejectKey(key))
	t.Cleanup(srv.Close)
	f := newFixture(t)
	f.writeFile(filepath.Join(f.home, ".forge", "config.yaml"), "memory:\n  provider: openai\n  base_url: "+srv.URL+"/v1\n"+
		"  classifier_model: c\n  embedding_model: e\n  retrieval_mode: identity\n")
	f.env = append(f.env, "OPENAI_API_KEY="+key)
	r := f.runIn(t.Context(), f.root, f.hookInput("UserPromptSubmit", map[string]any{"prompt": "How should user updates lock rows?"}), "hook", "claude-code")
	if r.code != 0 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, key) ||
		!strings.Contains(r.stderr, "[REDACTED]") || !strings.Contains(r.stderr, "401") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0, nothing and one line with the key redacted", r.code, r.stdout, r.stderr)
	}

	// With a memory the prompt shares words with, the lexical index finds
	// it though the embedder fails: the prompt gets it, and the line says
	// that some memories may be missing.
	if r := f.run("remember", "User updates lock rows with optimistic locking and a version column.",
		"--scope", "repo", "--category", "architectural-decisions"); r.code != 0 {
		t.Fatalf("remember: %s", r.stderr)
	}
	r = f.runIn(t.Context(), f.root, f.hookInput("UserPromptSubmit", map[string]any{"prompt": "How should user updates lock rows?"}), "hook", "claude-code")
	var out map[string]map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || !strings.Contains(out["hookSpecificOutput"]["additionalContext"], "optimistic locking") {
		t.Errorf("stdout %q (%v); want the memory found by words", r.stdout, err)
	}
	if r.code != 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "some memories may be missing") ||
		strings.Contains(r.stderr, key) || !strings.Contains(r.stderr, "401") {
		t.Errorf("exit %d, stderr %q; want 0 and one line saying some memories may be missing", r.code, r.stderr)
	}
}
