//go:build linux

package resident

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrUnsafeDir: a folder that must be private to the user is not: a
// symbolic link, not a folder, owned by another user, or open to others.
var ErrUnsafeDir = errors.New("not a folder private to this user")

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

// LogPath is the server's log in its folder: its standard output and
// error.
func LogPath(dir string) string { return filepath.Join(dir, "log") }

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
