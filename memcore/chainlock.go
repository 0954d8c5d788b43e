package memcore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A FileStore serialises the writes that supersede a version — checking
// that the version has no successor yet, then publishing the new file — with
// a lock file in each memory folder, so that of two processes superseding
// one version at once exactly one succeeds. The lock files live in a
// ".locks" folder inside the memory folder, which holds a .gitignore
// ignoring everything in it, so they are never committed.
//
// Where the system has flock (Linux, the BSDs, macOS) the lock is an
// advisory flock on .locks/chains.lock, which the system releases when its
// holder dies, however it dies. Elsewhere the lock is the existence of
// .locks/chains.held, created exclusively and removed on release; one left
// by a killed process is taken to be stale once it is staleLockAge old and
// is removed (best effort: two processes finding one stale lock at the same
// moment could both take it).
//
// A write that supersedes takes the lock of every folder the store has (a
// successor may be written into either scope) but a folder of the other
// scope that does not exist — it holds no successor, and a writer that
// creates it to write one there takes this folder's lock too before it
// publishes — in the order of the folders' real paths (symbolic links
// resolved), so that every process takes them in the same order whichever
// scope each folder is to it. It
// never waits for one folder's lock while holding the other's: if the
// second is busy it lets the first go and tries again, so two processes
// cannot deadlock even if they saw the folders by paths that order
// differently. Nothing under .locks is followed through a symbolic link: a
// .locks that is not a real folder, or a lock file that is not a regular
// file, is refused.
const (
	lockDirName    = ".locks"
	lockGitignore  = "# forgemem lock files: never committed.\n*\n"
	flockName      = "chains.lock"
	exclusiveName  = "chains.held"
	staleLockAge   = time.Minute
	lockRetryFirst = time.Millisecond
	lockRetryMax   = 20 * time.Millisecond
)

// lockFolder takes one folder's lock without waiting: tryLock, the lock of
// the system; tests replace it to run the fallback everywhere.
var lockFolder = tryLock

// errLockBusy is what a tryLock function returns when another holder has
// the lock.
var errLockBusy = errors.New("lock busy")

// lockChains takes the chain lock of every folder the store has, as
// described above, waiting until it has them all or ctx ends, and returns
// the function that releases them. scope is the scope being written: a
// folder of the other scope that does not exist is skipped (and not
// created), and one whose lock cannot be taken (not a folder, no
// permission) is skipped with a log line, since a write into that folder
// fails in the same way; the written scope's folder must lock.
func (s *FileStore) lockChains(ctx context.Context, scope Scope) (release func(), err error) {
	type folder struct{ path, order string }
	var folders []folder
	for _, sc := range s.onScopes() {
		dir := s.Dir(sc)
		if _, err := os.Lstat(dir); sc != scope && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		path, err := prepareLockDir(dir)
		if err != nil {
			if sc == scope {
				return nil, fmt.Errorf("lock the %s folder: %w", sc, err)
			}
			s.log.Warn().Err(err).Str("scope", string(sc)).Msg("memcore: cannot lock the other scope's folder; superseding without it")
			continue
		}
		folders = append(folders, folder{path, realPath(dir)})
	}
	slices.SortFunc(folders, func(a, b folder) int { return strings.Compare(a.order, b.order) })
	wait := lockRetryFirst
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var held []func()
		releaseAll := func() {
			for i := len(held) - 1; i >= 0; i-- {
				held[i]()
			}
		}
		var lockErr error
		for _, f := range folders {
			unlock, err := lockFolder(f.path)
			if err != nil {
				lockErr = err
				break
			}
			held = append(held, unlock)
		}
		switch {
		case lockErr == nil:
			return releaseAll, nil
		case !errors.Is(lockErr, errLockBusy):
			releaseAll()
			return nil, lockErr
		}
		releaseAll()
		// Busy: wait a little, with jitter so that contenders spread out.
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, lockRetryMax)
	}
}

// realPath is dir with symbolic links resolved: the order of its lock
// among the store's (dir when they cannot be resolved).
func realPath(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// prepareLockDir makes sure dir holds a .locks folder with its .gitignore
// and returns the folder's path. dir is created if it was deleted by hand;
// a .locks that is not a real folder (a symbolic link, a file) is an error.
func prepareLockDir(dir string) (string, error) {
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return "", err
	}
	ld := filepath.Join(dir, lockDirName)
	if err := os.Mkdir(ld, dirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if err := checkLockDir(ld); err != nil {
		return "", err
	}
	// O_EXCL never follows a symbolic link, and leaves an existing file be.
	f, err := os.OpenFile(filepath.Join(ld, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	switch {
	case errors.Is(err, fs.ErrExist):
	case err != nil:
		return "", err
	default:
		_, err = f.WriteString(lockGitignore)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", err
		}
	}
	return ld, nil
}

// checkLockDir returns an error wrapping ErrMalformed unless ld is a real
// folder (not a symbolic link to one).
func checkLockDir(ld string) error {
	info, err := os.Lstat(ld)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s: %w: not a folder (symbolic links are never followed); remove it so that writes can lock", ld, ErrMalformed)
	}
	return nil
}

// tryLockExclusive takes the lock of the .locks folder ld by creating
// chains.held exclusively, without waiting: errLockBusy if another holder
// has it. A lock file staleLockAge old was left by a holder that died; it
// is removed and the lock taken. It is the lock of systems without flock,
// and works everywhere.
func tryLockExclusive(ld string) (unlock func(), err error) {
	path := filepath.Join(ld, exclusiveName)
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
		if err == nil {
			_, _ = fmt.Fprintf(f, "pid %d\n", os.Getpid()) // for a person looking
			_ = f.Close()
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		info, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && attempt == 0: // released just now
			continue
		case err != nil:
			return nil, err
		case attempt == 0 && time.Since(info.ModTime()) >= staleLockAge:
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			continue
		}
		return nil, errLockBusy
	}
}
