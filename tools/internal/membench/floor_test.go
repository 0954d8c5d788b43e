package membench

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"
	"testing"
	"unsafe"
)

// TestForStripesReadsEveryValueOnce: the stripes are contiguous, do not
// overlap and cover the block, whatever its length, and a block large
// enough is split between all the goroutines.
func TestForStripesReadsEveryValueOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 4095, 4096, 3*4096 + 5, 1536 * 1000} {
		for _, par := range []int{1, 2, 3, 8} {
			block := make([]float32, n)
			var mu sync.Mutex
			seen := make([]int, n)
			stripes := 0
			got := forStripes(block, par, func(x []float32) uint64 {
				mu.Lock()
				defer mu.Unlock()
				stripes++
				if len(x) > 0 {
					off := int(uintptr(unsafe.Pointer(&x[0]))-uintptr(unsafe.Pointer(&block[0]))) / 4
					for i := off; i < off+len(x); i++ {
						seen[i]++
					}
				}
				return uint64(len(x))
			})
			if got != uint64(n) {
				t.Errorf("n=%d par=%d: the stripes hold %d values", n, par, got)
			}
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("n=%d par=%d: value %d read %d times", n, par, i, c)
				}
			}
			if want := max(1, min(par, n/4096)); stripes != want {
				t.Errorf("n=%d par=%d: %d stripes, want %d", n, par, stripes, want)
			}
		}
	}
}

// TestSumWords: the portable floor adds every byte of the stripe as 64-bit
// words (an odd last value as a word of its own).
func TestSumWords(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 31, 32, 33, 4096*2 + 5} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i%1000) - 0.5
		}
		var want uint64
		var pair [8]byte
		for i := 0; i+1 < n; i += 2 {
			binary.NativeEndian.PutUint32(pair[:4], math.Float32bits(x[i]))
			binary.NativeEndian.PutUint32(pair[4:], math.Float32bits(x[i+1]))
			want += binary.NativeEndian.Uint64(pair[:])
		}
		if n%2 == 1 {
			want += uint64(math.Float32bits(x[n-1]))
		}
		if got := sumWords(x); got != want {
			t.Errorf("n=%d: sumWords = %d, want %d", n, got, want)
		}
	}
}

// TestSumAVX: the AVX floor adds every value of the stripe.
func TestSumAVX(t *testing.T) {
	if !haveAVX {
		t.Skipf("no AVX kernel on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	for _, n := range []int{0, 1, 7, 8, 63, 64, 65, 1537} {
		for _, off := range []int{0, 1, 3} {
			x := make([]float32, n+off)[off:]
			var want float32
			for i := range x {
				x[i] = float32(i%7 + 1)
				want += x[i]
			}
			if got := sumAVX(x); got != want {
				t.Errorf("n=%d, offset %d: sumAVX = %v, want %v", n, off, got, want)
			}
		}
	}
}
