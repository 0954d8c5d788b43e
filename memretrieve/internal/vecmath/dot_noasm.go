//go:build (!amd64 && !arm64) || purego

package vecmath

// No assembly on this platform or with the purego tag: the portable code.

const (
	asmKernel    = "go"
	asmSupported = false
)

func dotAsm(a, b []float32) float32 { return dotGo(a, b) }

func dotInt8Asm(a, b []int8) int32 { return dotInt8Go(a, b) }

// sumAsm is never called: asmSupported is false.
func sumAsm(x []float32) float32 { panic("vecmath: no assembly on this platform") }
