package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
)

// An unreadable entry in the queue is set aside, and the worker says so:
// not that it waits for the next worker, which never runs it.
func TestWorkerSaysWhatItSetAside(t *testing.T) {
	f := newFixture(t)
	f.useOpenAI(startServer(t, classifierReply(nil)))
	const name = "c-00000000000000000001-0123456789abcdef-01234567.json"
	f.writeFile(filepath.Join(f.repoDir(), ".spool", name), "garbage\n")
	r := f.run("worker")
	wantOut := "Ran 0 capture passes: 0 memories written, 1 unreadable entry set aside as .bad in " +
		filepath.Join(f.repoDir(), ".spool") + " (not queued by your hooks, or not an entry; no worker runs it).\n"
	wantErr := "forgemem worker: " + name + " (compaction): unreadable, set aside as " + name + ".bad, which no worker runs: spool: "
	if r.code != cli.ExitOK || r.stdout != wantOut || !strings.Contains(r.stderr, wantErr) || strings.Contains(r.stderr, "waits for the next worker") {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q and %q", r.code, r.stdout, r.stderr, wantOut, wantErr)
	}
	// stats counts it, where it said nothing of it.
	wantStats := "Captures set aside: 1 unreadable, renamed *.bad in " + filepath.Join(f.repoDir(), ".spool") +
		", which no worker runs (not queued by your hooks, or not entries)\n"
	if r := f.run("stats"); r.code != cli.ExitOK || !strings.Contains(r.stdout, wantStats) || strings.Contains(r.stdout, "Captures waiting") {
		t.Errorf("stats: exit %d, want %q in:\n%s", r.code, wantStats, r.stdout)
	}
	var st struct {
		SetAside int `json:"set_aside_captures"`
		Pending  int `json:"pending_captures"`
	}
	if err := json.Unmarshal([]byte(f.run("stats", "--json").stdout), &st); err != nil || st.SetAside != 1 || st.Pending != 0 {
		t.Errorf("stats --json: %+v, %v; want 1 set aside, none waiting", st, err)
	}
}

// A run whose passes failed exits 1, its entries waiting for the next
// worker; the next run, with the provider back, exits 0.
func TestWorkerExitsOneWhenAPassFailed(t *testing.T) {
	f := newFixture(t)
	srv := startServer(t, classifierReply(nil))
	f.useOpenAI(srv)
	queueCapture(t, f)
	srv.FailWith(500)
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"worker"}, "Ran 1 capture pass: 0 memories written, 1 failed (they wait for the next worker; forgemem stats says why).\n"},
		{[]string{"worker", "--json"}, `"failed": 1,`},
	} {
		r := f.run(tt.args...)
		if r.code != cli.ExitFailure || !strings.Contains(r.stdout, tt.says) {
			t.Errorf("%v with the provider down: exit %d, stdout %q, stderr %q; want exit 1 and %q", tt.args, r.code, r.stdout, r.stderr, tt.says)
		}
	}
	srv.FailWith(0)
	if r := f.run("worker"); r.code != cli.ExitOK || r.stdout != "Ran 1 capture pass: 0 memories written.\n" {
		t.Errorf("worker with the provider back: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// queueCapture queues the capture of a turn of a Claude Code session in
// the fixture's repository, as the Stop hook does (in process, it starts
// no worker).
func queueCapture(t *testing.T, f *fixture) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "claudecode", "testdata", "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(f.root, "session.jsonl")
	f.writeFile(transcript, string(data))
	payload, err := json.Marshal(map[string]string{"hook_event_name": "Stop", "session_id": "s1", "cwd": f.repo, "transcript_path": transcript})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.runIn(context.Background(), f.repo, string(payload), "hook", "claude-code"); r.code != cli.ExitOK || r.stderr != "" {
		t.Fatalf("the Stop hook: exit %d, stderr %q", r.code, r.stderr)
	}
	entries, err := filepath.Glob(filepath.Join(f.repoDir(), ".spool", "t-*.json"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("the queue holds %v (%v), want the turn", entries, err)
	}
}
