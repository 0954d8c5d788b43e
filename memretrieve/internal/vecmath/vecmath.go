package vecmath

//go:generate go run -C ../../../tools ./internal/asmgen

// MaxExactInt8Len is the longest pair of vectors whose int8 dot product
// cannot overflow an int32: every product is at most 128·128 = 2¹⁴ in
// magnitude, and 131071·2¹⁴ < 2³¹ ≤ 131072·2¹⁴. Up to this length
// [DotInt8] returns the exact dot product; beyond it, the exact value
// wrapped modulo 2³², the same on every path.
const MaxExactInt8Len = 1<<17 - 1

// Dot returns the dot product of a and b, which must have the same length
// (Dot panics otherwise). It uses the fastest kernel the CPU supports (see
// [Kernel]); the kernels add the products in different orders, so their
// results may differ in the last bits, within the bound the package
// documentation gives.
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		panic("vecmath: Dot of vectors of different lengths")
	}
	if useAsm {
		return dotAsm(a, b)
	}
	return dotGo(a, b)
}

// DotInt8 returns the dot product of a and b, which must have the same
// length (DotInt8 panics otherwise). The result is exact for vectors of up
// to [MaxExactInt8Len] values; for longer ones it is the exact value wrapped
// modulo 2³², as Go's int32 arithmetic wraps. Every kernel returns the same
// result bit for bit.
func DotInt8(a, b []int8) int32 {
	if len(a) != len(b) {
		panic("vecmath: DotInt8 of vectors of different lengths")
	}
	if useAsm {
		return dotInt8Asm(a, b)
	}
	return dotInt8Go(a, b)
}

// Kernel names the implementation [Dot] and [DotInt8] use on this machine:
// "avx2" (amd64 with AVX2 and FMA), "neon" (arm64), or "go" (the portable
// code: any other platform or CPU, and every build with the purego tag).
func Kernel() string {
	if useAsm {
		return asmKernel
	}
	return "go"
}

// useAsm selects the assembly kernels. It is set once, at initialisation,
// to asmSupported; tests turn it off to run the portable code.
var useAsm = asmSupported

// dotGo is the portable float32 dot product of a and b[:len(a)]. Eight
// independent accumulators keep the floating-point units busy, and the loop
// is written so that the compiler proves every index in bounds (no bounds
// checks in the loop body).
func dotGo(a, b []float32) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 8 && len(b) >= 8 {
		x := a[:8:8]
		y := b[:8:8]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		s4 += x[4] * y[4]
		s5 += x[5] * y[5]
		s6 += x[6] * y[6]
		s7 += x[7] * y[7]
		a, b = a[8:], b[8:]
	}
	for i := range min(len(a), len(b)) {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// dotInt8Go is the portable int8 dot product of a and b[:len(a)], in int32
// arithmetic that wraps on overflow, with four accumulators.
func dotInt8Go(a, b []int8) int32 {
	var s0, s1, s2, s3 int32
	for len(a) >= 4 && len(b) >= 4 {
		x := a[:4:4]
		y := b[:4:4]
		s0 += int32(x[0]) * int32(y[0])
		s1 += int32(x[1]) * int32(y[1])
		s2 += int32(x[2]) * int32(y[2])
		s3 += int32(x[3]) * int32(y[3])
		a, b = a[4:], b[4:]
	}
	for i := range min(len(a), len(b)) {
		s0 += int32(a[i]) * int32(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}
