package memretrieve

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// The cache lives inside a memory folder, which a repository can commit:
// a symbolic link there could point anywhere, and a FIFO or a device would
// block or misbehave when opened. The cache never follows a link and opens
// only regular files, without blocking; anything else makes that folder's
// cache memory-only (see vecCache.refuse).

// checkCacheDir reports whether dir can hold the cache: it does not exist
// yet (it is created when first written), or it is a folder, not a
// symbolic link. A link is an error wrapping atomicfile.ErrSymlink,
// anything else atomicfile.ErrNotRegular.
func checkCacheDir(dir string) error {
	info, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s: %w", dir, atomicfile.ErrSymlink)
	case !info.IsDir():
		return fmt.Errorf("%s: %w: not a folder", dir, atomicfile.ErrNotRegular)
	}
	return nil
}

// unsafeCache reports whether err says a cache folder or file must not be
// used at all: it is a symbolic link or not a regular file (or folder).
func unsafeCache(err error) bool {
	return errors.Is(err, atomicfile.ErrSymlink) || errors.Is(err, atomicfile.ErrNotRegular)
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
