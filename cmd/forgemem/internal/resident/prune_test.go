//go:build linux

package resident

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Prune removes the server folders no server used for a while, and only
// those: not the caller's, not one whose lock a process holds, not one
// used recently, not one holding anything but its socket, lock, logs and
// record, not anything that is no server folder of this user's.
func TestPrune(t *testing.T) {
	base := t.TempDir()
	if err := os.Chmod(base, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	key := func(c byte) string {
		b := make([]byte, 32)
		for i := range b {
			b[i] = c
		}
		return string(b)
	}
	// server makes a server folder holding files, last changed at when.
	server := func(name string, when time.Time, files ...string) string {
		t.Helper()
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			p := filepath.Join(dir, f)
			if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, when, when); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(dir, when, when); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	unused := server(key('a'), old, "lock", "log", "log.1", "sock", placeFile, placeTemp)
	unusedEmpty := server(key('b'), old)
	mine := server(key('c'), old, "lock", "log")
	recent := server(key('d'), time.Now(), "lock", "log")
	recentLog := server(key('e'), old, "lock")
	logPath := filepath.Join(recentLog, "log")
	if err := os.WriteFile(logPath, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(recentLog, old, old); err != nil {
		t.Fatal(err)
	}
	other := server(key('f'), old, "lock", "notes.txt")
	held := server(key('0'), old, "log")
	lock, err := TakeLock(held)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, p := range []string{filepath.Join(held, "lock"), held} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	notKey := server("barriers", old)
	open := server(key('1'), old, "lock")
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(base, key('2'))
	if err := os.Symlink(unusedEmpty, linked); err != nil {
		t.Fatal(err)
	}

	n, err := Prune(base, key('c'), 7*24*time.Hour)
	if err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want 2 folders removed", n, err)
	}
	for _, dir := range []string{unused, unusedEmpty} {
		if _, err := os.Lstat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: not removed (%v)", filepath.Base(dir), err)
		}
	}
	for name, dir := range map[string]string{"the caller's": mine, "used recently": recent, "a recent log": recentLog,
		"holding another file": other, "locked": held, "not named by a key": notKey, "open to others": open, "a link": linked} {
		if _, err := os.Lstat(dir); err != nil {
			t.Errorf("%s folder removed: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(other, "notes.txt")); err != nil {
		t.Errorf("a file of a folder left alone is gone: %v", err)
	}
}

// A base folder that cannot be read is an error, not a panic or a silent
// success.
func TestPruneMissingBase(t *testing.T) {
	if n, err := Prune(filepath.Join(t.TempDir(), "none"), "", time.Hour); err == nil || n != 0 {
		t.Errorf("Prune(missing) = %d, %v; want an error", n, err)
	}
}
