//go:build linux

package resident

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// readLimit bounds the time a connection may take to send its request,
// and writeLimit the time the answer may take to be read.
const (
	readLimit  = 10 * time.Second
	writeLimit = 10 * time.Second
)

// maxBudget bounds the time a request may ask for.
const maxBudget = time.Minute

// Lock is the lock of a server folder: one server per key.
type Lock struct{ f *os.File }

// TakeLock takes the lock of the server folder dir without waiting: an
// OS flock on its lock file, which the system releases when the process
// ends, however it ends. It fails with ErrRunning when another process
// holds it.
func TakeLock(dir string) (*Lock, error) {
	f, err := os.OpenFile(lockPath(dir), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("resident: %w", err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("resident: lock %s: %w", lockPath(dir), err)
	}
	return &Lock{f: f}, nil
}

// tryLock takes the flock of f without waiting.
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// Release releases the lock.
func (l *Lock) Release() { _ = l.f.Close() }

// CheckListen checks that a socket can be made in the server folder dir
// (whose lock the caller holds), by making one and removing it: a server
// checks it before the work of building its index, which it would
// otherwise do in vain on a file system without sockets.
func CheckListen(dir string) error {
	path := socketPath(dir)
	_ = os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return fmt.Errorf("resident: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	return ln.Close()
}

// Handler answers a request of operation OpRecall or OpPing; ctx ends
// when the request's budget does.
type Handler func(ctx context.Context, req *Request) *Response

// Serve listens on the socket of the server folder dir, whose lock the
// caller holds, and answers each request whose version and key are its
// own with h, until ctx ends, no recall came for idle, or a request asks
// it to stop (OpStop). Only a recall (OpRecall) counts as use: a ping
// (OpPing), a refused request or a connection that sends nothing leaves
// the idle time running, so that a server that is only looked at still
// leaves. A connection from a process of another user is closed
// unanswered. Serve returns once the socket is removed and the requests
// being answered are done.
func Serve(ctx context.Context, dir, key string, idle time.Duration, h Handler) error {
	path := socketPath(dir)
	_ = os.Remove(path) // a socket left by a server that died: the lock is ours
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return fmt.Errorf("resident: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("resident: %w", err)
	}
	s := &server{key: key, h: h, stop: make(chan struct{}), used: make(chan struct{}, 1)}
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		s.accept(ln)
	}()
	s.wait(ctx, idle)
	ln.Close()
	// accept has returned before the wait for the requests: a connection
	// it took just before the close is counted (wg.Add) before wg.Wait.
	<-accepting
	s.wg.Wait()
	return nil
}

// server is the state of one Serve.
type server struct {
	key      string
	h        Handler
	wg       sync.WaitGroup
	stopOnce sync.Once
	stop     chan struct{} // closed by an OpStop request
	used     chan struct{} // gets a value when a recall is answered
	mu       sync.Mutex
	inUse    int // the recalls being answered
}

// wait returns when ctx ends, a stop was asked, or idle passed with no
// recall answered or being answered.
func (s *server) wait(ctx context.Context, idle time.Duration) {
	t := time.NewTimer(idle)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stop:
			return
		case <-s.used:
			t.Reset(idle)
		case <-t.C:
			s.mu.Lock()
			busy := s.inUse > 0
			s.mu.Unlock()
			if !busy {
				return
			}
			t.Reset(idle)
		}
	}
}

// accept answers each connection on a goroutine of its own, until ln is
// closed.
func (s *server) accept(ln *net.UnixListener) {
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.serve(c)
		}()
	}
}

// isUse reports whether req counts as use of the server, which restarts
// its idle time: a recall it answers. Asking how it is (OpPing) does not.
func (s *server) isUse(req *Request) bool {
	return req.Version == Version && req.Key == s.key && req.Op == OpRecall
}

// begin records the start of a recall, and end its end.
func (s *server) begin() {
	s.mu.Lock()
	s.inUse++
	s.mu.Unlock()
}

func (s *server) end() {
	s.mu.Lock()
	s.inUse--
	s.mu.Unlock()
	select {
	case s.used <- struct{}{}:
	default:
	}
}

// serve answers one connection.
func (s *server) serve(c *net.UnixConn) {
	if uid, err := peerUID(c); err != nil || uid != os.Getuid() {
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(readLimit))
	var req Request
	if err := ReadFrame(c, &req); err != nil {
		return
	}
	if s.isUse(&req) {
		s.begin()
		defer s.end() // once the answer is written
	}
	resp := s.answer(&req)
	_ = c.SetWriteDeadline(time.Now().Add(writeLimit))
	_ = WriteFrame(c, resp)
}

// answer is the response to req.
func (s *server) answer(req *Request) *Response {
	switch {
	case req.Version != Version:
		return &Response{Version: Version, Status: StatusRefused, Message: fmt.Sprintf("wire format version %d, not %d", req.Version, Version)}
	case req.Key != s.key:
		return &Response{Version: Version, Status: StatusRefused, Message: "another key"}
	case req.Op == OpStop:
		s.stopOnce.Do(func() { close(s.stop) })
		return &Response{Version: Version, Status: StatusOK, PID: os.Getpid()}
	case req.Op != OpRecall && req.Op != OpPing:
		return &Response{Version: Version, Status: StatusRefused, Message: fmt.Sprintf("unknown operation %q", req.Op)}
	}
	budget := min(time.Duration(req.BudgetMillis)*time.Millisecond, maxBudget)
	if budget <= 0 {
		budget = maxBudget
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	resp := s.h(ctx, req)
	resp.Version = Version
	return resp
}

// peerUID returns the user id of the process at the other end of c.
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if credErr != nil {
		return 0, credErr
	}
	return int(cred.Uid), nil
}

// exitPoll is how often WaitExited looks at a server's lock.
const exitPoll = 10 * time.Millisecond

// WaitExited waits until no process holds the lock of the server folder
// dir — its server has exited: a server keeps its lock until it has
// finished its work — or ctx ends, with an error wrapping ctx's. It looks
// at the lock every 10 ms, without making a lock file where there is none
// (a folder without one is held by nobody).
func WaitExited(ctx context.Context, dir string) error {
	t := time.NewTicker(exitPoll)
	defer t.Stop()
	for {
		held, err := lockHeld(dir)
		if err != nil || !held {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("resident: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// lockHeld reports whether a process holds the lock of the server folder
// dir; a folder without a lock file is held by nobody, and none is made.
// When nobody holds it, it takes the lock for a moment.
func lockHeld(dir string) (bool, error) {
	f, err := os.OpenFile(lockPath(dir), os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("resident: %w", err)
	}
	defer f.Close() // releases the lock, if taken
	switch err := tryLock(f); {
	case err == nil:
		return false, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return true, nil
	default:
		return false, fmt.Errorf("resident: lock %s: %w", lockPath(dir), err)
	}
}

// State is what a server folder shows of its server, without asking it.
type State int

// The states of a server folder.
const (
	// Stopped: no process holds the folder's lock.
	Stopped State = iota
	// Starting: a process holds the lock, and has no socket yet: it is
	// building its index, and listens once it has.
	Starting
	// Listening: a process holds the lock, and its socket is there.
	Listening
)

// Look tells what the server folder dir shows of its server, without
// connecting to it: a server, whatever its binary, counts nothing of it as
// use. Where no process holds the lock it takes the lock for a moment (a
// server starting in that moment finds it held and leaves, as when two
// start at once), and makes no lock file where there is none.
func Look(dir string) (State, error) {
	held, err := lockHeld(dir)
	if err != nil || !held {
		return Stopped, err
	}
	if info, err := os.Lstat(socketPath(dir)); err == nil && info.Mode().Type() == fs.ModeSocket {
		return Listening, nil
	}
	return Starting, nil
}

// Running reports whether a process holds the lock of the server folder
// dir: a server is running there, or starting (building its index before
// it listens).
func Running(dir string) bool {
	l, err := TakeLock(dir)
	if err != nil {
		return errors.Is(err, ErrRunning)
	}
	l.Release()
	return false
}

// procLocks is the system's table of the locks held.
const procLocks = "/proc/locks"

// maxLockLines bounds the lines of procLocks LockHolder reads.
const maxLockLines = 1 << 16

// LockHolder returns the process id of the process that holds the lock of
// the server folder dir, as the system's table of locks (/proc/locks)
// names it: for a server that recorded nothing of itself, its pid — the
// one that ends it. It is 0 when nobody holds the lock, or when the table
// does not say (another pid namespace, no /proc); the lock file is never
// followed if a link. It reads the first 65,536 locks of the table at
// most.
func LockHolder(dir string) int {
	var st syscall.Stat_t
	if err := syscall.Lstat(lockPath(dir), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return 0
	}
	f, err := os.Open(procLocks)
	if err != nil {
		return 0
	}
	defer f.Close()
	return lockHolderIn(f, lockID(uint64(st.Dev), st.Ino))
}

// lockID is how the table of locks names a file: the major and the minor
// number of its device in hexadecimal, of two digits at least, and its
// inode number: fe:00:10030449.
func lockID(dev, ino uint64) string {
	return fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), ino)
}

// lockHolderIn is LockHolder reading the table of locks from r, for the
// file named id (see lockID).
func lockHolderIn(r io.Reader, id string) int {
	sc := bufio.NewScanner(r)
	for n := 0; n < maxLockLines && sc.Scan(); n++ {
		// 1: FLOCK  ADVISORY  WRITE 1234 fe:00:10030449 0 EOF; a process
		// waiting for the lock has "->" after the number.
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != id {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil && pid > 0 {
			return pid
		}
		return 0
	}
	return 0
}
