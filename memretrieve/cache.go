package memretrieve

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/atomicfile"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
	"github.com/rs/zerolog"
)

// ScopeDirs is implemented by stores that keep each scope in a folder of
// its own, as [memcore.FileStore] does. The engine then keeps the embedding
// cache of a scope's memories in the .cache folder inside that scope's
// folder.
type ScopeDirs interface {
	// Dir returns the folder of scope, or "" if it has none.
	Dir(scope memcore.Scope) string
}

// Cache folder layout.
const (
	cacheDirName = ".cache"
	// gitignoreBody makes the cache folder ignore itself, .gitignore
	// included, so a repository that commits .forge/memory/ never commits
	// vectors.
	gitignoreBody = "# forgemem embedding cache: derived data, never committed.\n*\n"
	cacheFilePerm = 0o600
	cacheDirPerm  = 0o750
	// compactMinRecords is how many vector records a file must hold before
	// it is worth compacting; it is compacted when fewer than half of them
	// are still in use.
	compactMinRecords = 256
)

// cacheFileName is the file of model's vectors: a readable slug of the model
// and a hash of its exact name, so two models never share a file (and the
// header inside checks it anyway); with a secret, the hash is keyed, so
// only a holder of the secret knows the name (see Config.CacheSecret).
func cacheFileName(model string, secret []byte) string {
	return modelFileName("vectors", model, secret, "fmv")
}

// modelFileName is the name of a file of model in a cache folder:
// prefix-<slug>-<hex>.ext, with a readable slug of the model and a hash of
// its exact name: the first 8 hexadecimal digits of its SHA-256 with no
// secret, the first 16 of its HMAC-SHA256 under secret otherwise.
func modelFileName(prefix, model string, secret []byte, ext string) string {
	var slug strings.Builder
	for _, r := range strings.ToLower(model) {
		if slug.Len() >= 48 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			slug.WriteRune(r)
		default:
			slug.WriteByte('-')
		}
	}
	var hash string
	if len(secret) == 0 {
		sum := sha256.Sum256([]byte(model))
		hash = hex.EncodeToString(sum[:4])
	} else {
		h := hmac.New(sha256.New, secret)
		h.Write([]byte(model))
		hash = hex.EncodeToString(h.Sum(nil)[:8])
	}
	return fmt.Sprintf("%s-%s-%s.%s", prefix, slug.String(), hash, ext)
}

// cacheFile is one cache file and what has been read from it.
type cacheFile struct {
	dir  string
	path string
	// gitignored is set once the folder's .gitignore is known to exist.
	gitignored bool
	// info identifies the file read so far; a different file at the path
	// (replaced by another process's compaction) is read from the start.
	info fs.FileInfo
	// off is how many bytes are settled (see decodeRecords).
	off int64
	st  decodeState
	// keys holds the content keys of the vectors read from or written to
	// the file, for compaction.
	keys map[contentKey]struct{}
	// refused is set when the folder or the file turned out to be a
	// symbolic link or a special file: the file is not used again, and the
	// vectors of its scopes are kept in memory only.
	refused bool
	// ver is the file as last read or written, for the locations of its
	// records that a quantised cache remembers.
	ver *fileVersion
}

// usable reports whether vectors may be appended to the file as it is.
func (f *cacheFile) usable(dim int) bool {
	return f.info == nil || (f.st.header && !f.st.foreign && f.st.dim == dim)
}

// vecCache holds the vectors of one embedder model by content key, backed
// by append-only files (one per cache folder) when there are folders. It is
// not safe for concurrent use: only index builds use it, and the engine runs
// one build at a time (Engine.buildMu).
//
// A quantised cache (for Config.Quantized) keeps every vector's int8 code
// and the place of its record on disk, and keeps the float32 vector itself
// in memory only when there is no copy on disk: a quantised index reads its
// re-rank candidates' vectors from the files.
type vecCache struct {
	model string
	// secret keys the names of the cache's files (Config.CacheSecret).
	secret []byte
	log    zerolog.Logger
	// files maps each scope to the file its memories' vectors go to; two
	// scopes may share one. Empty for a memory-only cache.
	files map[memcore.Scope]*cacheFile
	dim   int
	// vecs holds the float32 vectors: all of them, or, in a quantised
	// cache, those with no copy on disk.
	vecs map[contentKey][]float32
	// quantized: codes holds every vector's code and record location.
	quantized bool
	codes     map[contentKey]codeEntry
}

// codeEntry is a vector in a quantised cache: its int8 code and scale, and
// where its record is on disk (loc.file nil: nowhere, the vector is in
// vecs).
type codeEntry struct {
	q     []int8
	scale float32
	loc   diskLoc
}

// newVecCache returns the cache of model, quantised or not, its files named
// under secret (none: nil). dirs gives the cache folder of each scope (""
// or absent: memory only for that scope).
func newVecCache(model string, secret []byte, dirs map[memcore.Scope]string, quantized bool, log zerolog.Logger) *vecCache {
	c := &vecCache{model: model, secret: secret, log: log, files: make(map[memcore.Scope]*cacheFile), vecs: make(map[contentKey][]float32),
		quantized: quantized, codes: make(map[contentKey]codeEntry)}
	byDir := make(map[string]*cacheFile)
	for scope, dir := range dirs {
		if dir == "" {
			continue
		}
		f := byDir[dir]
		if f == nil {
			f = &cacheFile{dir: dir, path: filepath.Join(dir, cacheFileName(model, secret)), keys: make(map[contentKey]struct{})}
			byDir[dir] = f
		}
		c.files[scope] = f
	}
	return c
}

// distinctFiles returns each cache file once, in a stable order.
func (c *vecCache) distinctFiles() []*cacheFile {
	var out []*cacheFile
	seen := make(map[*cacheFile]bool)
	for _, s := range memcore.Scopes() {
		if f := c.files[s]; f != nil && !f.refused && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// probeScope is the scope whose cache file keeps the relevance gate's probe
// vectors: the first with a usable file, else the first scope (memory
// only).
func (c *vecCache) probeScope() memcore.Scope {
	for _, s := range memcore.Scopes() {
		if f := c.files[s]; f != nil && !f.refused {
			return s
		}
	}
	return memcore.Scopes()[0]
}

// has reports whether the cache holds a vector of its dimension for key.
func (c *vecCache) has(key contentKey) bool {
	if c.quantized {
		e, ok := c.codes[key]
		return ok && len(e.q) == c.dim
	}
	v, ok := c.vecs[key]
	return ok && len(v) == c.dim
}

// putCode records, in a quantised cache, the vector v of key found at loc
// (file nil: not on disk, v is kept in memory). A key already cached only
// takes the new location: v is the same vector.
func (c *vecCache) putCode(key contentKey, v []float32, loc diskLoc) {
	e, ok := c.codes[key]
	if !ok || len(e.q) != len(v) {
		e = codeEntry{q: make([]int8, len(v))}
		e.scale = index.Quantize(v, e.q)
	} else if loc.file == nil {
		// Already cached; keep its location, if it has one.
		if e.loc.file != nil {
			return
		}
	}
	e.loc = loc
	c.codes[key] = e
	if loc.file != nil {
		delete(c.vecs, key)
	} else {
		c.vecs[key] = v
	}
}

// refresh reads what was appended to the cache files since the last
// refresh (all of a file that is new or was replaced). Problems are logged
// and leave the cache as it was: a cache that cannot be read is a miss.
func (c *vecCache) refresh() {
	for _, f := range c.distinctFiles() {
		c.refreshFile(f)
	}
}

// refreshFile reads what was appended to f since it was last read, or all
// of it when it is new or was replaced (see refresh).
func (c *vecCache) refreshFile(f *cacheFile) {
	const cannotRead = "memretrieve: cannot read the embedding cache; its vectors count as missing"
	if err := checkCacheDir(f.dir); err != nil {
		c.cannotUse(f, err, cannotRead)
		return
	}
	fh, err := atomicfile.Open(f.path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		c.fileGone(f)
		return
	}
	if err != nil {
		c.cannotUse(f, err, cannotRead)
		return
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		c.log.Warn().Err(err).Str("path", f.path).Msg(cannotRead)
		return
	}
	reread := c.sameOrReplaced(f, info)
	if info.Size() == f.off {
		if reread && c.quantized {
			c.forgetStale(f) // replaced by an empty file
		}
		return
	}
	data := make([]byte, info.Size()-f.off)
	n, err := fh.ReadAt(data, f.off)
	if err != nil && !errors.Is(err, io.EOF) {
		c.log.Warn().Err(err).Str("path", f.path).Msg(cannotRead)
		return
	}
	c.decodeNew(f, data[:n], reread)
}

// fileGone forgets what was read of f, whose file does not exist (any
// more): what a quantised cache had there is missing now.
func (c *vecCache) fileGone(f *cacheFile) {
	f.info, f.off, f.st = nil, 0, decodeState{}
	if f.ver != nil {
		f.ver = nil
		if c.quantized {
			c.forgetStale(f)
		}
	}
}

// sameOrReplaced records info as f's, and reports whether the file must be
// read from its start: it is new, another file is at the path (another
// process compacted it), or it is shorter than what was read.
func (c *vecCache) sameOrReplaced(f *cacheFile, info fs.FileInfo) bool {
	reread := f.info == nil || !os.SameFile(f.info, info) || info.Size() < f.off
	if reread {
		f.off, f.st = 0, decodeState{}
		clear(f.keys)
		f.ver = &fileVersion{path: f.path, info: info}
	}
	f.info = info
	return reread
}

// decodeNew decodes data, the bytes of f from its read position on, into
// the cache, and moves the position past the records that settled.
func (c *vecCache) decodeNew(f *cacheFile, data []byte, reread bool) {
	base := f.off
	settled := decodeRecordsAt(data, c.model, c.dim, &f.st, c.quantized, func(k contentKey, v []float32, at int) {
		c.found(f, k, v, base+int64(at))
	})
	if reread && c.quantized {
		c.forgetStale(f)
	}
	if f.st.header && !f.st.foreign && c.dim == 0 {
		c.dim = f.st.dim
	}
	if settled < len(data) {
		c.log.Debug().Str("path", f.path).Int("bytes", len(data)-settled).Msg("memretrieve: skipped unreadable bytes at the end of the embedding cache")
	}
	if f.st.foreign {
		c.log.Warn().Str("path", f.path).Msg("memretrieve: the embedding cache file belongs to another model or dimension; it will be replaced")
	}
	f.off += int64(settled)
}

// found records the vector v of k read from f at offset off.
func (c *vecCache) found(f *cacheFile, k contentKey, v []float32, off int64) {
	if c.dim != 0 && len(v) != c.dim {
		return // written before the dimension changed
	}
	f.keys[k] = struct{}{}
	if c.quantized {
		c.putCode(k, v, diskLoc{file: f.ver, off: off})
		return
	}
	if _, ok := c.vecs[k]; !ok {
		c.vecs[k] = v
	}
}

// forgetStale drops, from a quantised cache, the vectors whose records
// were in an earlier version of f and are not in the version just read
// (another process compacted the file without them), or in any version
// when the file is gone (f.ver nil): they count as missing, and are
// embedded again.
func (c *vecCache) forgetStale(f *cacheFile) {
	for k, e := range c.codes {
		if e.loc.file != nil && e.loc.file != f.ver && e.loc.file.path == f.path {
			delete(c.codes, k)
		}
	}
}

// put adds vectors (unit length, all of c.dim) computed for memories of
// scope, and appends them to that scope's cache file in one write.
func (c *vecCache) put(scope memcore.Scope, keys []contentKey, vecs [][]float32) {
	if !c.quantized {
		for i, k := range keys {
			c.vecs[k] = vecs[i]
		}
	}
	f := c.files[scope]
	var locs []diskLoc
	if f != nil && !f.refused && len(keys) > 0 {
		var err error
		if locs, err = c.appendTo(f, keys, vecs); err != nil {
			c.cannotUse(f, err, "memretrieve: cannot write the embedding cache; the vectors are kept in memory only")
		}
	}
	if c.quantized {
		for i, k := range keys {
			var loc diskLoc
			if locs != nil {
				loc = locs[i]
			}
			c.putCode(k, vecs[i], loc)
		}
	}
}

// appendTo appends the records of keys' vectors to f in one write and
// returns where each record went, or nil locations when that is not known
// (the file's position could not be read).
func (c *vecCache) appendTo(f *cacheFile, keys []contentKey, vecs [][]float32) ([]diskLoc, error) {
	if err := c.prepareDir(f); err != nil {
		return nil, err
	}
	if !f.usable(c.dim) {
		// Foreign, headerless or of another dimension: start it afresh.
		if err := c.rewrite(f, nil); err != nil {
			return nil, err
		}
	}
	fh, err := atomicfile.Open(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, cacheFilePerm)
	if err != nil {
		return nil, err
	}
	info, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	buf := make([]byte, 0, recHeaderLen*(len(keys)+1)+len(keys)*(33+4*c.dim)+64+len(c.model))
	header := info.Size() == 0
	if header {
		buf = appendHeaderRecord(buf, c.model, c.dim)
	}
	var scratch []byte
	at := make([]int, len(keys)) // each record's offset in buf
	for i, k := range keys {
		at[i] = len(buf)
		buf, scratch = appendVectorRecord(buf, scratch, k, vecs[i])
		f.keys[k] = struct{}{}
	}
	// One write call under O_APPEND: concurrent appenders never interleave
	// inside it, and a writer killed part-way leaves a damaged tail that
	// readers skip.
	var locs []diskLoc
	_, err = fh.Write(buf)
	if err == nil {
		locs = c.advancePast(f, fh, info, len(buf), header, len(keys), at)
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return locs, nil
}

// advancePast moves f's read position past the records just written when
// they directly follow what was already read (no other process appended in
// between), so they are not read back, and counts them for compaction.
// Otherwise the next refresh reads them with the others' records. It
// returns where the records went (at: their offsets in the n bytes
// written), or nil when the file's position cannot be read.
func (c *vecCache) advancePast(f *cacheFile, fh *os.File, before fs.FileInfo, n int, header bool, records int, at []int) []diskLoc {
	end, err := fh.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil
	}
	info, err := fh.Stat()
	if err != nil {
		return nil
	}
	start := end - int64(n)
	if f.ver == nil || !os.SameFile(f.ver.info, info) {
		f.ver = &fileVersion{path: f.path, info: info}
	}
	locs := make([]diskLoc, len(at))
	for i, a := range at {
		locs[i] = diskLoc{file: f.ver, off: start + int64(a)}
	}
	switch {
	case header && start == 0:
		// This write created the file's content.
		f.st = decodeState{header: true, dim: c.dim}
	case f.info != nil && os.SameFile(f.info, before) && start == f.off && f.st.header:
	default:
		return locs
	}
	f.info, f.off = info, end
	f.st.records += records
	return locs
}

// prepareDir creates the cache folder and its .gitignore on first use.
func (c *vecCache) prepareDir(f *cacheFile) error {
	if f.gitignored {
		return nil
	}
	if err := checkCacheDir(f.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(f.dir, cacheDirPerm); err != nil {
		return err
	}
	removeStaleTemps(f.dir)
	ign := filepath.Join(f.dir, ".gitignore")
	fh, err := os.OpenFile(ign, os.O_WRONLY|os.O_CREATE|os.O_EXCL, cacheFilePerm)
	switch {
	case errors.Is(err, fs.ErrExist):
	case err != nil:
		return err
	default:
		_, err = fh.WriteString(gitignoreBody)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	f.gitignored = true
	return nil
}

// staleTempAge is how old a temporary file of an interrupted compaction
// must be before it is removed (a younger one may be another process's
// compaction at work).
const staleTempAge = time.Hour

// tempPattern names the temporary files of compactions.
const tempPattern = ".tmp-vectors-*"

// removeStaleTemps deletes temporary files left in dir by compactions that
// were killed. Best effort.
func removeStaleTemps(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, tempPattern))
	for _, name := range names {
		if info, err := os.Lstat(name); err == nil && info.Mode().IsRegular() && time.Since(info.ModTime()) > staleTempAge {
			_ = os.Remove(name)
		}
	}
}

// rewrite replaces f with a file holding a header and the vectors of keep
// (those of its keys that are cached), written under a temporary name,
// synced and renamed over the old one, so readers see the old file or the
// new one, never a mix. Vectors another process appends to the old file
// while this runs are lost; they are only a cache, and count as missing.
func (c *vecCache) rewrite(f *cacheFile, keep map[contentKey]struct{}) error {
	if err := c.prepareDir(f); err != nil {
		return err
	}
	buf := appendHeaderRecord(nil, c.model, c.dim)
	keys := make(map[contentKey]struct{}, len(keep))
	at := make(map[contentKey]int64, len(keep))
	var scratch []byte
	vecs := c.vectorsOf(keep)
	for k := range keep {
		if v, ok := vecs[k]; ok && len(v) == c.dim {
			at[k] = int64(len(buf))
			buf, scratch = appendVectorRecord(buf, scratch, k, v)
			keys[k] = struct{}{}
		}
	}
	tmp, err := atomicfile.Prepare(f.dir, tempPattern, buf, cacheFilePerm)
	if err != nil {
		return err
	}
	defer tmp.Discard()
	if err := tmp.Rename(f.path); err != nil {
		return err
	}
	info, err := os.Lstat(f.path)
	if err != nil {
		f.info = nil
		return err
	}
	f.info, f.off, f.keys = info, int64(len(buf)), keys
	f.st = decodeState{header: true, dim: c.dim, records: len(keys)}
	f.ver = &fileVersion{path: f.path, info: info}
	if c.quantized {
		for k, off := range at {
			if e, ok := c.codes[k]; ok {
				e.loc = diskLoc{file: f.ver, off: off}
				c.codes[k] = e
				delete(c.vecs, k)
			}
		}
		// What was in the old file and could not be read back is missing
		// now, and embedded again.
		c.forgetStale(f)
	}
	return nil
}

// vectorsOf returns the float32 vectors of keys that the cache holds: from
// memory, and, in a quantised cache, read back from their records on disk
// (those that cannot be read are left out).
func (c *vecCache) vectorsOf(keys map[contentKey]struct{}) map[contentKey][]float32 {
	out := make(map[contentKey][]float32, len(keys))
	if !c.quantized {
		for k := range keys {
			if v, ok := c.vecs[k]; ok {
				out[k] = v
			}
		}
		return out
	}
	// Read the records on disk through diskRows of the keys' codes.
	var ks []contentKey
	q := &diskRows{resident: make(map[int][]float32)}
	for k := range keys {
		e, ok := c.codes[k]
		if !ok || len(e.q) != c.dim {
			continue
		}
		r := len(ks)
		ks = append(ks, k)
		q.codes = append(q.codes, e.q...)
		q.scales = append(q.scales, e.scale)
		q.locs = append(q.locs, e.loc)
		if v, ok := c.vecs[k]; ok && e.loc.file == nil {
			q.resident[r] = v
		}
	}
	rows := make([]int, len(ks))
	for i := range rows {
		rows[i] = i
	}
	vecs, _ := q.Floats(rows, c.dim, make([]float32, len(rows)*c.dim))
	for r, v := range vecs {
		out[ks[r]] = v
	}
	return out
}

// retain forgets, in memory, the vectors whose keys are not in live (their
// memories are gone or changed), and compacts each file that mostly holds
// such vectors.
func (c *vecCache) retain(live map[contentKey]struct{}) {
	for k := range c.vecs {
		if _, ok := live[k]; !ok {
			delete(c.vecs, k)
		}
	}
	for k := range c.codes {
		if _, ok := live[k]; !ok {
			delete(c.codes, k)
		}
	}
	for _, f := range c.distinctFiles() {
		if f.info == nil || !f.usable(c.dim) || f.st.records < compactMinRecords {
			continue
		}
		keep := make(map[contentKey]struct{})
		for k := range f.keys {
			if _, ok := live[k]; ok {
				keep[k] = struct{}{}
			}
		}
		if 2*len(keep) >= f.st.records {
			continue
		}
		if emptied(f) {
			c.fileGone(f)
			continue
		}
		if err := c.rewrite(f, keep); err != nil {
			c.log.Warn().Err(err).Str("path", f.path).Msg("memretrieve: cannot compact the embedding cache")
			continue
		}
		c.log.Debug().Str("path", f.path).Int("kept", len(keep)).Msg("memretrieve: compacted the embedding cache")
	}
}

// emptied reports whether f's file is gone: someone emptied the cache
// folder, or is removing it — rm -r of a memory folder, whose deletions a
// long-running engine sees as changes and rebuilds on. A compaction or a
// calibration written into such a folder would make its removal fail on a
// folder no longer empty, so neither is; new vectors still are.
func emptied(f *cacheFile) bool {
	_, err := os.Lstat(f.path)
	return errors.Is(err, fs.ErrNotExist)
}

// reset forgets every vector and sets the dimension to dim: the embedder's
// vectors no longer match the cached ones although its Model is the same.
// The files are replaced when next written to.
func (c *vecCache) reset(dim int) {
	clear(c.vecs)
	clear(c.codes)
	c.dim = dim
}

// setDim records the dimension of the first vectors cached.
func (c *vecCache) setDim(dim int) {
	if c.dim == 0 {
		c.dim = dim
	}
}
