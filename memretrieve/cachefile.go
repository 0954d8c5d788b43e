package memretrieve

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"

	"github.com/forgemem/forgemem/memretrieve/internal/index"
)

// The embedding cache file format. A file holds the vectors of one embedder
// model as a sequence of records, appended and never changed in place:
//
//	magic   4 bytes  "FMV1"
//	length  uint32   little-endian, length of payload
//	crc     uint32   little-endian, CRC-32C (Castagnoli) of payload
//	payload length bytes
//
// A payload starts with its kind:
//
//	'H' header: model length uint16, model (UTF-8), dimension uint32
//	'V' vector: sha256 of the embedded text (32 bytes), then dimension
//	    float32 values, little-endian, scaled to unit length
//
// The first valid record of a file is its header; vector records before it,
// vector records of another dimension and records that fail their checksum
// are skipped, and the reader resynchronises on the next magic. A file whose
// header names another model or dimension is foreign: nothing in it is used,
// and it is replaced before anything is appended.
const (
	recMagic     = "FMV1"
	recHeaderLen = 12
	kindHeader   = 'H'
	kindVector   = 'V'
	// maxDim bounds the dimension a header may declare.
	maxDim = 1 << 16
	// maxPayload bounds a record: a vector of maxDim values.
	maxPayload = 1 + 32 + 4*maxDim
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// contentKey is the sha256 of the text embedded for a memory.
type contentKey = [32]byte

// appendRecord appends a framed record holding payload to buf.
func appendRecord(buf, payload []byte) []byte {
	buf = append(buf, recMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(payload)))
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(payload, castagnoli))
	return append(buf, payload...)
}

// appendHeaderRecord appends the header record for model and dim.
func appendHeaderRecord(buf []byte, model string, dim int) []byte {
	p := make([]byte, 0, 1+2+len(model)+4)
	p = append(p, kindHeader)
	p = binary.LittleEndian.AppendUint16(p, uint16(len(model)))
	p = append(p, model...)
	p = binary.LittleEndian.AppendUint32(p, uint32(dim))
	return appendRecord(buf, p)
}

// appendVectorRecord appends the record of one vector. scratch is reused
// for the payload and returned.
func appendVectorRecord(buf, scratch []byte, key contentKey, v []float32) ([]byte, []byte) {
	p := scratch[:0]
	p = append(p, kindVector)
	p = append(p, key[:]...)
	for _, f := range v {
		p = binary.LittleEndian.AppendUint32(p, math.Float32bits(f))
	}
	return appendRecord(buf, p), p
}

// decodeState is what a reader knows about one cache file from the records
// read so far.
type decodeState struct {
	// header: a header record for the expected model has been read.
	header bool
	// foreign: the first header names another model or dimension (or the
	// dimension wanted from the other cache files), so nothing in the file
	// is used.
	foreign bool
	// dim is the dimension of the header.
	dim int
	// records counts the vector records read, duplicates included.
	records int
}

// decodeRecords reads the records in data (bytes of a cache file following
// those already decoded into st) and calls use for every usable vector of
// model. wantDim, when not 0, is the dimension the caller requires; a header
// of another dimension makes the file foreign. It returns how many bytes are
// settled: everything up to the end of the last valid record, so a record
// still being appended by another process, or damage at the end, is read
// again next time. It never fails: damaged bytes are skipped.
//
// The vectors passed to use are owned by the callee; they are carved out of
// a few large allocations rather than one each.
func decodeRecords(data []byte, model string, wantDim int, st *decodeState, use func(contentKey, []float32)) int {
	return decodeRecordsAt(data, model, wantDim, st, false, func(k contentKey, v []float32, _ int) { use(k, v) })
}

// decodeRecordsAt is decodeRecords that also passes use the offset in data
// of each vector's record (its first byte). With scratch set, every vector
// is decoded into the same slice, which use must not keep (a quantised
// cache keeps only each vector's int8 code).
func decodeRecordsAt(data []byte, model string, wantDim int, st *decodeState, scratch bool, use func(contentKey, []float32, int)) int {
	settled, pos := 0, 0
	var arena []float32
	for pos < len(data) {
		start := pos
		payload, n := frameAt(data[pos:])
		if n == 0 {
			pos = resync(data, pos)
			continue
		}
		pos += n
		settled = pos
		if len(payload) == 0 {
			continue
		}
		switch payload[0] {
		case kindHeader:
			decodeHeader(payload, model, wantDim, st)
		case kindVector:
			if !st.header || st.foreign {
				continue
			}
			st.records++
			body := payload[1+32:]
			if len(body) != 4*st.dim {
				continue // a vector of another dimension
			}
			var key contentKey
			copy(key[:], payload[1:33])
			if len(arena) < st.dim {
				// Room for the vectors the rest of data can hold, at most
				// 1024; one when every vector is decoded into the same.
				n := min(1024, max(1, (len(data)-pos)/(4*st.dim)+1))
				if scratch {
					n = 1
				}
				arena = make([]float32, n*st.dim)
			}
			v := arena[:st.dim:st.dim]
			if !scratch {
				arena = arena[st.dim:]
			}
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(body[4*i:]))
			}
			if index.Normalize(v) {
				use(key, v, start)
			}
		}
	}
	return settled
}

// resync returns where the next record may start after a damaged one at
// pos: the next record magic after pos, or len(data) when there is none.
func resync(data []byte, pos int) int {
	if next := bytes.Index(data[pos+1:], []byte(recMagic)); next >= 0 {
		return pos + 1 + next
	}
	return len(data)
}

// frameAt returns the payload of the record at the start of b and the
// record's length, or n == 0 when b does not start with a complete record
// whose checksum matches.
func frameAt(b []byte) (payload []byte, n int) {
	if len(b) < recHeaderLen || string(b[:4]) != recMagic {
		return nil, 0
	}
	l := binary.LittleEndian.Uint32(b[4:8])
	if l > maxPayload || uint64(len(b)-recHeaderLen) < uint64(l) {
		return nil, 0
	}
	p := b[recHeaderLen : recHeaderLen+int(l)]
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(b[8:12]) {
		return nil, 0
	}
	// A vector payload must hold its kind and key; reject shorter ones here
	// so that decodeRecords can slice without checks.
	if len(p) > 0 && p[0] == kindVector && len(p) < 1+32 {
		return nil, 0
	}
	return p, recHeaderLen + int(l)
}

// decodeHeader applies a header payload to st. Only the first header
// decides; later ones (another process may have created the file at the
// same moment and written its own) are ignored.
func decodeHeader(p []byte, model string, wantDim int, st *decodeState) {
	if st.header || st.foreign {
		return
	}
	if len(p) < 1+2 {
		st.foreign = true
		return
	}
	ml := int(binary.LittleEndian.Uint16(p[1:3]))
	if len(p) != 1+2+ml+4 {
		st.foreign = true
		return
	}
	dim := int(binary.LittleEndian.Uint32(p[3+ml:]))
	if string(p[3:3+ml]) != model || dim < 1 || dim > maxDim || (wantDim != 0 && dim != wantDim) {
		st.foreign = true
		return
	}
	st.header, st.dim = true, dim
}
