//go:build linux

package resident

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A private folder is a real folder of the user's with mode 0700; any
// other is refused, named, and left untouched.
func TestPrivateDir(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		wantErr bool
	}{
		{"made", func(*testing.T, string) {}, false},
		{"already there", func(t *testing.T, path string) { mustMkdir(t, path, 0o700) }, false},
		{"open to the group", func(t *testing.T, path string) { mustMkdir(t, path, 0o750) }, true},
		{"open to all", func(t *testing.T, path string) { mustMkdir(t, path, 0o777) }, true},
		{"a symbolic link to a private folder", func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "private")
			mustMkdir(t, target, 0o700)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"a file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"another user's", func(t *testing.T, path string) {
			if os.Getuid() != 0 {
				t.Skip("needs root to give a folder to another user")
			}
			mustMkdir(t, path, 0o700)
			if err := os.Chown(path, 4242, 4242); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			path := filepath.Join(tmp, fmt.Sprintf("forgemem-%d", os.Getuid()))
			tt.prepare(t, path)
			got, err := PrivateDir([]string{"TMPDIR=" + tmp})
			if tt.wantErr {
				if !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), path) {
					t.Errorf("PrivateDir = %q, %v; want ErrUnsafeDir naming %s", got, err, path)
				}
				return
			}
			if err != nil || got != path {
				t.Fatalf("PrivateDir = %q, %v; want %s", got, err, path)
			}
			if info, err := os.Lstat(got); err != nil || info.Mode().Perm() != 0o700 || !info.IsDir() {
				t.Errorf("the folder: %v, %v", info.Mode(), err)
			}
		})
	}
}

func mustMkdir(t *testing.T, path string, perm os.FileMode) {
	t.Helper()
	if err := os.Mkdir(path, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // whatever the umask
		t.Fatal(err)
	}
}

// XDG_RUNTIME_DIR is used when it is the user's own; otherwise the
// temporary folder.
func TestPrivateDirPrefersTheRuntimeDir(t *testing.T) {
	xdg, tmp := t.TempDir(), t.TempDir()
	if err := os.Chmod(xdg, 0o700); err != nil {
		t.Fatal(err)
	}
	if got, err := PrivateDir([]string{"XDG_RUNTIME_DIR=" + xdg, "TMPDIR=" + tmp}); err != nil || got != filepath.Join(xdg, "forgemem") {
		t.Errorf("PrivateDir = %q, %v; want the runtime folder's", got, err)
	}
	if err := os.Chmod(xdg, 0o755); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(tmp, fmt.Sprintf("forgemem-%d", os.Getuid()))
	if got, err := PrivateDir([]string{"XDG_RUNTIME_DIR=" + xdg, "TMPDIR=" + tmp}); err != nil || got != want {
		t.Errorf("with a runtime folder open to others, PrivateDir = %q, %v; want %s", got, err, want)
	}
}

// serverDir is a server folder in a short private folder.
func serverDir(t *testing.T) string {
	t.Helper()
	tmp, err := os.MkdirTemp("", "fmr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	base, err := PrivateDir([]string{"TMPDIR=" + tmp})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := ServerDir(base, "k1")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// serve runs Serve on dir with key "k1" and an echo handler until the
// test ends; it returns Serve's end.
func serve(t *testing.T, dir string, idle time.Duration) <-chan error {
	t.Helper()
	lock, err := TakeLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, finished := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(finished)
		defer lock.Release()
		done <- Serve(ctx, dir, "k1", idle, func(ctx context.Context, req *Request) *Response {
			if req.Op == OpPing {
				return &Response{Status: StatusOK, PID: os.Getpid()}
			}
			return &Response{Status: StatusOK, Injection: "echo: " + req.Window[0].Content}
		})
	}()
	t.Cleanup(func() { cancel(); <-finished })
	waitListening(t, dir)
	return done
}

// waitListening waits until the socket of dir accepts connections.
func waitListening(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.Dial("unix", socketPath(dir))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never listened: %v", err)
		}
		time.Sleep(5 * time.Millisecond) // Serve signals nothing before it listens
	}
}

func ask(t *testing.T, dir string, req *Request) (*Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return Ask(ctx, dir, req)
}

// A server answers requests of its key and version, refuses others, and
// a second one of the same folder cannot take the lock.
func TestServeAnswersItsOwnKey(t *testing.T) {
	dir := serverDir(t)
	serve(t, dir, time.Hour)
	if _, err := TakeLock(dir); !errors.Is(err, ErrRunning) {
		t.Errorf("a second lock = %v, want ErrRunning", err)
	}
	if !Running(dir) {
		t.Error("Running = false with a server running")
	}
	tests := []struct {
		name   string
		req    Request
		status string
		want   string
	}{
		{"recall", Request{Op: OpRecall, Key: "k1", Window: []Message{{Role: "user", Content: "hi"}}}, StatusOK, "echo: hi"},
		{"another key", Request{Op: OpRecall, Key: "k2", Window: []Message{{Role: "user", Content: "hi"}}}, StatusRefused, ""},
		{"an unknown operation", Request{Op: "drop-tables", Key: "k1"}, StatusRefused, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := ask(t, dir, &tt.req)
			if err != nil || resp.Status != tt.status || resp.Injection != tt.want {
				t.Errorf("Ask = %+v, %v; want status %s, injection %q", resp, err, tt.status, tt.want)
			}
		})
	}
	// Another version of the format, sent by hand (Ask sets its own).
	c, err := net.Dial("unix", socketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := WriteFrame(c, &Request{Version: Version + 1, Op: OpRecall, Key: "k1"}); err != nil {
		t.Fatal(err)
	}
	var resp Response
	if err := ReadFrame(c, &resp); err != nil || resp.Status != StatusRefused {
		t.Errorf("another version: %+v, %v; want refused", resp, err)
	}
}

// With no server, Ask says so at once, also when a dead server's socket
// is left; a server started there removes the old socket.
func TestAskWithoutAServer(t *testing.T) {
	dir := serverDir(t)
	if _, err := ask(t, dir, &Request{Op: OpPing, Key: "k1"}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("no socket: Ask = %v, want ErrNotRunning", err)
	}
	// A socket nobody listens on, as a killed server leaves it.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: socketPath(dir), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := ask(t, dir, &Request{Op: OpPing, Key: "k1"}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("a dead server's socket: Ask = %v, want ErrNotRunning", err)
	}
	if Running(dir) {
		t.Error("Running = true with no server")
	}
	serve(t, dir, time.Hour)
	if resp, err := ask(t, dir, &Request{Op: OpPing, Key: "k1"}); err != nil || resp.PID != os.Getpid() {
		t.Errorf("a new server on the old socket: %+v, %v", resp, err)
	}
}

// A server leaves when asked to stop, and after its idle time; its socket
// goes with it.
func TestServeLeaves(t *testing.T) {
	t.Run("stop", func(t *testing.T) {
		dir := serverDir(t)
		done := serve(t, dir, time.Hour)
		if resp, err := ask(t, dir, &Request{Op: OpStop, Key: "k1"}); err != nil || resp.Status != StatusOK {
			t.Fatalf("stop: %+v, %v", resp, err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(socketPath(dir)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the socket after the server left: %v", err)
		}
	})
	t.Run("idle", func(t *testing.T) {
		dir := serverDir(t)
		done := serve(t, dir, 50*time.Millisecond)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if _, err := ask(t, dir, &Request{Op: OpPing, Key: "k1"}); !errors.Is(err, ErrNotRunning) {
			t.Errorf("after the idle time: Ask = %v, want ErrNotRunning", err)
		}
	})
}

// A server that is only asked how it is (OpPing), as recall-server
// --status asks it, still leaves after its idle time: a ping is not use.
func TestServeLeavesWhenOnlyPinged(t *testing.T) {
	const idle = 200 * time.Millisecond
	dir := serverDir(t)
	done := serve(t, dir, idle)
	stuck := time.After(time.Minute)
	for pings := 0; ; pings++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("the server left after %d pings", pings)
			return
		case <-stuck:
			t.Fatalf("the server still serves after %d pings over a minute; its idle time is %s", pings, idle)
		default:
		}
		resp, err := ask(t, dir, &Request{Op: OpPing, Key: "k1"})
		switch {
		case err != nil:
			// It is leaving: its socket is gone (ErrNotRunning), or it
			// closed it with this ping waiting to be accepted (a reset).
			select {
			case derr := <-done:
				if derr != nil {
					t.Fatal(derr)
				}
				return
			case <-stuck:
				t.Fatalf("ping %d: %v, and Serve did not return", pings, err)
			}
		case resp.Status != StatusOK:
			t.Fatalf("ping %d: %+v", pings, resp)
		}
	}
}

// WaitExited returns once nobody holds a server folder's lock, and fails
// with the context's error while somebody does; it makes no lock file.
func TestWaitExited(t *testing.T) {
	t.Run("no lock file", func(t *testing.T) {
		dir := serverDir(t)
		if err := WaitExited(context.Background(), dir); err != nil {
			t.Errorf("WaitExited = %v", err)
		}
		if _, err := os.Lstat(lockPath(dir)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("WaitExited made a lock file: %v", err)
		}
	})
	t.Run("held", func(t *testing.T) {
		dir := serverDir(t)
		lock, err := TakeLock(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Release()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := WaitExited(ctx, dir); !errors.Is(err, context.Canceled) {
			t.Errorf("WaitExited with the lock held = %v, want context.Canceled", err)
		}
	})
	t.Run("released while waiting", func(t *testing.T) {
		dir := serverDir(t)
		lock, err := TakeLock(dir)
		if err != nil {
			t.Fatal(err)
		}
		var releasing atomic.Bool
		go func() {
			if !Running(dir) {
				t.Error("the lock is not held")
			}
			releasing.Store(true)
			lock.Release()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := WaitExited(ctx, dir); err != nil {
			t.Errorf("WaitExited = %v", err)
		}
		if !releasing.Load() {
			t.Error("WaitExited returned while the lock was held")
		}
	})
	t.Run("a server asked to stop", func(t *testing.T) {
		dir := serverDir(t)
		done := serve(t, dir, time.Hour)
		if resp, err := ask(t, dir, &Request{Op: OpStop, Key: "k1"}); err != nil || resp.Status != StatusOK {
			t.Fatalf("stop: %+v, %v", resp, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := WaitExited(ctx, dir); err != nil {
			t.Errorf("WaitExited = %v", err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// Look tells a folder's server stopped, starting (its lock held, no socket
// yet) or listening, without connecting to it, and makes no lock file.
func TestLook(t *testing.T) {
	look := func(dir string) State {
		t.Helper()
		st, err := Look(dir)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	dir := serverDir(t)
	if st := look(dir); st != Stopped {
		t.Errorf("no lock file: Look = %v, want Stopped", st)
	}
	if _, err := os.Lstat(lockPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Look made a lock file: %v", err)
	}
	// A socket nobody listens on, as a killed server leaves it.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: socketPath(dir), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if st := look(dir); st != Stopped {
		t.Errorf("a dead server's socket, no lock: Look = %v, want Stopped", st)
	}
	if err := os.Remove(socketPath(dir)); err != nil {
		t.Fatal(err)
	}
	lock, err := TakeLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st := look(dir); st != Starting {
		t.Errorf("the lock held, no socket: Look = %v, want Starting", st)
	}
	lock.Release()
	if st := look(dir); st != Stopped {
		t.Errorf("the lock released: Look = %v, want Stopped", st)
	}
	done := serve(t, dir, time.Hour)
	if st := look(dir); st != Listening {
		t.Errorf("a server serving: Look = %v, want Listening", st)
	}
	if resp, err := ask(t, dir, &Request{Op: OpStop, Key: "k1"}); err != nil || resp.Status != StatusOK {
		t.Fatalf("stop: %+v, %v", resp, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// The server's socket is the user's alone.
func TestSocketIsPrivate(t *testing.T) {
	dir := serverDir(t)
	serve(t, dir, time.Hour)
	for path, want := range map[string]os.FileMode{dir: 0o700, socketPath(dir): 0o600, lockPath(dir): 0o600} {
		info, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %#o, want %#o", path, info.Mode().Perm(), want)
		}
	}
}

// CheckListen makes a socket and leaves none; where none can be made it
// says so.
func TestCheckListen(t *testing.T) {
	dir := serverDir(t)
	if err := CheckListen(dir); err != nil {
		t.Fatalf("CheckListen = %v", err)
	}
	if _, err := os.Lstat(socketPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CheckListen left the socket: %v", err)
	}
	if err := CheckListen(filepath.Join(dir, "missing")); err == nil {
		t.Error("CheckListen in a missing folder succeeded")
	}
}

// LockHolder names the process holding a server folder's lock, and none
// when nobody holds it, there is no lock file, or the lock file is a link
// to a lock held.
func TestLockHolder(t *testing.T) {
	dir := serverDir(t)
	if pid := LockHolder(dir); pid != 0 {
		t.Errorf("no lock file: LockHolder = %d, want 0", pid)
	}
	lock, err := TakeLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if pid := LockHolder(dir); pid != os.Getpid() {
		t.Errorf("the lock held: LockHolder = %d, want this process, %d", pid, os.Getpid())
	}
	linked := filepath.Join(filepath.Dir(dir), "k2")
	mustMkdir(t, linked, 0o700)
	if err := os.Symlink(lockPath(dir), lockPath(linked)); err != nil {
		t.Fatal(err)
	}
	if pid := LockHolder(linked); pid != 0 {
		t.Errorf("a link to a lock held: LockHolder = %d, want 0", pid)
	}
	lock.Release()
	if pid := LockHolder(dir); pid != 0 {
		t.Errorf("the lock released: LockHolder = %d, want 0", pid)
	}
}

// The table of locks names a lock's file by its device's major and minor
// numbers, in hexadecimal, of two digits at least, and its inode: a
// device whose minor number is above 255, or whose major is above 255,
// holds bits away from the low 16 of its number (an NVMe partition,
// 259:65536; a device mapper's 253:300), which the lock's id must place
// as the kernel does.
func TestLockHolderMatchesTheDevice(t *testing.T) {
	const table = `1: FLOCK  ADVISORY  WRITE 101 08:01:42 0 EOF
2: FLOCK  ADVISORY  WRITE 102 fe:00:42 0 EOF
3: FLOCK  ADVISORY  WRITE 103 fd:12c:42 0 EOF
3: -> FLOCK  ADVISORY  WRITE 203 fd:12c:42 0 EOF
4: FLOCK  ADVISORY  WRITE 104 103:10000:42 0 EOF
5: FLOCK  ADVISORY  WRITE 105 fff:fffff:42 0 EOF
6: POSIX  ADVISORY  WRITE 106 103:10001:42 0 EOF
7: FLOCK  ADVISORY  WRITE 107 00:2c:42 0 EOF
`
	tests := []struct {
		major, minor uint32
		id           string
		holder       int
	}{
		{8, 1, "08:01:42", 101},
		{0xfe, 0, "fe:00:42", 102},
		{253, 300, "fd:12c:42", 103},
		{259, 65536, "103:10000:42", 104},
		{0xfff, 0xfffff, "fff:fffff:42", 105},
		// A POSIX lock is not the server's.
		{259, 65537, "103:10001:42", 0},
		{0, 44, "00:2c:42", 107},
		// The low 8 bits of the minor alike, and the major: another
		// device.
		{253, 44, "fd:2c:42", 0},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			id := lockID(unix.Mkdev(tt.major, tt.minor), 42)
			if id != tt.id {
				t.Fatalf("lockID(%d:%d, 42) = %q, want %q", tt.major, tt.minor, id, tt.id)
			}
			if pid := lockHolderIn(strings.NewReader(table), id); pid != tt.holder {
				t.Errorf("the holder of %s is %d, want %d", id, pid, tt.holder)
			}
		})
	}
}
