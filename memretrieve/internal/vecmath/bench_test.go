package vecmath

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// The benchmarks' sizes: vectors of 1,536 dimensions (OpenAI's embeddings),
// alone (in cache) and as a block of 10,000 (60 MB of float32, 15 MB of
// int8: out of cache).
const (
	benchDim  = 1536
	benchRows = 10_000
)

// naiveDot is the plain loop a reader would write first: one accumulator,
// so every addition waits for the one before.
func naiveDot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// A benchKernel is one float32 dot product the benchmarks compare.
type benchKernel struct {
	name string
	dot  func(a, b []float32) float32
}

// benchKernels are the assembly kernel (when the CPU has it), the portable
// loop and the naive one.
func benchKernels() []benchKernel {
	ks := []benchKernel{}
	if asmSupported {
		ks = append(ks, benchKernel{asmKernel, dotAsm})
	}
	return append(ks, benchKernel{"go", dotGo}, benchKernel{"naive", naiveDot})
}

func benchInt8Kernels() []struct {
	name string
	dot  func(a, b []int8) int32
} {
	ks := []struct {
		name string
		dot  func(a, b []int8) int32
	}{}
	if asmSupported {
		ks = append(ks, struct {
			name string
			dot  func(a, b []int8) int32
		}{asmKernel, dotInt8Asm})
	}
	return append(ks, struct {
		name string
		dot  func(a, b []int8) int32
	}{"go", dotInt8Go})
}

var benchBlocks struct {
	once sync.Once
	f32  []float32
	i8   []int8
	q32  []float32
	q8   []int8
}

// benchBlock returns the block of benchRows random unit vectors of benchDim
// float32, the same block quantised to int8, and a query of each kind.
func benchBlock() (block []float32, block8 []int8, q []float32, q8 []int8) {
	b := &benchBlocks
	b.once.Do(func() {
		r := rand.New(rand.NewPCG(1, 2))
		b.f32 = make([]float32, benchRows*benchDim)
		b.i8 = make([]int8, benchRows*benchDim)
		for i := range b.f32 {
			b.f32[i] = float32(r.NormFloat64())
		}
		for row := range benchRows {
			normalize(b.f32[row*benchDim : (row+1)*benchDim])
		}
		for i, v := range b.f32 {
			b.i8[i] = int8(max(-127, min(127, v*127*16)))
		}
		b.q32 = make([]float32, benchDim)
		b.q8 = make([]int8, benchDim)
		for i := range b.q32 {
			b.q32[i] = float32(r.NormFloat64())
		}
		normalize(b.q32)
		for i, v := range b.q32 {
			b.q8[i] = int8(max(-127, min(127, v*127*16)))
		}
	})
	return b.f32, b.i8, b.q32, b.q8
}

var (
	sinkF float32
	sinkI int32
)

// BenchmarkDot is one dot product of two vectors of 1,536 float32 in
// cache; the bytes are both vectors'.
func BenchmarkDot(b *testing.B) {
	block, _, q, _ := benchBlock()
	row := block[:benchDim]
	for _, k := range benchKernels() {
		b.Run(fmt.Sprintf("n=%d/kernel=%s", benchDim, k.name), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(2 * benchDim * 4)
			for b.Loop() {
				sinkF = k.dot(row, q)
			}
		})
	}
}

// BenchmarkDotInt8 is one dot product of two vectors of 1,536 int8 in
// cache.
func BenchmarkDotInt8(b *testing.B) {
	_, block8, _, q8 := benchBlock()
	row := block8[:benchDim]
	for _, k := range benchInt8Kernels() {
		b.Run(fmt.Sprintf("n=%d/kernel=%s", benchDim, k.name), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(2 * benchDim)
			for b.Loop() {
				sinkI = k.dot(row, q8)
			}
		})
	}
}

// BenchmarkDotStream scores a query against every row of the block of
// 10,000 × 1,536 float32 (60 MB, out of cache) — an exact search without
// the top-k — on one goroutine (par=1) and on GOMAXPROCS goroutines over
// stripes of rows (par=N). The bytes are the block's.
func BenchmarkDotStream(b *testing.B) {
	block, _, q, _ := benchBlock()
	for _, par := range []int{1, runtime.GOMAXPROCS(0)} {
		for _, k := range benchKernels() {
			b.Run(fmt.Sprintf("rows=%d/par=%d/kernel=%s", benchRows, par, k.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(block) * 4))
				for b.Loop() {
					sinkF = scoreRows(block, q, par, k.dot)
				}
			})
		}
	}
}

// scoreRows computes the dot product of q with every row of block, on par
// goroutines over stripes of rows, and returns the best score.
func scoreRows(block, q []float32, par int, dot func(a, b []float32) float32) float32 {
	dim := len(q)
	best := make([]float32, par)
	stripes(len(block)/dim, par, func(w, lo, hi int) {
		m := float32(-2)
		for r := lo; r < hi; r++ {
			m = max(m, dot(block[r*dim:(r+1)*dim], q))
		}
		best[w] = m
	})
	return slices.Max(best)
}

// BenchmarkDotInt8Stream is BenchmarkDotStream over the same block
// quantised to int8 (15 MB).
func BenchmarkDotInt8Stream(b *testing.B) {
	_, block8, _, q8 := benchBlock()
	for _, k := range benchInt8Kernels() {
		b.Run(fmt.Sprintf("rows=%d/par=1/kernel=%s", benchRows, k.name), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(block8)))
			for b.Loop() {
				best := int32(-1 << 31)
				for r := range benchRows {
					best = max(best, k.dot(block8[r*benchDim:(r+1)*benchDim], q8))
				}
				sinkI = best
			}
		})
	}
}

// BenchmarkStreamFloor is the floor the searches are measured against:
// the same block read once, every core (GOMAXPROCS goroutines) summing its
// stripe — the least work that still reads every byte. Three ways to read
// it:
//
//	kernel=avx2 (or neon): vector loads and adds (sumAsm: eight YMM
//	  accumulators on amd64, four of four lanes on arm64) — the floor;
//	kernel=uint64: the bytes as 64-bit words, four integer accumulators
//	  sixteen words per iteration, portable Go (streamFloorWords);
//	kernel=float32: four float32 accumulators, portable Go (sumGo).
//
// On the 2-core AMD EPYC (Zen 5) measured, paired back to back, the uint64
// loop took about 1.15× the vector loads' time and the float32 loop about
// 1.5×: scalar Go does not keep up with the memory.
func BenchmarkStreamFloor(b *testing.B) {
	block, _, _, _ := benchBlock()
	par := runtime.GOMAXPROCS(0)
	floors := []struct {
		name string
		run  func()
	}{
		{"uint64", func() { sinkI = int32(streamFloorWords(block, par)) }},
		{"float32", func() { sinkF = streamFloorFloats(block, par, sumGo) }},
	}
	if asmSupported {
		floors = append(floors, struct {
			name string
			run  func()
		}{asmKernel, func() { sinkF = streamFloorFloats(block, par, sumAsm) }})
	}
	for _, f := range floors {
		b.Run(fmt.Sprintf("rows=%d/par=%d/kernel=%s", benchRows, par, f.name), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(block) * 4))
			for b.Loop() {
				f.run()
			}
		})
	}
}

// streamFloor reads block on par goroutines the fastest way this machine
// has: the assembly sum when there is one, the 64-bit words otherwise.
func streamFloor(block []float32, par int) {
	if asmSupported {
		sinkF = streamFloorFloats(block, par, sumAsm)
	} else {
		sinkI = int32(streamFloorWords(block, par))
	}
}

// BenchmarkStreamVsFloor pairs, in each iteration, the scoring of the block
// on every core (BenchmarkDotStream's par=N) with the stream floor
// (streamFloor), in alternating order, and reports the median of the
// ratios of their times as x-floor. On a machine whose speed varies from
// one moment to the next (other work, a shared host) the ratio of two
// separately measured benchmarks varies with it; that of two passes run
// back to back varies much less. ns/op is the pair's time.
func BenchmarkStreamVsFloor(b *testing.B) {
	block, _, q, _ := benchBlock()
	par := runtime.GOMAXPROCS(0)
	for _, k := range benchKernels() {
		b.Run(fmt.Sprintf("rows=%d/par=%d/kernel=%s", benchRows, par, k.name), func(b *testing.B) {
			b.ReportAllocs()
			var ratios []float64
			floor := func() time.Duration {
				start := time.Now()
				streamFloor(block, par)
				return time.Since(start)
			}
			scan := func() time.Duration {
				start := time.Now()
				sinkF = scoreRows(block, q, par, k.dot)
				return time.Since(start)
			}
			for i := 0; b.Loop(); i++ {
				var tf, ts time.Duration
				if i%2 == 0 {
					tf, ts = floor(), scan()
				} else {
					ts, tf = scan(), floor()
				}
				ratios = append(ratios, float64(ts)/float64(tf))
			}
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "x-floor")
		})
	}
}

// stripes calls f on par goroutines, each with its share [lo, hi) of n,
// and waits for them.
func stripes(n, par int, f func(w, lo, hi int)) {
	var wg sync.WaitGroup
	for w := range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w, w*n/par, (w+1)*n/par)
		}()
	}
	wg.Wait()
}

// streamFloorFloats sums block on par goroutines with sum.
func streamFloorFloats(block []float32, par int, sum func([]float32) float32) float32 {
	sums := make([]float32, par)
	stripes(len(block), par, func(w, lo, hi int) { sums[w] = sum(block[lo:hi]) })
	var s float32
	for _, v := range sums {
		s += v
	}
	return s
}

// streamFloorWords sums block's bytes as 64-bit words (an odd last float
// left out) on par goroutines, each with four accumulators taking four
// words each per iteration.
func streamFloorWords(block []float32, par int) uint64 {
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(block))), len(block)/2)
	sums := make([]uint64, par)
	stripes(len(words), par, func(w, lo, hi int) {
		var s0, s1, s2, s3 uint64
		x := words[lo:hi]
		for ; len(x) >= 16; x = x[16:] {
			y := x[:16:16]
			s0 += y[0] + y[4] + y[8] + y[12]
			s1 += y[1] + y[5] + y[9] + y[13]
			s2 += y[2] + y[6] + y[10] + y[14]
			s3 += y[3] + y[7] + y[11] + y[15]
		}
		for _, v := range x {
			s0 += v
		}
		sums[w] = s0 + s1 + s2 + s3
	})
	var s uint64
	for _, v := range sums {
		s += v
	}
	return s
}

// sumGo is the portable sum of x with four float32 accumulators.
func sumGo(x []float32) float32 {
	var s0, s1, s2, s3 float32
	for len(x) >= 4 {
		y := x[:4:4]
		s0 += y[0]
		s1 += y[1]
		s2 += y[2]
		s3 += y[3]
		x = x[4:]
	}
	for _, v := range x {
		s0 += v
	}
	return (s0 + s1) + (s2 + s3)
}

// TestSumAsm: the stream floor's assembly kernel reads and adds every value.
func TestSumAsm(t *testing.T) {
	if !asmSupported {
		t.Skip("no assembly kernel on this platform")
	}
	for _, n := range testLengths {
		for _, off := range []int{0, 1, 3} {
			x := make([]float32, n+off)[off:]
			for i := range x {
				x[i] = float32(i%7 + 1)
			}
			if got, want := sumAsm(x), sumGo(x); got != want {
				t.Errorf("n=%d, offset %d: sumAsm = %v, want %v", n, off, got, want)
			}
		}
	}
}
