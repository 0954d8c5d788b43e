package vecmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// A path is one way Dot and DotInt8 can run: the portable code, or the
// assembly kernel when this CPU has it.
type path struct {
	name string
	asm  bool
}

// paths returns the paths this machine can run, and logs them: the portable
// code always, the assembly too when the CPU supports it.
func paths(tb testing.TB) []path {
	tb.Helper()
	ps := []path{{"go", false}}
	if asmSupported {
		ps = append(ps, path{asmKernel, true})
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.name
	}
	tb.Logf("paths under test on %s/%s: %v", runtime.GOOS, runtime.GOARCH, names)
	return ps
}

// use switches Dot and DotInt8 to path p until the test ends.
func (p path) use(tb testing.TB) {
	old := useAsm
	useAsm = p.asm
	tb.Cleanup(func() { useAsm = old })
}

// dot and dotInt8 run the exported functions on path p.
func (p path) dot(a, b []float32) float32 {
	defer func(old bool) { useAsm = old }(useAsm)
	useAsm = p.asm
	return Dot(a, b)
}

func (p path) dotInt8(a, b []int8) int32 {
	defer func(old bool) { useAsm = old }(useAsm)
	useAsm = p.asm
	return DotInt8(a, b)
}

func TestKernel(t *testing.T) {
	t.Logf("Kernel() = %q (assembly supported: %v)", Kernel(), asmSupported)
	want := "go"
	if asmSupported {
		want = asmKernel
	}
	if got := Kernel(); got != want {
		t.Errorf("Kernel() = %q, want %q", got, want)
	}
	path{"go", false}.use(t)
	if got := Kernel(); got != "go" {
		t.Errorf("with the assembly switched off, Kernel() = %q, want \"go\"", got)
	}
}

func TestDotTable(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	ramp := func(n int, f func(i int) float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	ones := func(n int) []float32 { return ramp(n, func(int) float32 { return 1 }) }
	cases := []struct {
		name string
		a, b []float32
		want float32 // exact in every summation order
	}{
		{"empty", nil, nil, 0},
		{"one", []float32{3}, []float32{-2}, -6},
		{"seven", ramp(7, func(i int) float32 { return float32(i) }), ones(7), 21},
		{"eight", ramp(8, func(i int) float32 { return float32(i + 1) }), ramp(8, func(i int) float32 { return float32(i + 1) }), 204},
		{"thirty-three", ones(33), ramp(33, func(i int) float32 { return float32(i % 3) }), 33},
		{"1536 alternating signs", ramp(1536, func(i int) float32 { return float32(1 - 2*(i%2)) }), ones(1536), 0},
		{"1537 quarters", ramp(1537, func(int) float32 { return 0.25 }), ramp(1537, func(int) float32 { return 4 }), 1537},
		{"powers of two", []float32{0x1p-20, 0x1p20, 0x1p-10, 0x1p10, 1}, []float32{0x1p20, 0x1p-20, 0x1p10, 0x1p-10, 1}, 5},
		{"tiny times huge", []float32{0x1p-140, 0x1p-149}, []float32{0x1p100, 0x1p120}, 0x1p-40 + 0x1p-29},
		{"subnormal result", []float32{0x1p-75, 0x1p-75}, []float32{0x1p-70, 0x1p-70}, 0x1p-144},
		{"negative zeros", []float32{negZero, negZero, 1}, []float32{1, negZero, negZero}, 0},
		{"products that cancel", []float32{0x1p10, 3, -0x1p10}, []float32{0x1p10, 1, 0x1p10}, 3},
	}
	for _, p := range paths(t) {
		for _, c := range cases {
			if got := p.dot(c.a, c.b); got != c.want || math.Signbit(float64(got)) != math.Signbit(float64(c.want)) {
				t.Errorf("%s: %s: Dot = %v, want %v", p.name, c.name, got, c.want)
			}
		}
		// A sum of negative zeros is +0 on every path: the accumulators
		// start at +0, and +0 + -0 = +0.
		if got := p.dot([]float32{negZero, negZero}, []float32{1, 1}); math.Signbit(float64(got)) {
			t.Errorf("%s: Dot of negative zero products = %v, want +0", p.name, got)
		}
		for _, c := range []struct {
			name string
			a, b []float32
			want float64
		}{
			{"NaN", []float32{1, nan, 2}, []float32{1, 1, 1}, math.NaN()},
			{"infinity times zero", []float32{inf, 1}, []float32{0, 1}, math.NaN()},
			{"opposite infinities", append(ones(40), inf, -inf), append(ones(40), 1, 1), math.NaN()},
			{"infinity", append(ones(40), inf), append(ones(40), 2), math.Inf(1)},
			{"overflow", []float32{math.MaxFloat32, math.MaxFloat32}, []float32{1, 1}, math.Inf(1)},
		} {
			got := float64(p.dot(c.a, c.b))
			if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) {
				t.Errorf("%s: %s: Dot = %v, want %v", p.name, c.name, got, c.want)
			}
		}
	}
}

func TestDotInt8Table(t *testing.T) {
	fill := func(n int, v int8) []int8 {
		s := make([]int8, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	ramp := make([]int8, 256)
	for i := range ramp {
		ramp[i] = int8(i - 128)
	}
	cases := []struct {
		name string
		a, b []int8
		want int32
	}{
		{"empty", nil, nil, 0},
		{"one", []int8{-3}, []int8{7}, -21},
		{"extremes", []int8{-128, -128, 127, -128}, []int8{-128, 127, 127, -128}, 16384 - 16256 + 16129 + 16384},
		{"fifteen", fill(15, -128), fill(15, -128), 15 * 16384},
		{"sixty-five", fill(65, 127), fill(65, -128), 65 * -16256},
		{"ramp squared", ramp, ramp, 1398144}, // Σ_{x=-128}^{127} x²
		{"1536 maxima", fill(1536, -128), fill(1536, -128), 1536 * 16384},
		{"the longest exact", fill(MaxExactInt8Len, -128), fill(MaxExactInt8Len, -128), MaxExactInt8Len * 16384},
		{"one longer wraps", fill(MaxExactInt8Len+1, -128), fill(MaxExactInt8Len+1, -128), math.MinInt32},
	}
	for _, p := range paths(t) {
		for _, c := range cases {
			if got := p.dotInt8(c.a, c.b); got != c.want {
				t.Errorf("%s: %s: DotInt8 = %d, want %d", p.name, c.name, got, c.want)
			}
		}
	}
	// The wrapped result is the exact value modulo 2³² on every path.
	n := 3*MaxExactInt8Len + 17
	a, b := fill(n, -128), fill(n, -128)
	a[5], b[n-1] = 127, 3
	var exact int64
	for i := range a {
		exact += int64(a[i]) * int64(b[i])
	}
	for _, p := range paths(t) {
		if got := p.dotInt8(a, b); got != int32(exact) {
			t.Errorf("%s: DotInt8 of %d values = %d, want %d (%d modulo 2³²)", p.name, n, got, int32(exact), exact)
		}
	}
}

func TestDotPanicsOnDifferentLengths(t *testing.T) {
	for _, p := range paths(t) {
		p.use(t)
		for name, f := range map[string]func(){
			"Dot":     func() { Dot(make([]float32, 8), make([]float32, 9)) },
			"DotInt8": func() { DotInt8(make([]int8, 17), make([]int8, 16)) },
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: %s of different lengths did not panic", p.name, name)
					}
				}()
				f()
			}()
		}
	}
}

// testLengths are the lengths every kernel is checked on: around each
// vector width and unrolled block, and around 1,536, the embeddings' size.
var testLengths = []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 95, 127, 128, 129, 255, 1023, 1535, 1536, 1537, 1551, 4099}

// TestDotMatchesPortable holds every path to the portable result and to
// the exact value, for every kind of values, length and misalignment.
func TestDotMatchesPortable(t *testing.T) {
	ps := paths(t)
	for kind := range numKinds {
		for _, n := range testLengths {
			for _, off := range [][2]int{{0, 0}, {1, 0}, {0, 3}, {5, 7}} {
				seed := uint64(kind)<<32 | uint64(n)<<8 | uint64(off[0]<<4|off[1])
				a, b := genPair(seed, kind, n, off[0], off[1])
				checkDot(t, ps, a, b)
			}
		}
	}
}

func TestDotInt8MatchesPortable(t *testing.T) {
	ps := paths(t)
	r := rand.New(rand.NewPCG(8, 8))
	for _, n := range append(testLengths, 4096+63, 100_000) {
		for _, off := range [][2]int{{0, 0}, {1, 0}, {0, 3}, {7, 13}} {
			a, b := make([]int8, n+off[0])[off[0]:], make([]int8, n+off[1])[off[1]:]
			for i := range a {
				a[i], b[i] = int8(r.Uint32()), int8(r.Uint32())
			}
			checkDotInt8(t, ps, a, b)
		}
	}
}

// numKinds is the number of kinds of values genPair makes.
const numKinds = 8

// genPair returns two vectors of length n, sub-slices starting offA and
// offB values into their arrays (so not aligned to a vector register),
// filled with values of the given kind:
//
//	0: uniform in [-1, 1]
//	1: a random unit vector and a random direction, like the embeddings
//	2: magnitudes from 2⁻⁴⁰ to 2⁴⁰, either sign
//	3: tiny a (down to subnormal), b in [-1, 1]: subnormal products
//	4: ±1, +0 and -0, with many negative zeros
//	5: small integers: every order of summation is exact while n < 1,600
//	6: large values that mostly cancel
//	7: any finite float32, mostly far too large or too small
func genPair(seed uint64, kind, n, offA, offB int) (a, b []float32) {
	r := rand.New(rand.NewPCG(seed, uint64(kind)))
	a = make([]float32, n+offA)[offA:]
	b = make([]float32, n+offB)[offB:]
	sign := func() float32 { return float32(1 - 2*int(r.Uint32()&1)) }
	for i := range n {
		switch kind {
		case 0:
			a[i], b[i] = float32(r.Float64()*2-1), float32(r.Float64()*2-1)
		case 1:
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		case 2:
			a[i] = sign() * float32(math.Ldexp(1+r.Float64(), r.IntN(81)-40))
			b[i] = sign() * float32(math.Ldexp(1+r.Float64(), r.IntN(81)-40))
		case 3:
			a[i] = sign() * float32(math.Ldexp(1+r.Float64(), -149+r.IntN(30)))
			b[i] = float32(r.Float64()*2 - 1)
		case 4:
			vals := []float32{1, -1, 0, float32(math.Copysign(0, -1))}
			a[i], b[i] = vals[r.IntN(4)], vals[r.IntN(4)]
		case 5:
			a[i], b[i] = float32(r.IntN(201)-100), float32(r.IntN(201)-100)
		case 6:
			a[i], b[i] = sign()*float32(1e6+r.Float64()), float32(1e6*(1+r.Float64()))
			if i%2 == 1 {
				a[i], b[i] = -a[i-1], b[i-1]*float32(1+r.Float64()*1e-6)
			}
		case 7:
			for a[i] = float32(math.NaN()); math.IsNaN(float64(a[i])) || math.IsInf(float64(a[i]), 0); {
				a[i] = math.Float32frombits(r.Uint32())
			}
			for b[i] = float32(math.NaN()); math.IsNaN(float64(b[i])) || math.IsInf(float64(b[i]), 0); {
				b[i] = math.Float32frombits(r.Uint32())
			}
		}
	}
	if kind == 1 {
		normalize(a)
	}
	return a, b
}

func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s > 0 {
		inv := 1 / math.Sqrt(s)
		for i, x := range v {
			v[i] = float32(float64(x) * inv)
		}
	}
}

// The error bound. Each kernel adds the n products in some order: in
// lanes, in accumulators, then across them. Whatever the order, when no
// product goes through more than d roundings (its own, unless fused, and
// the additions after it), the computed sum ŝ and the exact one s satisfy
//
//	|ŝ - s| ≤ γ_d · Σ|aᵢbᵢ|,  γ_d = d·u / (1 - d·u),  u = 2⁻²⁴
//
// (Higham, Accuracy and Stability of Numerical Algorithms, §3.1), plus, in
// the subnormal range, at most 2⁻¹⁵⁰ for each of the at most 2n+16
// roundings. The portable loop's products go through at most n/8 + 11
// roundings (one lane of eight, the tail of up to seven added to lane 0,
// three levels of the final sum); the AVX2 kernel keeps 64 lanes and goes
// through at most n/64 + 14, the NEON one 32 lanes and n/32 + 15. So
// d = n/8 + 16 bounds every kernel's distance from the exact sum, and twice
// that any two kernels' distance from each other. The bound is relative to Σ|aᵢbᵢ|, not to |s|: when the
// products cancel, the result's relative error can be large on every path.
func dotBound(n int, absSum float64) float64 {
	const u = 0x1p-24
	d := float64(n/8 + 16)
	return d*u/(1-d*u)*absSum + float64(2*n+16)*0x1p-150
}

// exactDot returns Σaᵢbᵢ and Σ|aᵢbᵢ| in float64 (a product of two float32
// is exact in float64; the sums' own error, below n·2⁻⁵³ of Σ|aᵢbᵢ|, is
// accounted for in checkDot), and what every path must return when the
// result is not decided by the error bound: NaN when a product is NaN (an
// input is NaN, or infinity times zero) or infinite products of both signs
// meet; that infinity when the only infinite products have one sign and
// the finite ones are too small to overflow. special is false when the
// bound decides.
func exactDot(a, b []float32) (sum, absSum float64, want float32, special bool) {
	var posInf, negInf, nan bool
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		switch {
		case math.IsNaN(p):
			nan = true
		case math.IsInf(p, 1):
			posInf = true
		case math.IsInf(p, -1):
			negInf = true
		default:
			sum += p
			absSum += math.Abs(p)
		}
	}
	switch {
	case nan || posInf && negInf:
		return sum, absSum, float32(math.NaN()), true
	case posInf:
		return sum, absSum, float32(math.Inf(1)), true
	case negInf:
		return sum, absSum, float32(math.Inf(-1)), true
	}
	return sum, absSum, 0, false
}

// noOverflow is the largest Σ|aᵢbᵢ| for which no order of summation can
// overflow float32: every partial sum stays below it times (1 + γ_d).
const noOverflow = math.MaxFloat32 / 2

// checkDot compares Dot on every path with the portable result and the
// exact one.
func checkDot(t *testing.T, ps []path, a, b []float32) {
	t.Helper()
	sum, absSum, want, special := exactDot(a, b)
	goRes := dotGo(a, b)
	n := len(a)
	for _, p := range ps {
		got := p.dot(a, b)
		switch {
		case special && absSum <= noOverflow:
			if !(got == want || math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
				t.Fatalf("%s: n=%d: Dot = %v, want %v", p.name, n, got, want)
			}
		case special || absSum > noOverflow:
			// Overflow in some orders of summation and not others: the
			// paths may disagree, and nothing is asserted.
		default:
			bound := dotBound(n, absSum) + float64(n)*0x1p-52*absSum
			if d := math.Abs(float64(got) - sum); !(d <= bound) {
				t.Fatalf("%s: n=%d: Dot = %v, exact %v: off by %.3g, more than the bound %.3g (Σ|ab| = %.3g)", p.name, n, got, sum, d, bound, absSum)
			}
			if d := math.Abs(float64(got) - float64(goRes)); !(d <= 2*bound) {
				t.Fatalf("%s: n=%d: Dot = %v, the portable code %v: off by %.3g, more than twice the bound %.3g", p.name, n, got, goRes, d, bound)
			}
		}
	}
}

// checkDotInt8 compares DotInt8 on every path with the portable result and
// the exact one, bit for bit.
func checkDotInt8(t *testing.T, ps []path, a, b []int8) {
	t.Helper()
	var exact int64
	for i := range a {
		exact += int64(a[i]) * int64(b[i])
	}
	if len(a) <= MaxExactInt8Len && (exact < math.MinInt32 || exact > math.MaxInt32) {
		t.Fatalf("n=%d: exact dot product %d overflows int32 below MaxExactInt8Len", len(a), exact)
	}
	goRes := dotInt8Go(a, b)
	if goRes != int32(exact) {
		t.Fatalf("n=%d: portable DotInt8 = %d, want %d", len(a), goRes, int32(exact))
	}
	for _, p := range ps {
		if got := p.dotInt8(a, b); got != goRes {
			t.Fatalf("%s: n=%d: DotInt8 = %d, the portable code %d", p.name, len(a), got, goRes)
		}
	}
}

// TestKernelsLeaveInputsAlone: the kernels read their arguments and nothing
// around them. Each vector sits between guard values that would change the
// result if they were read, and the inputs are unchanged afterwards.
func TestKernelsLeaveInputsAlone(t *testing.T) {
	for _, p := range paths(t) {
		for _, n := range testLengths {
			fa := make([]float32, n+64)
			fb := make([]float32, n+64)
			ia := make([]int8, n+64)
			ib := make([]int8, n+64)
			for i := range fa {
				fa[i], fb[i], ia[i], ib[i] = 1e30, 1e30, 127, 127
			}
			a, b := fa[32:32+n:32+n], fb[32:32+n:32+n]
			x, y := ia[32:32+n:32+n], ib[32:32+n:32+n]
			for i := range a {
				a[i], b[i], x[i], y[i] = 1, float32(i%5), 1, int8(i%5)
			}
			wantF, wantI := dotGo(a, b), dotInt8Go(x, y)
			snap := slices.Clone(fa)
			if got := p.dot(a, b); got != wantF {
				t.Errorf("%s: n=%d: Dot = %v, want %v", p.name, n, got, wantF)
			}
			if got := p.dotInt8(x, y); got != wantI {
				t.Errorf("%s: n=%d: DotInt8 = %v, want %v", p.name, n, got, wantI)
			}
			if !slices.Equal(fa, snap) {
				t.Errorf("%s: n=%d: Dot changed its input", p.name, n)
			}
		}
	}
}

func ExampleDot() {
	a := []float32{0.6, 0.8, 0}
	b := []float32{0.8, 0.6, 0}
	fmt.Printf("%.2f\n", Dot(a, b))
	// Output: 0.96
}

func ExampleDotInt8() {
	a := []int8{-128, 127, 3}
	b := []int8{-128, 2, -1}
	fmt.Println(DotInt8(a, b))
	// Output: 16635
}
