package index

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkQuantized checks the code and scale quantize gives v: every code in
// −127…127, every value within half a step of code·scale (and a little for
// rounding), the largest magnitude coded as ±127, and matchesCode true.
func checkQuantized(t *testing.T, v []float32) {
	t.Helper()
	code := make([]int8, len(v))
	scale := Quantize(v, code)
	var m float32
	for _, f := range v {
		m = max(m, abs32(f))
	}
	if m == 0 {
		if scale != 0 || slices.ContainsFunc(code, func(c int8) bool { return c != 0 }) {
			t.Fatalf("zero vector: scale %v, code %v; want 0 and zeros", scale, code)
		}
		return
	}
	if want := float32(float64(m) / 127); scale != want {
		t.Fatalf("scale %v, want the largest magnitude over 127, %v", scale, want)
	}
	big := false
	for i, f := range v {
		c := code[i]
		if c < -127 {
			t.Fatalf("code %d is -128: the quantisation is symmetric", i)
		}
		// Half a step, and the rounding of a subnormal scale.
		if d := math.Abs(float64(f) - float64(c)*float64(scale)); d > float64(scale)*0.5001+127*0x1p-149 {
			t.Fatalf("value %d = %v coded %d·%v: off by %v, more than half a step", i, f, c, scale, d)
		}
		big = big || c == 127 || c == -127
	}
	if !big {
		t.Fatalf("no value coded ±127 in %v", code)
	}
	if !MatchesCode(v, code, scale) {
		t.Fatalf("matchesCode rejects the vector its code was made from")
	}
}

func TestQuantize(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, v := range [][]float32{
		{}, {0, 0, 0}, {1}, {-1}, {0.5, -0.5}, {3, -1, 0.25, 1e-9},
		{1e-38, -3e-39, 2e-38}, // subnormal scales
		{math.MaxFloat32, -math.MaxFloat32 / 3},
		randomUnit(r, 1536), randomUnit(r, 7),
	} {
		checkQuantized(t, v)
	}
	// Another vector does not match the code.
	a, b := randomUnit(r, 64), randomUnit(r, 64)
	code := make([]int8, 64)
	scale := Quantize(a, code)
	if MatchesCode(b, code, scale) {
		t.Errorf("matchesCode accepts an unrelated vector")
	}
	if MatchesCode(a[:63], code, scale) {
		t.Errorf("matchesCode accepts a vector of another length")
	}
}

func FuzzQuantize(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 191}, uint8(0))
	f.Add([]byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, _ uint8) {
		v := make([]float32, len(data)/4)
		for i := range v {
			x := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return // index vectors are finite (normalize refuses others)
			}
			v[i] = x
		}
		checkQuantized(t, v)
	})
}
