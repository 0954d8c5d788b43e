package cli_test

import (
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
}
