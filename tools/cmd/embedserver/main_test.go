package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/tools/internal/embedserver"
)

// evalDataset is a small dataset whose answers are known: each query
// repeats its memory word for word.
const evalDataset = `{"collection": "coding", "memories": [{"id": "locking", "content": "Use optimistic locking with a version column for user updates."}, {"id": "migrations", "content": "Migrations live in db/migrations, one file per change."}], "queries": [{"id": "q1", "text": "Use optimistic locking with a version column for user updates.", "relevant": ["locking"]}, {"id": "q2", "text": "Migrations live in db/migrations, one file per change.", "relevant": ["migrations"]}]}
`

// The documented command of docs/EVALUATION.md's USE-lite rows, on a small
// dataset: forgemem eval runs with the server's settings from the
// environment and embeds with it.
func TestRunsACommandAgainstTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Node.js")
	}
	if _, err := exec.LookPath("node"); err != nil && os.Getenv(embedserver.RequireEnv) == "" {
		t.Skip("node is not installed")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	forgemem := filepath.Join(tmp, "forgemem")
	build := exec.Command("go", "build", "-o", forgemem, "./cmd/forgemem")
	build.Dir = root
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building forgemem: %v\n%s", err, out)
	}
	dataset := filepath.Join(tmp, "data.jsonl")
	if err := os.WriteFile(dataset, []byte(evalDataset), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", tmp) // no settings of the user's
	t.Chdir(filepath.Join(root, "tools"))
	var stdout, stderr bytes.Buffer
	code := run([]string{"--", forgemem, "eval", "--dataset", dataset, "--json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stderr (without node or its packages it says what to install):\n%s", code, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if got["embedding_model"] != embedserver.Model || got["provider"] != "openai" || got["hit@5"] != 1.0 || got["vector_skipped"] != 0.0 {
		t.Errorf("eval under embedserver = %s", stdout.String())
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"--help"}, 0, "usage:"},
		{[]string{"forgemem"}, 2, "put the command after --"},
		{[]string{"--"}, 2, "put the command after --"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stdout.String()+stderr.String(), tt.out) {
			t.Errorf("run(%q) = %d, %q %q; want %d saying %q", tt.args, code, stdout.String(), stderr.String(), tt.code, tt.out)
		}
	}
}
