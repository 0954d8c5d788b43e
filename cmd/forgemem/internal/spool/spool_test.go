package spool_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/spool"
	"github.com/forgemem/forgemem/memcore"
)

// holdEnv makes the test binary a process that takes the lock of the
// spool in the folder it names, says "locked" and waits to be killed.
const holdEnv = "SPOOL_TEST_HOLD_LOCK"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holdEnv); dir != "" {
		s, err := spool.Open(dir, testKey)
		if err == nil {
			_, err = s.TryLock()
		}
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		select {}
	}
	os.Exit(m.Run())
}

// testKey signs the entries of the tests' spools.
var testKey = spool.Key{0x5e, 0xc7, 0xe7}

func open(t *testing.T) *spool.Spool {
	t.Helper()
	s, err := spool.Open(filepath.Join(t.TempDir(), "memory"), testKey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func add(t *testing.T, s *spool.Spool, kind memcore.Trigger, session, text string) string {
	t.Helper()
	name, err := s.Add(spool.Entry{Kind: kind, SessionID: session, Source: "test",
		Messages: []spool.Message{{Role: memcore.RoleUser, Content: text}}})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func TestAddReadListRemove(t *testing.T) {
	s := open(t)
	data, err := os.ReadFile(filepath.Join(s.Dir(), ".gitignore"))
	if err != nil || !strings.Contains(string(data), "\n*\n") {
		t.Errorf(".gitignore = %q, %v; want one ignoring everything", data, err)
	}
	a := add(t, s, memcore.TriggerCadence, "s1", "first")
	b := add(t, s, memcore.TriggerCompaction, "s1", "second")
	items, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].Name != a || items[1].Name != b || items[0].Session != items[1].Session {
		t.Fatalf("List = %+v, want %s then %s of one session", items, a, b)
	}
	if items[0].Kind != memcore.TriggerCadence || items[1].Kind != memcore.TriggerCompaction {
		t.Errorf("kinds %s, %s", items[0].Kind, items[1].Kind)
	}
	info, err := os.Stat(filepath.Join(s.Dir(), a))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("entry mode %v, %v; want 0600", info.Mode(), err)
	}
	e, err := s.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	if e.Version != spool.FormatVersion || e.SessionID != "s1" || e.Kind != memcore.TriggerCompaction || e.CreatedAt.IsZero() ||
		len(e.Window()) != 1 || e.Window()[0] != (memcore.Message{Role: memcore.RoleUser, Content: "second"}) {
		t.Errorf("Read = %+v", e)
	}
	e.Attempts, e.LastError = 1, "the provider failed"
	if err := s.Update(b, e); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Read(b); err != nil || got.Attempts != 1 || got.LastError != "the provider failed" {
		t.Errorf("after Update: %+v, %v", got, err)
	}
	for _, n := range []string{a, b, a} {
		if err := s.Remove(n); err != nil {
			t.Errorf("Remove(%s): %v", n, err)
		}
	}
	if items, _ := s.List(); len(items) != 0 {
		t.Errorf("List after Remove = %v", items)
	}
}

// Files that are not entries are not listed; an unreadable entry is an
// error and can be set aside.
func TestOtherFilesAndBadEntries(t *testing.T) {
	s := open(t)
	good := add(t, s, memcore.TriggerCadence, "s", "x")
	for name, content := range map[string]string{
		".tmp-t-00000000000000000001-0123456789abcdef-01234567.json-123": "{}", // being written
		"worker.log": "log", "notes.json": "{}", "t-1-2-3.json": "{}",
	} {
		if err := os.WriteFile(filepath.Join(s.Dir(), name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bad := "c-00000000000000000001-0123456789abcdef-01234567.json"
	if err := os.WriteFile(filepath.Join(s.Dir(), bad), []byte(`{"version":1,"kind":"cade`), 0o600); err != nil {
		t.Fatal(err)
	}
	items, _ := s.List()
	if len(items) != 2 || items[0].Name != bad || items[1].Name != good {
		t.Fatalf("List = %+v, want the bad compaction and %s", items, good)
	}
	if _, err := s.Read(bad); !errors.Is(err, spool.ErrBadEntry) {
		t.Errorf("Read of a bad entry = %v, want ErrBadEntry", err)
	}
	if err := s.SetAside(bad); err != nil {
		t.Fatal(err)
	}
	if items, _ := s.List(); len(items) != 1 {
		t.Errorf("List after SetAside = %+v", items)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), bad+".bad")); err != nil {
		t.Errorf("the bad entry was not kept for a person: %v", err)
	}
	if _, err := s.Read("t-00000000000000000009-0123456789abcdef-01234567.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a missing entry = %v, want fs.ErrNotExist", err)
	}
}

func TestSymbolicLinksAreNotFollowed(t *testing.T) {
	root := t.TempDir()
	memory, elsewhere := filepath.Join(root, "memory"), filepath.Join(root, "elsewhere")
	for _, d := range []string{memory, elsewhere} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(elsewhere, filepath.Join(memory, spool.DirName)); err != nil {
		t.Fatal(err)
	}
	if _, err := spool.Open(memory, testKey); !errors.Is(err, spool.ErrUnsafe) {
		t.Errorf("Open with .spool a link = %v, want ErrUnsafe", err)
	}
	s := open(t)
	if err := os.Symlink(filepath.Join(elsewhere, "lock"), filepath.Join(s.Dir(), "worker.lock")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TryLock(); !errors.Is(err, spool.ErrUnsafe) {
		t.Errorf("TryLock with the lock file a link = %v, want ErrUnsafe", err)
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, "lock")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file was created through the link: %v", err)
	}
}

// A memory folder that is a symbolic link, or sits in a .forge folder that
// is one, is refused before anything is made: no queued conversation is
// written where the link points.
func TestLinkedMemoryFolderIsRefused(t *testing.T) {
	tests := map[string]struct {
		link, memory string // relative to the test's folder
	}{
		"memory folder": {link: "repo/.forge/memory", memory: "repo/.forge/memory"},
		".forge":        {link: "repo/.forge", memory: "repo/.forge/memory"},
		"other layout":  {link: "mem", memory: "mem"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			elsewhere := filepath.Join(root, "elsewhere")
			link := filepath.Join(root, tt.link)
			for _, d := range []string{elsewhere, filepath.Dir(link)} {
				if err := os.MkdirAll(d, 0o750); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(elsewhere, link); err != nil {
				t.Fatal(err)
			}
			memory := filepath.Join(root, tt.memory)
			_, err := spool.Open(memory, testKey)
			if !errors.Is(err, memcore.ErrUnsafeFolder) || !strings.Contains(err.Error(), link) {
				t.Errorf("Open = %v, want ErrUnsafeFolder naming %s", err, link)
			}
			if _, err := spool.OpenExisting(memory, testKey); !errors.Is(err, memcore.ErrUnsafeFolder) {
				t.Errorf("OpenExisting = %v, want ErrUnsafeFolder", err)
			}
			if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
				t.Errorf("%d entries were made where the link points", len(entries))
			}
		})
	}
	// A folder above .forge may be a link: it is the user's choice of path.
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "real"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "home")); err != nil {
		t.Fatal(err)
	}
	if _, err := spool.Open(filepath.Join(root, "home", ".forge", "memory"), testKey); err != nil {
		t.Errorf("Open under a linked home folder: %v", err)
	}
}

func TestNext(t *testing.T) {
	c, tr := memcore.TriggerCompaction, memcore.TriggerCadence
	it := func(kind memcore.Trigger, tm int64, session string) spool.Item {
		return spool.Item{Name: fmt.Sprintf("%s-%d", session, tm), Kind: kind, Time: tm, Session: session}
	}
	tests := []struct {
		name        string
		items       []spool.Item
		skip        string // a name to skip
		want        string
		wantCovered string
	}{
		{"nothing", nil, "", "", ""},
		{"the oldest compaction before any turn", []spool.Item{it(tr, 1, "a"), it(c, 2, "b"), it(c, 3, "a")}, "", "b-2", ""},
		{"the newest turn of a session covers its older turns", []spool.Item{it(tr, 1, "a"), it(tr, 2, "a"), it(tr, 3, "a")}, "", "a-3", "[a-1 a-2]"},
		{"sessions in the order of their newest turns", []spool.Item{it(tr, 1, "a"), it(tr, 2, "b"), it(tr, 3, "a")}, "", "b-2", "[]"},
		{"a skipped compaction lets the next one go", []spool.Item{it(c, 1, "a"), it(c, 2, "a"), it(tr, 3, "a")}, "a-1", "a-2", ""},
		{"a skipped newest turn skips its session", []spool.Item{it(tr, 1, "a"), it(tr, 2, "a"), it(tr, 3, "b")}, "a-2", "b-3", "[]"},
		{"everything skipped", []spool.Item{it(tr, 1, "a")}, "a-1", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, covered, ok := spool.Next(tt.items, func(i spool.Item) bool { return i.Name == tt.skip })
			if !ok {
				if tt.want != "" {
					t.Errorf("nothing chosen, want %s", tt.want)
				}
				return
			}
			var names []string
			for _, c := range covered {
				names = append(names, c.Name)
			}
			gotCovered := fmt.Sprint(names)
			if names == nil {
				gotCovered = "[]"
			}
			if next.Name != tt.want || tt.wantCovered != "" && gotCovered != tt.wantCovered {
				t.Errorf("Next = %s covering %s, want %s covering %s", next.Name, gotCovered, tt.want, tt.wantCovered)
			}
		})
	}
}

func TestLockIsExclusive(t *testing.T) {
	s := open(t)
	unlock, err := s.TryLock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TryLock(); !errors.Is(err, spool.ErrLocked) {
		t.Errorf("second TryLock = %v, want ErrLocked", err)
	}
	if pid, held, err := s.Holder(); err != nil || !held || pid != os.Getpid() {
		t.Errorf("Holder = %d, %v, %v; want this process", pid, held, err)
	}
	unlock()
	if _, held, _ := s.Holder(); held {
		t.Error("held after unlock")
	}
}

// A worker killed with SIGKILL holds the lock no more: the system
// releases it.
func TestLockOfAKilledProcessIsReleased(t *testing.T) {
	s := open(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+filepath.Dir(s.Dir()))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("the holder said %q, %v", line, err)
	}
	if pid, held, err := s.Holder(); err != nil || !held || pid != cmd.Process.Pid {
		t.Errorf("Holder = %d, %v, %v; want the holder %d", pid, held, err, cmd.Process.Pid)
	}
	if _, err := s.TryLock(); !errors.Is(err, spool.ErrLocked) {
		t.Errorf("TryLock while another process holds it = %v, want ErrLocked", err)
	}
	if err := cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	unlock, err := s.TryLock()
	if err != nil {
		t.Fatalf("TryLock after the holder was killed: %v", err)
	}
	unlock()
}

func TestWatcher(t *testing.T) {
	s := open(t)
	w, err := s.Watch()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// A timeout: nothing is added, so Wait returns at its deadline.
	if w.Wait(context.Background(), time.Now().Add(20*time.Millisecond)) {
		t.Error("Wait reported an entry when none was added")
	}
	added := make(chan struct{})
	go func() {
		add(t, s, memcore.TriggerCadence, "s", "x")
		close(added)
	}()
	if !w.Wait(context.Background(), time.Now().Add(time.Minute)) {
		t.Error("Wait did not see the new entry")
	}
	<-added
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if w.Wait(ctx, time.Now().Add(time.Minute)) {
		t.Error("Wait with an ended context reported an entry")
	}
}

// A message's time, when the agent gave one, is kept in the entry; one
// without a time stays without.
func TestEntryKeepsMessageTimes(t *testing.T) {
	s := open(t)
	at := time.Date(2025, 3, 10, 10, 3, 12, 530e6, time.UTC)
	window := []memcore.Message{{Role: memcore.RoleUser, Content: "one", At: at}, {Role: memcore.RoleAssistant, Content: "two"}}
	name, err := s.Add(spool.Entry{Kind: memcore.TriggerCadence, SessionID: "s", Messages: spool.Messages(window)})
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Window(); len(got) != 2 || !got[0].At.Equal(at) || !got[1].At.IsZero() {
		t.Errorf("window %+v, want the first message at %v and the second without a time", got, at)
	}
}
