package memcore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tests here re-execute the test binary as child processes that run
// TestHelperProcess in one of these modes (chosen by environment variable),
// report on stdout, and are killed or awaited by the parent.
const (
	helperEnv   = "MEMCORE_TEST_HELPER" // the mode
	helperRepo  = "MEMCORE_TEST_REPO"
	helperUser  = "MEMCORE_TEST_USER"
	helperCount = "MEMCORE_TEST_COUNT"
	helperID    = "MEMCORE_TEST_SHARED_ID"
	helperName  = "MEMCORE_TEST_NAME"
	helperScope = "MEMCORE_TEST_SCOPE"
	helperLock  = "MEMCORE_TEST_LOCK" // "exclusive": the lock of systems without flock
)

// childDeadline bounds every wait for a child: it proves nothing hangs, it
// does not measure speed.
const childDeadline = 60 * time.Second

// TestHelperProcess is not a test: it is the body of the child processes.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for the multi-process tests; runs only as their child")
	}
	s, err := NewFileStore(os.Getenv(helperRepo), os.Getenv(helperUser), FileStoreConfig{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	ctx := context.Background()
	name := os.Getenv(helperName)
	switch mode {
	case "loop": // write memories until killed, reporting each one and
		// waiting for the parent's go-ahead before the next, so that a kill
		// can cut only the next write
		in := bufio.NewReader(os.Stdin)
		for i := 0; ; i++ {
			m := childMemory(NewMemoryID(), ScopeRepo, name, i)
			if err := s.Write(ctx, m); err != nil {
				fmt.Println("error", err)
				os.Exit(2)
			}
			fmt.Println("wrote", m.Meta.ID)
			if _, err := in.ReadString('\n'); err != nil {
				os.Exit(3)
			}
		}
	case "pause": // write one memory and stop for good once its temp file is written
		testHookTempWritten = func(tmp string) {
			fmt.Println("paused", tmp)
			select {}
		}
		m := childMemory(NewMemoryID(), ScopeRepo, name, 0)
		_ = s.Write(ctx, m)
		fmt.Println("error", "the write was not paused")
		os.Exit(2)
	case "race": // after "go" on stdin: the shared id, then N ids of its own
		n, _ := strconv.Atoi(os.Getenv(helperCount))
		fmt.Println("ready")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			os.Exit(2)
		}
		err := s.Write(ctx, childMemory(os.Getenv(helperID), ScopeRepo, name, -1))
		switch {
		case err == nil:
			fmt.Println("shared won")
		case errors.Is(err, ErrAlreadyExists):
			fmt.Println("shared lost")
		default:
			fmt.Println("error", err)
		}
		for i := 0; i < n; i++ {
			m := childMemory(NewMemoryID(), Scopes()[i%2], name, i)
			if err := s.Write(ctx, m); err != nil {
				fmt.Println("error", err)
				continue
			}
			fmt.Println("wrote", m.Meta.ID, i)
		}
		fmt.Println("done")
		os.Exit(0)
	case "supersede":
		if os.Getenv(helperLock) == "exclusive" {
			lockFolder = tryLockExclusive
		}
		superseder(ctx, s, name, Scope(os.Getenv(helperScope)))
		os.Exit(0)
	case "writer":
		writerChild(ctx, s, name)
		os.Exit(0)
	}
	os.Exit(3)
}

// superseder is the child of TestFileStoreTwoProcessesSupersede. For each
// "prepare <id>" line on stdin it finds the head of id's chain and makes the
// next version of it (in scope), answering "prepared <head id>"; on the
// "go" line that follows it writes that version and answers "won <new id>",
// or "conflict <predecessor> <successor> <head>" for a *ConflictError. It
// ends at the end of stdin.
func superseder(ctx context.Context, s *FileStore, name string, scope Scope) {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		root, ok := strings.CutPrefix(in.Text(), "prepare ")
		if !ok {
			fmt.Println("error", "want prepare, got", in.Text())
			return
		}
		headID, err := LatestVersion(ctx, s, root)
		if err != nil {
			fmt.Println("error", err)
			return
		}
		head, err := s.Read(ctx, headID)
		if err != nil {
			fmt.Println("error", err)
			return
		}
		next := NewVersion(head, name, TriggerManual)
		next.Meta.Scope = scope
		next.Content = fmt.Sprintf("version %d, written by %s", next.Meta.Version, name)
		fmt.Println("prepared", headID)
		if !in.Scan() || in.Text() != "go" {
			fmt.Println("error", "want go")
			return
		}
		var ce *ConflictError
		switch err := s.Write(ctx, next); {
		case err == nil:
			fmt.Println("won", next.Meta.ID)
		case errors.As(err, &ce) && errors.Is(err, ErrConflict) && ce.Successor != nil && ce.Head != nil:
			fmt.Println("conflict", ce.Predecessor, ce.Successor.Meta.ID, ce.Head.Meta.ID)
		default:
			fmt.Println("error", err)
		}
	}
}

// childMemory is the memory a child writes; its content says who wrote it,
// so the parent can check that each file holds what its writer wrote.
func childMemory(id string, scope Scope, name string, i int) *MemoryFile {
	m := sample(id)
	m.Meta.Scope = scope
	m.Meta.CreatedAt = t0.Add(time.Duration(i) * time.Second)
	m.Content = fmt.Sprintf("written by %s, number %d\n%s", name, i, strings.Repeat("padding so the write takes a moment. ", 200))
	return m
}

type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

func startChild(t *testing.T, mode, repo, user string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperRepo+"="+repo, helperUser+"="+user)
	cmd.Env = append(cmd.Env, env...)
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
	c := &child{cmd: cmd, stdin: stdin, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return c
}

// next returns the child's next report line, failing the test if the child
// ends or stays silent past childDeadline.
func (c *child) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			t.Fatalf("the child ended early")
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

// kill SIGKILLs the child and waits until it is gone.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
}

func skipProcessTests(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("kills a writer with SIGKILL and relies on POSIX rename/link semantics; Unix only")
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
}

// checkFolder asserts that every visible file of dir is a complete memory
// file named by its id, and returns the ids and the hidden temporary files.
func checkFolder(t *testing.T, dir string, scope Scope) (ids map[string]bool, temps []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids = map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, tmpPrefix) {
			temps = append(temps, filepath.Join(dir, name))
			continue
		}
		if !strings.HasSuffix(name, ".md") {
			t.Errorf("unexpected file %s", name)
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		m, err := Parse(data)
		if err != nil {
			t.Errorf("visible partial or corrupt file %s: %v", name, err)
			continue
		}
		if m.Meta.ID+".md" != name || m.Meta.Scope != scope {
			t.Errorf("%s holds %s in scope %s", name, m.Meta.ID, m.Meta.Scope)
		}
		ids[m.Meta.ID] = true
	}
	return ids, temps
}

// A writer SIGKILLed at an arbitrary moment of a write loop leaves only
// complete memory files.
func TestFileStoreKilledWhileWriting(t *testing.T) {
	skipProcessTests(t)
	root := t.TempDir()
	repo, user := filepath.Join(root, "repo"), filepath.Join(root, "user")
	c := startChild(t, "loop", repo, user, helperName+"=loop")
	reported := map[string]bool{}
	for len(reported) < 12 {
		line := c.next(t)
		if id, ok := strings.CutPrefix(line, "wrote "); ok {
			reported[id] = true
		}
		if _, err := io.WriteString(c.stdin, "\n"); err != nil { // go ahead
			t.Fatal(err)
		}
	}
	c.kill(t)

	onDisk, _ := checkFolder(t, repo, ScopeRepo)
	for id := range reported {
		if !onDisk[id] {
			t.Errorf("%s was reported written but is not on disk", id)
		}
	}
	// At most one write was under way when the child died.
	if extra := len(onDisk) - len(reported); extra < 0 || extra > 1 {
		t.Errorf("%d files on disk for %d reported writes", len(onDisk), len(reported))
	}
	s, err := NewFileStore(repo, user, FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := s.List(context.Background())
	if err != nil || len(ms) != len(onDisk) {
		t.Errorf("List = %d memories, %v; want %d", len(ms), err, len(onDisk))
	}
}

// A writer killed right after writing its temporary file, before it is
// published: no .md for its id ever appears, the hidden temporary file is
// left behind, and a later NewFileStore removes it once it is an hour old.
func TestFileStoreKilledBeforePublish(t *testing.T) {
	skipProcessTests(t)
	root := t.TempDir()
	repo, user := filepath.Join(root, "repo"), filepath.Join(root, "user")
	before := writeSome(t, repo, user, 3)

	c := startChild(t, "pause", repo, user, helperName+"=pause")
	line := c.next(t)
	tmp, ok := strings.CutPrefix(line, "paused ")
	if !ok {
		t.Fatalf("child said %q, want paused <temp file>", line)
	}
	c.kill(t)

	// The temporary file is hidden, holds the whole memory, and its id has
	// no .md file.
	rest := strings.TrimPrefix(filepath.Base(tmp), tmpPrefix)
	id := rest[:min(len(rest), idLen)]
	if filepath.Dir(tmp) != repo || ValidateID(id) != nil {
		t.Fatalf("temporary file %q: want .tmp-<id>-… in %s", tmp, repo)
	}
	if _, err := os.Stat(filepath.Join(repo, id+".md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the interrupted write is visible: %v", err)
	}
	data, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatalf("the temporary file is gone: %v", err)
	}
	if m, err := Parse(data); err != nil || m.Meta.ID != id {
		t.Errorf("the temporary file holds %v, %v; want the complete memory %s", m, err, id)
	}
	onDisk, temps := checkFolder(t, repo, ScopeRepo)
	if len(onDisk) != len(before) || len(temps) != 1 {
		t.Errorf("folder holds %d memories and temps %v; want %d and one temp", len(onDisk), temps, len(before))
	}

	s, err := NewFileStore(repo, user, FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(context.Background(), id); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read of the interrupted id = %v, want ErrNotFound", err)
	}
	if ms, err := s.List(context.Background()); err != nil || len(ms) != len(before) {
		t.Errorf("List = %d, %v; want %d", len(ms), err, len(before))
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("NewFileStore removed a temporary file younger than an hour: %v", err)
	}
	old := time.Now().Add(-staleTmpAge - time.Minute)
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFileStore(repo, user, FileStoreConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("NewFileStore kept a temporary file older than an hour: %v", err)
	}
	// The id is still free: the memory can be written now.
	m := sample(id)
	if err := s.Write(context.Background(), m); err != nil {
		t.Errorf("Write of the interrupted id afterwards: %v", err)
	}
}

func writeSome(t *testing.T, repo, user string, n int) []*MemoryFile {
	t.Helper()
	s, err := NewFileStore(repo, user, FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var out []*MemoryFile
	for i := 0; i < n; i++ {
		m := memory(ScopeRepo, i, fmt.Sprintf("before %d", i))
		if err := s.Write(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// Two processes write into the same folders at once: each its own N ids,
// and both the same shared id first. Exactly one wins the shared id, and
// every memory is visible and intact.
func TestFileStoreTwoProcesses(t *testing.T) {
	skipProcessTests(t)
	root := t.TempDir()
	repo, user := filepath.Join(root, "repo"), filepath.Join(root, "user")
	const n = 30
	shared := NewMemoryID()
	children := []*child{}
	for _, name := range []string{"first", "second"} {
		children = append(children, startChild(t, "race", repo, user,
			helperName+"="+name, helperCount+"="+strconv.Itoa(n), helperID+"="+shared))
	}
	for _, c := range children {
		if line := c.next(t); line != "ready" {
			t.Fatalf("child said %q, want ready", line)
		}
	}
	for _, c := range children { // start both as close together as possible
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	written := map[string]string{} // id → expected content
	wins, winner := 0, ""
	for ci, c := range children {
		name := []string{"first", "second"}[ci]
		for line := c.next(t); line != "done"; line = c.next(t) {
			switch {
			case line == "shared won":
				wins++
				winner = name
			case line == "shared lost":
			case strings.HasPrefix(line, "wrote "):
				f := strings.Fields(line)
				i, _ := strconv.Atoi(f[2])
				written[f[1]] = childMemory(f[1], Scopes()[i%2], name, i).Content
			}
		}
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("child %s: %v", name, err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d processes won the shared id, want exactly 1", wins)
	}
	if len(written) != 2*n {
		t.Fatalf("%d distinct writes reported, want %d", len(written), 2*n)
	}
	written[shared] = childMemory(shared, ScopeRepo, winner, -1).Content

	s, err := NewFileStore(repo, user, FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2*n+1 {
		t.Errorf("List has %d memories, want %d", len(ms), 2*n+1)
	}
	for _, m := range ms {
		if want, ok := written[m.Meta.ID]; !ok || m.Content != want {
			t.Errorf("%s holds %.40q…, want %.40q…", m.Meta.ID, m.Content, want)
		}
	}
	for _, scope := range Scopes() {
		if _, temps := checkFolder(t, s.Dir(scope), scope); len(temps) != 0 {
			t.Errorf("temporary files left behind by finished writers: %v", temps)
		}
	}
}

// Two processes supersede the same version at the same moment, round after
// round (both read the head, make its next version, and write it when the
// parent releases them together): exactly one succeeds and the other gets a
// *ConflictError naming the winner, so the chain never forks — with both
// successors in one folder, with one in each scope's folder, and with the
// lock of systems without flock.
func TestFileStoreTwoProcessesSupersede(t *testing.T) {
	skipProcessTests(t)
	const rounds = 50
	for _, tt := range []struct {
		name   string
		scopes [2]Scope // the scope each child writes
		lock   string   // helperLock
	}{
		{"same folder", [2]Scope{ScopeRepo, ScopeRepo}, ""},
		{"across scopes", [2]Scope{ScopeRepo, ScopeUser}, ""},
		{"across scopes, exclusive-create lock", [2]Scope{ScopeUser, ScopeRepo}, "exclusive"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			repo, user := filepath.Join(root, "repo"), filepath.Join(root, "user")
			first := writeSome(t, repo, user, 1)[0]
			var children [2]*child
			for i := range children {
				children[i] = startChild(t, "supersede", repo, user,
					helperName+"="+strconv.Itoa(i), helperScope+"="+string(tt.scopes[i]), helperLock+"="+tt.lock)
			}
			head := first.Meta.ID
			wins, conflicts := 0, 0
			for r := 0; r < rounds; r++ {
				for _, c := range children {
					if _, err := io.WriteString(c.stdin, "prepare "+first.Meta.ID+"\n"); err != nil {
						t.Fatal(err)
					}
				}
				for _, c := range children {
					if line := c.next(t); line != "prepared "+head {
						t.Fatalf("round %d: child said %q, want prepared %s", r, line, head)
					}
				}
				// The barrier: both are blocked reading stdin until now.
				for _, c := range children {
					if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
						t.Fatal(err)
					}
				}
				var won []string
				var lost [][]string
				for _, c := range children {
					f := strings.Fields(c.next(t))
					switch {
					case len(f) == 2 && f[0] == "won":
						won = append(won, f[1])
					case len(f) == 4 && f[0] == "conflict":
						lost = append(lost, f[1:])
					default:
						t.Fatalf("round %d: child said %q", r, strings.Join(f, " "))
					}
				}
				if len(won) != 1 || len(lost) != 1 {
					t.Fatalf("round %d: %d writes won and %d got a conflict, want exactly one of each (both superseded %s)", r, len(won), len(lost), head)
				}
				if want := []string{head, won[0], won[0]}; !slices.Equal(lost[0], want) {
					t.Errorf("round %d: conflict names predecessor, successor, head %v, want %v", r, lost[0], want)
				}
				wins++
				conflicts++
				head = won[0]
			}
			for _, c := range children {
				c.stdin.Close()
				if err := c.cmd.Wait(); err != nil {
					t.Errorf("child: %v", err)
				}
			}

			s, err := NewFileStore(repo, user, FileStoreConfig{})
			if err != nil {
				t.Fatal(err)
			}
			g := NewGraph(mustList(t, s))
			if forks := g.Forks(); len(forks) != 0 {
				t.Errorf("%d forks after %d rounds: %+v", len(forks), rounds, forks)
			}
			chain := g.Chain(first.Meta.ID)
			if len(chain) != rounds+1 || g.Len() != rounds+1 || chain[len(chain)-1].Meta.ID != head {
				t.Errorf("chain of %d versions among %d memories, ending at %s; want a line of %d ending at %s",
					len(chain), g.Len(), chain[len(chain)-1].Meta.ID, rounds+1, head)
			}
			for i, m := range chain {
				if m.Meta.Version != i+1 {
					t.Errorf("version %d of the chain is numbered %d", i+1, m.Meta.Version)
				}
			}
			t.Logf("%d rounds of two processes superseding one version: %d forks, %d conflicts, %d successful writes", rounds, len(g.Forks()), conflicts, wins)
		})
	}
}

func mustList(t *testing.T, s MemoryStore) []*MemoryFile {
	t.Helper()
	ms, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ms
}
