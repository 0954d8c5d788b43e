package vecmath

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzDot holds every path to the portable result and the exact value
// (within the error bound, see dotBound) on generated vectors: kind picks
// the values (see genPair), n the length, offA and offB how far into their
// arrays the vectors start.
func FuzzDot(f *testing.F) {
	for kind := range numKinds {
		for _, n := range []int{0, 1, 7, 15, 31, 33, 1535, 1536, 1537} {
			f.Add(uint64(n*31+kind), uint8(kind), uint16(n), uint8(kind%3), uint8(n%5))
		}
	}
	ps := paths(f)
	f.Fuzz(func(t *testing.T, seed uint64, kind uint8, n uint16, offA, offB uint8) {
		a, b := genPair(seed, int(kind)%numKinds, int(n)%5000, int(offA%16), int(offB%16))
		checkDot(t, ps, a, b)
	})
}

// FuzzDotBits is FuzzDot on raw bit patterns: any float32 at all, NaNs,
// infinities, negative zero and subnormals included. The first byte is how
// far into its array each vector starts; the rest is split between a and b.
func FuzzDotBits(f *testing.F) {
	put := func(vals ...float32) []byte {
		buf := []byte{0x31}
		for _, v := range vals {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
		return buf
	}
	negZero := float32(math.Copysign(0, -1))
	f.Add(put())
	f.Add(put(1, 2))
	f.Add(put(negZero, negZero, 1, negZero))
	f.Add(put(float32(math.NaN()), 1, 1, 1))
	f.Add(put(float32(math.Inf(1)), 0, 1, 1))
	f.Add(put(0x1p-149, 0x1p-149, 0x1p-126, 0x1p-20, 1, 0x1p100, 0x1p-120, 3))
	long := make([]float32, 2*1537)
	for i := range long {
		long[i] = float32(i%97) * 0.01
	}
	f.Add(put(long...))
	ps := paths(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		offA, offB := int(data[0]&7), int(data[0]>>3&7)
		data = data[1:]
		n := len(data) / 8
		a, b := make([]float32, n+offA)[offA:], make([]float32, n+offB)[offB:]
		for i := range n {
			a[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			b[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*(n+i):]))
		}
		checkDot(t, ps, a, b)
	})
}

// FuzzDotInt8 holds every path to the portable result, bit for bit: the
// first byte is how far into its array each vector starts, the rest is
// split between a and b.
func FuzzDotInt8(f *testing.F) {
	for _, n := range []int{0, 1, 7, 15, 16, 17, 31, 33, 63, 64, 65, 1535, 1536, 1537} {
		data := make([]byte, 1+2*n)
		data[0] = byte(n)
		for i := range data[1:] {
			data[1+i] = byte(i*37 + n)
		}
		f.Add(data)
	}
	extremes := make([]byte, 1+2*1537)
	for i := range extremes {
		extremes[i] = 0x80 // -128
	}
	f.Add(extremes)
	ps := paths(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		offA, offB := int(data[0]&15), int(data[0]>>4)
		data = data[1:]
		n := len(data) / 2
		a, b := make([]int8, n+offA)[offA:], make([]int8, n+offB)[offB:]
		for i := range n {
			a[i], b[i] = int8(data[i]), int8(data[n+i])
		}
		checkDotInt8(t, ps, a, b)
	})
}
