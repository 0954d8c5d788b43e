//go:build !amd64 || purego

package membench

// No assembly here: readStripe sums words.
const haveAVX = false

// sumAVX is never called: haveAVX is false.
func sumAVX(x []float32) float32 { panic("membench: no AVX on this platform") }
