//go:build linux

package resident

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// maxSocketPath bounds the path of a socket (sun_path holds 108 bytes,
// its last a NUL).
const maxSocketPath = 107

// PrivateDir returns the user's private folder for forgemem's resident
// processes, making it if needed: $XDG_RUNTIME_DIR/forgemem when that
// variable names a folder of the user's own (mode 0700, as the XDG
// specification makes it), else forgemem-<uid> in the temporary folder
// ($TMPDIR, or /tmp). environ is the process's environment. The folder
// must be a real folder (not a link), owned by the user and closed to
// everyone else (mode 0700); one that is not, which another user may have
// made to catch the socket, is an error wrapping ErrUnsafeDir, and nothing
// is put in it.
func PrivateDir(environ []string) (string, error) {
	uid := os.Getuid()
	if xdg := lookup(environ, "XDG_RUNTIME_DIR"); filepath.IsAbs(xdg) && checkPrivate(xdg, uid) == nil {
		dir := filepath.Join(xdg, "forgemem")
		return dir, makePrivate(dir, uid)
	}
	tmp := lookup(environ, "TMPDIR")
	if !filepath.IsAbs(tmp) {
		tmp = "/tmp"
	}
	dir := filepath.Join(tmp, fmt.Sprintf("forgemem-%d", uid))
	return dir, makePrivate(dir, uid)
}

// ServerDir returns the folder of the server of key in the private folder
// base, making it if needed (private too).
func ServerDir(base, key string) (string, error) {
	dir := filepath.Join(base, key)
	if len(socketPath(dir)) > maxSocketPath {
		return "", fmt.Errorf("resident: the socket path %s is longer than the system allows; set XDG_RUNTIME_DIR or TMPDIR to a shorter folder", socketPath(dir))
	}
	return dir, makePrivate(dir, os.Getuid())
}

// The files of a server's folder.
func socketPath(dir string) string { return filepath.Join(dir, "sock") }
func lockPath(dir string) string   { return filepath.Join(dir, "lock") }
func placePath(dir string) string  { return filepath.Join(dir, placeFile) }

// placeFile records a server's Place; placeTemp is where WritePlace
// writes it before renaming it into place.
const (
	placeFile = "place.json"
	placeTemp = ".place.json.tmp"
)

// LogPath is the server's log in its folder: its standard output and
// error. A log over maxLog is moved aside, to oldLog, when a server starts.
func LogPath(dir string) string { return filepath.Join(dir, "log") }

// oldLog is the name of the log moved aside in a server's folder.
const oldLog = "log.1"

// makePrivate makes dir with mode 0700 unless it exists, then checks that
// it is private to uid.
func makePrivate(dir string, uid int) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("resident: %w", err)
	}
	return checkPrivate(dir, uid)
}

// checkPrivate checks that dir is a real folder owned by uid with no
// permission for anyone else.
func checkPrivate(dir string, uid int) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("resident: %w", err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("resident: %s: %w: a symbolic link; remove it", dir, ErrUnsafeDir)
	case !info.IsDir():
		return fmt.Errorf("resident: %s: %w: not a folder; remove it", dir, ErrUnsafeDir)
	case !ok || int(st.Uid) != uid:
		return fmt.Errorf("resident: %s: %w: owned by another user; remove it, or set TMPDIR to a folder of your own", dir, ErrUnsafeDir)
	case info.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("resident: %s: %w: mode %#o lets others in; chmod 700 it", dir, ErrUnsafeDir, info.Mode().Perm())
	}
	return nil
}

// lookup returns the value of the variable name in environ, "" if unset.
func lookup(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if rest, ok := strings.CutPrefix(kv, name+"="); ok {
			v = rest
		}
	}
	return v
}

// BarrierDir returns the private folder where long-lived processes that
// are not a recall server (the MCP server) keep the barrier files of their
// view of the memory folders (see package live), making it if needed.
func BarrierDir(environ []string) (string, error) {
	base, err := PrivateDir(environ)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "barriers")
	return dir, makePrivate(dir, os.Getuid())
}

// secretFile is the user's key secret in the private folder (see
// KeySecret), as 64 hexadecimal digits and a newline.
const secretFile = "key.secret"

// KeySecret returns the user's key secret, kept in the private folder base
// ([PrivateDir]), and makes it — 32 random bytes, readable by the user
// only, written whole under a temporary name then linked into place, so
// that of two processes making it at once both use the one linked first —
// when there is none yet: the secret the settings are hashed under in a
// key (see [PlaceOf]). It is never read through a symbolic link, nor from
// anything but a regular file; one that holds no secret is an error saying
// to remove it. A new secret is new keys: the servers of the old ones are
// then servers of other settings.
func KeySecret(base string) ([]byte, error) {
	path := filepath.Join(base, secretFile)
	if k, err := readSecret(path); !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("resident: making the key secret: %w", err)
	}
	err := atomicfile.WriteNew(path, []byte(hex.EncodeToString(k)+"\n"), 0o600)
	switch {
	case err == nil:
		return k, nil
	case errors.Is(err, fs.ErrExist): // another process made it meanwhile
		return readSecret(path)
	}
	return nil, fmt.Errorf("resident: making the key secret: %w", err)
}

// readSecret reads the key secret of the file at path.
func readSecret(path string) ([]byte, error) {
	f, err := atomicfile.Open(path, os.O_RDONLY, 0)
	switch {
	case errors.Is(err, atomicfile.ErrSymlink), errors.Is(err, atomicfile.ErrNotRegular):
		return nil, fmt.Errorf("resident: the key secret: %w; remove it", err)
	case err != nil:
		return nil, fmt.Errorf("resident: the key secret: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 2*32+2))
	if err != nil {
		return nil, fmt.Errorf("resident: reading the key secret: %w", err)
	}
	k := make([]byte, 32)
	text := bytes.TrimSpace(data)
	if n, err := hex.Decode(k, text); err != nil || n != len(k) || len(text) != 2*len(k) {
		return nil, fmt.Errorf("resident: the key secret %s is damaged (want %d hexadecimal digits); remove it, and a new one is made", path, 2*len(k))
	}
	return k, nil
}

// keyPattern matches the name of a server folder: a key (see Key).
var keyPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// Prune removes the server folders in the private folder base that no
// server has used for olderThan — a key's folder is left behind when its
// server stops, and every new binary, setting or memory folder makes a new
// key — and returns how many it removed. It leaves alone the folder of
// keep (the caller's key), any folder a process holds the lock of, any
// entry that is not a server folder of this user's (named by a key, a real
// folder private to the user, holding nothing but a socket, a lock, a log
// and the record of what it served), and any folder whose folder or files
// changed within olderThan. It takes each folder's lock before removing
// it, so that no server starts there meanwhile. An error stops it; what it
// removed before stays removed.
func Prune(base, keep string, olderThan time.Duration) (int, error) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return 0, fmt.Errorf("resident: %w", err)
	}
	cutoff := time.Now().Add(-olderThan)
	removed := 0
	for _, e := range entries {
		name := e.Name()
		if name == keep || !keyPattern.MatchString(name) || !e.IsDir() {
			continue
		}
		dir := filepath.Join(base, name)
		if checkPrivate(dir, os.Getuid()) != nil || !unusedSince(dir, cutoff) {
			continue
		}
		ok, err := removeServerDir(dir)
		if err != nil {
			return removed, err
		}
		if ok {
			removed++
		}
	}
	return removed, nil
}

// serverFiles are the files a server folder may hold.
var serverFiles = map[string]bool{"sock": true, "lock": true, "log": true, oldLog: true, placeFile: true, placeTemp: true}

// unusedSince reports whether dir holds nothing but a server's files and
// neither it nor they changed after cutoff.
func unusedSince(dir string, cutoff time.Time) bool {
	info, err := os.Lstat(dir)
	if err != nil || info.ModTime().After(cutoff) {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !serverFiles[e.Name()] {
			return false
		}
		fi, err := e.Info()
		if err != nil || fi.ModTime().After(cutoff) {
			return false
		}
	}
	return true
}

// removeServerDir removes the server folder dir under its lock, and
// reports whether it did: false when a process holds the lock.
func removeServerDir(dir string) (bool, error) {
	lock, err := TakeLock(dir)
	if errors.Is(err, ErrRunning) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer lock.Release()
	for _, name := range []string{"sock", "log", oldLog, placeFile, placeTemp, "lock"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("resident: %w", err)
		}
	}
	if err := os.Remove(dir); errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
		return false, nil // a server is starting there after all
	} else if err != nil {
		return false, fmt.Errorf("resident: %w", err)
	}
	return true, nil
}
