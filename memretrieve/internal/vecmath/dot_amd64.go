//go:build !purego

package vecmath

const asmKernel = "avx2"

// asmSupported reports whether the CPU has AVX2 and FMA and the operating
// system saves the YMM registers on a context switch.
var asmSupported = hasAVX2FMA()

// hasAVX2FMA asks CPUID and XGETBV, as the standard library's internal/cpu
// does: leaf 1 for FMA, AVX and OSXSAVE; XCR0 for the SSE and AVX state
// (bits 1 and 2); leaf 7 for AVX2.
func hasAVX2FMA() bool {
	const (
		ecxFMA     = 1 << 12
		ecxOSXSAVE = 1 << 27
		ecxAVX     = 1 << 28
		ebxAVX2    = 1 << 5
		xcr0SSEAVX = 1<<1 | 1<<2
	)
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	if ecx1&(ecxFMA|ecxOSXSAVE|ecxAVX) != ecxFMA|ecxOSXSAVE|ecxAVX {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&xcr0SSEAVX != xcr0SSEAVX {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&ebxAVX2 != 0
}

func dotAsm(a, b []float32) float32 { return dotAVX2(a, b) }

func dotInt8Asm(a, b []int8) int32 { return dotInt8AVX2(a, b) }

// sumAsm is the stream floor's kernel (BenchmarkStreamFloor).
func sumAsm(x []float32) float32 { return sumAVX2(x) }
