package memretrieve

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// CacheDirName is the name of the folder, inside a scope's memory folder,
// that holds the embedding cache of the scope's memories when the engine's
// store has folders (see [ScopeDirs]) and no Config.CacheDir is given.
const CacheDirName = cacheDirName

// RemoveCachedVectors deletes from the embedding cache in dir the vectors of
// the given memory contents, for every embedding model: each cache file of
// dir (vectors-*.fmv) that holds a vector of one of them is rewritten
// without it, under a temporary name, synced and renamed into place, so a
// reader sees the old file or the new one, never a mix. It is how a memory
// that must not be kept (forgemem purge) leaves no trace in derived data.
//
// dir is a cache folder, such as filepath.Join(memoryDir, CacheDirName).
// Contents are matched as the engine keys them, by the SHA-256 of the text
// with surrounding white space trimmed. The other records of a file are kept
// byte for byte; a file that holds none of the vectors is left untouched.
// Nothing is followed through a symbolic link: a dir that is a link is an
// error, and a cache file that is a link (or not a regular file) is skipped.
// A dir that does not exist holds nothing, and is not an error.
//
// It returns how many vector records were removed (a vector appended twice
// counts twice). Vectors another process appends to a file while it is
// rewritten are lost; they are only a cache, and are embedded again. An
// error names each file that could not be rewritten; the others are
// rewritten all the same.
func RemoveCachedVectors(dir string, contents []string) (int, error) {
	keys := make(map[contentKey]bool, len(contents))
	for _, c := range contents {
		if text := strings.TrimSpace(c); text != "" {
			keys[sha256.Sum256([]byte(text))] = true
		}
	}
	if len(keys) == 0 {
		return 0, nil
	}
	info, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("memretrieve: remove cached vectors: %w", err)
	case !info.IsDir():
		return 0, fmt.Errorf("memretrieve: remove cached vectors: %s is not a folder (symbolic links are never followed)", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("memretrieve: remove cached vectors: %w", err)
	}
	removed := 0
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "vectors-") || !strings.HasSuffix(name, ".fmv") || !e.Type().IsRegular() {
			continue
		}
		n, err := removeVectorsFrom(filepath.Join(dir, name), keys)
		removed += n
		if err != nil {
			errs = append(errs, fmt.Errorf("memretrieve: remove cached vectors from %s: %w", filepath.Join(dir, name), err))
		}
	}
	return removed, errors.Join(errs...)
}

// removeVectorsFrom rewrites the cache file at path without the vector
// records of keys and returns how many it dropped. A path that is not a
// regular file (a link or a FIFO put there since the folder was read) is
// skipped, without waiting.
// Damaged bytes are dropped with the rewrite, as a reader skips them anyway.
func removeVectorsFrom(path string, keys map[contentKey]bool) (int, error) {
	// Never through a link, never waiting on a FIFO put there since the
	// folder was listed (atomicfile.Open).
	f, err := atomicfile.Open(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) || unsafeCache(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if at, err := os.Lstat(path); err != nil || !at.Mode().IsRegular() || !os.SameFile(at, opened) {
		return 0, nil // replaced by a link or removed since it was listed
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return 0, err
	}
	kept, removed := withoutVectors(data, keys)
	if removed == 0 {
		return 0, nil
	}
	if err := atomicfile.Replace(path, kept, cacheFilePerm); err != nil {
		return 0, err
	}
	return removed, nil
}

// withoutVectors returns the records of a cache file's data other than the
// vector records of keys, byte for byte, and how many it left out; damaged
// bytes are left out too.
func withoutVectors(data []byte, keys map[contentKey]bool) ([]byte, int) {
	kept := make([]byte, 0, len(data))
	removed := 0
	for pos := 0; pos < len(data); {
		payload, n := frameAt(data[pos:])
		if n == 0 {
			pos = resync(data, pos)
			continue
		}
		record := data[pos : pos+n]
		pos += n
		if len(payload) >= 1+32 && payload[0] == kindVector && keys[contentKey(payload[1:33])] {
			removed++
			continue
		}
		kept = append(kept, record...)
	}
	return kept, removed
}
