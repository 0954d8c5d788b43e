//go:build !purego

package vecmath

// Advanced SIMD (NEON) is part of every arm64 CPU Go runs on: the runtime
// itself uses it unconditionally.
const (
	asmKernel    = "neon"
	asmSupported = true
)

// dotNEON returns the dot product of a and b with NEON.
// b must be at least as long as a.
//
//go:noescape
func dotNEON(a, b []float32) float32

// dotInt8NEON returns the dot product of a and b with NEON, modulo 2³².
// b must be at least as long as a.
//
//go:noescape
func dotInt8NEON(a, b []int8) int32

// sumNEON returns the sum of x, reading it with NEON loads.
//
//go:noescape
func sumNEON(x []float32) float32

func dotAsm(a, b []float32) float32 { return dotNEON(a, b) }

func dotInt8Asm(a, b []int8) int32 { return dotInt8NEON(a, b) }

// sumAsm is the stream floor's kernel (BenchmarkStreamFloor).
func sumAsm(x []float32) float32 { return sumNEON(x) }
