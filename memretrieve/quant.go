package memretrieve

import (
	"encoding/binary"
	"io/fs"
	"math"
	"os"

	"github.com/forgemem/forgemem/memcore/atomicfile"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
	"github.com/forgemem/forgemem/memretrieve/internal/vecmath"
)

// The engine's quantised index (Config.Quantized) is an index.Flat with
// int8 rows whose float32 vectors, for the re-rank of the best
// candidates, come from the on-disk embedding cache when there is one:
// each row remembers where its record is, and a search reads only its
// candidates' records. Vectors with no copy on disk (no cache folder, or a
// record that could not be written) are kept in memory.

// diskRows is the index.Source of a quantised engine index: where each
// row's float32 vector is, with the rows' int8 codes and scales to check
// what is read back against.
type diskRows struct {
	codes  []int8    // row i is codes[i*dim:(i+1)*dim], shared with the index
	scales []float32 // of each row
	// locs says where each row's vector is on disk; a row without a copy
	// on disk (its cache file could not be written) has a nil file and its
	// vector in resident.
	locs     []diskLoc
	resident map[int][]float32
}

// diskLoc is where a vector record is in a cache file: file, which
// identifies the file as it was when the record was read or written, and
// the offset of the record's first byte (its magic).
type diskLoc struct {
	file *fileVersion
	off  int64
}

// fileVersion is one cache file as a reader saw it: its path and its
// identity then. A file replaced since (compacted, rewritten by another
// process) is another version, and locations into the old one are stale.
type fileVersion struct {
	path string
	info fs.FileInfo
}

// Floats implements index.Source: the vectors of rows, from memory or read
// from the cache files, each file opened once. A row whose record cannot be
// read back — the file was replaced since, or its bytes are not the vector
// the row's code was made from — is left out, and degraded is true.
func (q *diskRows) Floats(rows []int, dim int, scratch []float32) (vecs map[int][]float32, degraded bool) {
	vecs = make(map[int][]float32, len(rows))
	byFile := make(map[*fileVersion][]int)
	pos := make(map[int]int, len(rows)) // each row's place in scratch
	for i, r := range rows {
		pos[r] = i
		if l := q.locs[r]; l.file != nil {
			byFile[l.file] = append(byFile[l.file], r)
		} else if v, ok := q.resident[r]; ok {
			vecs[r] = v
		} else {
			degraded = true
		}
	}
	for fv, rs := range byFile {
		if !q.readRows(fv, rs, dim, vecs, scratch, pos) {
			degraded = true
		}
	}
	return vecs, degraded
}

// readRows reads the vectors of rows from the cache file fv into vecs, each
// at its place pos[row] in scratch, and reports whether every one of them
// was read.
func (q *diskRows) readRows(fv *fileVersion, rows []int, dim int, vecs map[int][]float32, scratch []float32, pos map[int]int) bool {
	// Never through a link, never waiting on a FIFO put in the file's
	// place (atomicfile.Open): the search is degraded instead.
	fh, err := atomicfile.Open(fv.path, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer fh.Close()
	if info, err := fh.Stat(); err != nil || !os.SameFile(info, fv.info) {
		return false
	}
	recLen := recHeaderLen + 1 + 32 + 4*dim
	buf := make([]byte, recLen)
	all := true
	for _, r := range rows {
		i := pos[r]
		v := scratch[i*dim : (i+1)*dim : (i+1)*dim]
		if q.readRow(fh, q.locs[r].off, buf, v, r) {
			vecs[r] = v
		} else {
			all = false
		}
	}
	return all
}

// readRow reads the record at off of fh, using buf (one record long), into
// v, and reports whether it holds the vector of row r: a vector record of
// the right length, of unit length, whose values its code was made from.
func (q *diskRows) readRow(fh *os.File, off int64, buf []byte, v []float32, r int) bool {
	if _, err := fh.ReadAt(buf, off); err != nil {
		return false
	}
	payload, n := frameAt(buf)
	if n != len(buf) || payload[0] != kindVector {
		return false
	}
	body := payload[1+32:]
	for j := range v {
		v[j] = math.Float32frombits(binary.LittleEndian.Uint32(body[4*j:]))
	}
	dim := len(v)
	// Records are written at unit length, which Normalize keeps as it is:
	// a quick check with the SIMD kernel spares its float64 pass.
	if n := vecmath.Dot(v, v); (n < 1-index.UnitTolerance/2 || n > 1+index.UnitTolerance/2) && !index.Normalize(v) {
		return false
	}
	return index.MatchesCode(v, q.codes[r*dim:(r+1)*dim], q.scales[r])
}
