//go:build !purego

package membench

import "golang.org/x/sys/cpu"

// haveAVX reports whether sumAVX can run: the CPU has AVX and the operating
// system saves the YMM registers.
var haveAVX = cpu.X86.HasAVX
