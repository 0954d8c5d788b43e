package conform

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Suites take a *testing.T, so the only way to watch one fail is to run it
// in another process: the test binary runs itself, selecting a helper test
// that is gated by an environment variable.

// resultLine matches the line "go test -v" prints for a failed or skipped
// (sub)test.
var resultLine = regexp.MustCompile(`^\s*--- (FAIL|SKIP): (\S+) \(`)

// SubprocessResult is what a test run in a subprocess reported.
type SubprocessResult struct {
	// Failed lists the failed subtests below the test that was run, by
	// their names relative to it ("Errors/RateLimited"), sorted. A subtest
	// that failed only because one of its own subtests did is left out.
	Failed []string
	// Skipped lists the skipped subtests below the test that was run,
	// sorted.
	Skipped []string
	// Passed reports whether the process exited successfully.
	Passed bool
	// Output is everything the process printed.
	Output string
}

// RunTestInSubprocess runs the test named test of the current test binary
// in a new process, verbosely, with env (KEY=value entries) added to the
// environment, and reports which of its subtests failed. It calls t.Fatal
// when the process cannot be run at all or runs longer than timeout.
func RunTestInSubprocess(t *testing.T, test string, timeout time.Duration, env ...string) SubprocessResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0],
		"-test.run=^"+regexp.QuoteMeta(test)+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("subprocess running %s did not finish within %v; output:\n%s", test, timeout, out)
	case err != nil && !errors.As(err, &exitErr):
		t.Fatalf("running %s in a subprocess: %v", test, err)
	}
	failed, skipped := subtestResults(out, test)
	return SubprocessResult{
		Failed:  failedLeaves(failed),
		Skipped: skipped,
		Passed:  err == nil,
		Output:  string(out),
	}
}

// subtestResults returns the failed and the skipped subtests of test that
// out reports, by their names relative to test.
func subtestResults(out []byte, test string) (failed, skipped []string) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		m := resultLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name, ok := strings.CutPrefix(m[2], test+"/")
		switch {
		case !ok:
		case m[1] == "FAIL":
			failed = append(failed, name)
		default:
			skipped = append(skipped, name)
		}
	}
	slices.Sort(skipped)
	return failed, skipped
}

// failedLeaves returns the names in failed that have no failed subtest of
// their own, sorted.
func failedLeaves(failed []string) []string {
	var leaves []string
	for _, name := range failed {
		hasFailedChild := slices.ContainsFunc(failed, func(other string) bool {
			return strings.HasPrefix(other, name+"/")
		})
		if !hasFailedChild {
			leaves = append(leaves, name)
		}
	}
	slices.Sort(leaves)
	return slices.Compact(leaves)
}

// sortedNames compares lists of subtest names as sets.
var sortedNames = cmp.Options{cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b string) bool { return a < b })}

// CheckSuiteRun runs test in a subprocess with env (KEY=value entries) and
// reports on t every way the run differs from what is wanted: it must fail
// exactly the subtests wantFailed (and pass when there are none) and, when
// wantSkipped is not nil, skip exactly those. On a difference it logs the
// subprocess's output.
func CheckSuiteRun(t *testing.T, test string, wantFailed, wantSkipped []string, env ...string) {
	t.Helper()
	got := RunTestInSubprocess(t, test, 2*time.Minute, env...)
	if wantPass := len(wantFailed) == 0; got.Passed != wantPass {
		t.Errorf("suite passed = %t, want %t", got.Passed, wantPass)
	}
	if diff := cmp.Diff(wantFailed, got.Failed, sortedNames); diff != "" {
		t.Errorf("failed subtests (-want +got):\n%s", diff)
	}
	if wantSkipped != nil {
		if diff := cmp.Diff(wantSkipped, got.Skipped, sortedNames); diff != "" {
			t.Errorf("skipped subtests (-want +got):\n%s", diff)
		}
	}
	if t.Failed() {
		t.Logf("subprocess output:\n%s", got.Output)
	}
}

// CheckFailsAtOnce runs test in a subprocess with env (KEY=value entries)
// and reports on t every way the run differs from that of a suite given an
// Config field out of range: the test must fail before any of its subtests
// starts, and its output must contain every string of want. On a
// difference it logs the subprocess's output.
func CheckFailsAtOnce(t *testing.T, test string, want []string, env ...string) {
	t.Helper()
	got := RunTestInSubprocess(t, test, 2*time.Minute, env...)
	if got.Passed {
		t.Errorf("the run passed; a Config field out of range must fail it")
	}
	if !strings.Contains(got.Output, "--- FAIL: "+test+" (") {
		t.Errorf("%s is not reported as failed", test)
	}
	if strings.Contains(got.Output, "=== RUN   "+test+"/") {
		t.Errorf("subtests of %s ran; a Config field out of range must stop the suite before any case", test)
	}
	for _, w := range want {
		if !strings.Contains(got.Output, w) {
			t.Errorf("the output does not say %q", w)
		}
	}
	if t.Failed() {
		t.Logf("subprocess output:\n%s", got.Output)
	}
}
