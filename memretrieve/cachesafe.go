package memretrieve

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// The cache lives inside a memory folder, which a repository can commit:
// a symbolic link there could point anywhere, and a FIFO or a device would
// block or misbehave when opened. The cache never follows a link and opens
// only regular files, without blocking; anything else makes that folder's
// cache memory-only (see vecCache.refuse).

// errCacheLink and errCacheSpecial say why a cache folder or file is not
// used.
var (
	errCacheLink    = errors.New("a symbolic link, which the cache never follows")
	errCacheSpecial = errors.New("not a regular file or folder")
)

// checkCacheDir reports whether dir can hold the cache: it does not exist
// yet (it is created when first written), or it is a folder, not a
// symbolic link.
func checkCacheDir(dir string) error {
	info, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s: %w", dir, errCacheLink)
	case !info.IsDir():
		return fmt.Errorf("%s: %w", dir, errCacheSpecial)
	}
	return nil
}

// openCacheFile opens the cache file path with flag (and perm when it is
// created) if it is a regular file: never through a symbolic link
// (O_NOFOLLOW where the system has it, and an Lstat first everywhere), and
// without blocking on a FIFO or a device (O_NONBLOCK, then the mode of the
// opened file itself is checked before anything is read or written). A
// link or a special file is an error wrapping errCacheLink or
// errCacheSpecial; a missing file one wrapping fs.ErrNotExist.
func openCacheFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	info, err := os.Lstat(path)
	switch {
	case err == nil && info.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s: %w", path, errCacheLink)
	case err == nil && !info.Mode().IsRegular():
		return nil, fmt.Errorf("%s: %w", path, errCacheSpecial)
	case err != nil && !(errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0):
		return nil, err
	}
	f, err := os.OpenFile(path, flag|oNoFollow|oNonBlock, perm)
	if err != nil {
		// Replaced since the Lstat: a link (ELOOP under O_NOFOLLOW) or a
		// FIFO without a reader (ENXIO when opened to write).
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: %w", path, errCacheLink)
		}
		if errors.Is(err, syscall.ENXIO) {
			return nil, fmt.Errorf("%s: %w", path, errCacheSpecial)
		}
		return nil, err
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", path, errCacheSpecial)
	}
	return f, nil
}

// unsafeCache reports whether err says a cache folder or file must not be
// used at all (see errCacheLink, errCacheSpecial).
func unsafeCache(err error) bool {
	return errors.Is(err, errCacheLink) || errors.Is(err, errCacheSpecial)
}

// cannotUse reports that the cache file f could not be read or written
// (err), with msg. A folder or file that is a symbolic link or a special
// file is refused for good: f is not opened again, and the vectors of its
// scopes are kept in memory.
func (c *vecCache) cannotUse(f *cacheFile, err error, msg string) {
	if !unsafeCache(err) {
		c.log.Warn().Err(err).Str("path", f.path).Msg(msg)
		return
	}
	f.refused = true
	f.info, f.off, f.st = nil, 0, decodeState{}
	clear(f.keys)
	c.log.Warn().Err(err).Str("path", f.path).
		Msg("memretrieve: the embedding cache is a symbolic link or a special file, which is never followed or opened; its vectors are kept in memory only")
}
