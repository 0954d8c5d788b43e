package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tests here re-execute the test binary as a child process that runs
// TestHelperProcess in one of these modes, reports on stdout, and is
// SIGKILLed by the parent at an arbitrary moment of its writes.
const (
	helperEnv = "ATOMICFILE_TEST_HELPER" // the mode
	helperDir = "ATOMICFILE_TEST_DIR"
)

// childDeadline bounds every wait for the child: it proves nothing hangs,
// it does not measure speed.
const childDeadline = 60 * time.Second

// content is the i-th file a child writes: large enough that a write takes
// a moment, and self-describing so that a partial file is recognised.
func content(i int) []byte {
	return []byte(fmt.Sprintf("version %d\n%s\nend %d\n", i, strings.Repeat("padding so the write takes a moment. ", 8000), i))
}

// complete reports the version a file holds, or false if it is not a whole
// file written by content.
func complete(data []byte) (int, bool) {
	first, _, ok := strings.Cut(string(data), "\n")
	v, err := strconv.Atoi(strings.TrimPrefix(first, "version "))
	if !ok || err != nil {
		return 0, false
	}
	return v, string(data) == string(content(v))
}

// TestHelperProcess is not a test: it is the body of the child processes.
func TestHelperProcess(t *testing.T) {
	mode, dir := os.Getenv(helperEnv), os.Getenv(helperDir)
	if mode == "" {
		t.Skip("helper process for the killed-writer tests; runs only as their child")
	}
	fail := func(err error) {
		fmt.Println("error", err)
		os.Exit(2)
	}
	switch mode {
	case "writenew": // create new files until killed, reporting each
		for i := 0; ; i++ {
			name := fmt.Sprintf("file-%d", i)
			if err := WriteNew(filepath.Join(dir, name), content(i), 0o600); err != nil {
				fail(err)
			}
			fmt.Println("wrote", name)
		}
	case "replace": // replace one file until killed, reporting each version
		// and waiting for the parent's go-ahead before the next, so that the
		// parent knows which write its kill can cut: the next one.
		in := bufio.NewReader(os.Stdin)
		for i := 0; ; i++ {
			if err := Replace(filepath.Join(dir, "current"), content(i), 0o600); err != nil {
				fail(err)
			}
			fmt.Println("replaced", i)
			if _, err := in.ReadString('\n'); err != nil {
				os.Exit(3)
			}
		}
	case "prepare": // prepare one file and wait, unpublished, to be killed
		p, err := Prepare(dir, ".tmp-held-*", content(7), 0o600)
		if err != nil {
			fail(err)
		}
		fmt.Println("prepared", p.Name())
		_, _ = io.Copy(io.Discard, os.Stdin) // until the parent kills us
		os.Exit(3)
	}
	os.Exit(3)
}

// startChild runs the helper in mode over dir and returns its report lines.
func startChild(t *testing.T, mode, dir string) (next func() string, kill func()) {
	next, kill, _ = startChildWithGoAhead(t, mode, dir)
	return next, kill
}

// startChildWithGoAhead is startChild, with goAhead, which tells a child
// that waits after each report to go on.
func startChildWithGoAhead(t *testing.T, mode, dir string) (next func() string, kill func(), goAhead func()) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("kills a writer with SIGKILL and relies on POSIX rename and link semantics; Unix only")
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDir+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	killed := false
	kill = func() {
		if !killed {
			killed = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			stdin.Close()
		}
	}
	t.Cleanup(kill)
	goAhead = func() {
		if _, err := io.WriteString(stdin, "\n"); err != nil {
			t.Fatalf("telling the child to go on: %v", err)
		}
	}
	next = func() string {
		t.Helper()
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the child ended early")
			}
			if strings.HasPrefix(line, "error") {
				t.Fatalf("child: %s", line)
			}
			return line
		case <-time.After(childDeadline):
			t.Fatalf("the child said nothing for %v", childDeadline)
		}
		return ""
	}
	return next, kill, goAhead
}

// visible returns the files of dir that are not hidden, with their data,
// and the number of hidden (temporary) files.
func visible(t *testing.T, dir string) (files map[string][]byte, hidden int) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files = map[string][]byte{}
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".") {
			hidden++
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = data
	}
	return files, hidden
}

// A writer of new files SIGKILLed at an arbitrary moment leaves only whole
// files under their final names.
func TestKilledWhileWritingNew(t *testing.T) {
	dir := t.TempDir()
	next, kill := startChild(t, "writenew", dir)
	reported := map[string]bool{}
	for len(reported) < 15 {
		if name, ok := strings.CutPrefix(next(), "wrote "); ok {
			reported[name] = true
		}
	}
	kill()
	files, hidden := visible(t, dir)
	for name, data := range files {
		if v, ok := complete(data); !ok || name != fmt.Sprintf("file-%d", v) {
			t.Errorf("%s is visible but not whole (%d bytes)", name, len(data))
		}
	}
	for name := range reported {
		if files[name] == nil {
			t.Errorf("%s was reported written but is not there", name)
		}
	}
	// The child goes on writing while the parent reads its reports, so
	// more files than were reported may be there — but they were written in
	// order, each whole, so they are file-0 … file-(n-1) with no gap, and
	// at most the one write cut short by the kill left a temporary file.
	for i := range len(files) {
		if name := fmt.Sprintf("file-%d", i); files[name] == nil {
			t.Errorf("%d files are visible but %s is missing", len(files), name)
		}
	}
	if hidden > 1 {
		t.Errorf("%d temporary files are left; at most one write was under way", hidden)
	}
}

// A writer replacing one file SIGKILLed at an arbitrary moment leaves the
// whole file of the last version it reported, or of the one after it,
// which it was writing when it was killed (it waits for the parent's
// go-ahead after each report, so it cannot run further ahead).
func TestKilledWhileReplacing(t *testing.T) {
	dir := t.TempDir()
	next, kill, goAhead := startChildWithGoAhead(t, "replace", dir)
	last := -1
	for last < 15 {
		if v, ok := strings.CutPrefix(next(), "replaced "); ok {
			last, _ = strconv.Atoi(v)
		}
		goAhead()
	}
	kill()
	files, _ := visible(t, dir)
	v, ok := complete(files["current"])
	if len(files) != 1 || !ok || v < last || v > last+1 {
		t.Errorf("after the kill: %d visible files, current is version %d (whole: %v); want version %d or %d, whole", len(files), v, ok, last, last+1)
	}
}

// A writer killed after Prepare, before publishing, leaves no file under a
// visible name, only its hidden, complete temporary file.
func TestKilledBeforePublish(t *testing.T) {
	dir := t.TempDir()
	next, kill := startChild(t, "prepare", dir)
	tmp, ok := strings.CutPrefix(next(), "prepared ")
	if !ok {
		t.Fatalf("the child did not report its temporary file")
	}
	kill()
	files, hidden := visible(t, dir)
	if len(files) != 0 || hidden != 1 {
		t.Errorf("folder holds %d visible and %d hidden files; want only the hidden temporary file", len(files), hidden)
	}
	data, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := complete(data); !ok || v != 7 {
		t.Errorf("the temporary file is not the whole prepared data")
	}
}
