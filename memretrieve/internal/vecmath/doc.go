// Package vecmath holds the dot-product kernels of memretrieve's vector
// index: [Dot] over float32 vectors for the exact index, [DotInt8] over
// int8 vectors for a quantised one. Both use SIMD assembly where the CPU
// has it and portable Go elsewhere; the memretrieve module stays free of
// dependencies outside the standard library.
//
// # Kernels
//
// Each function has three implementations, named by [Kernel]:
//
//   - "avx2", amd64 with AVX2 and FMA. Dot keeps eight YMM accumulators
//     of eight lanes and does one fused multiply-add (VFMADD231PS, reading
//     b straight from memory) per eight products: 64 floats per iteration,
//     then eight at a time into one accumulator, then the last zero to
//     seven one by one (VFMADD231SS); the accumulators are added pairwise,
//     then the lanes. DotInt8 sign-extends sixteen bytes of each vector to
//     int16 (VPMOVSXBW), multiplies them and adds adjacent products into
//     int32 (VPMADDWD: a pair is at most 2·128·128 = 32768, so it neither
//     saturates nor overflows), and adds those into four int32 accumulators
//     (VPADDD): 64 bytes per iteration, then sixteen, then one at a time.
//   - "neon", arm64. Dot keeps eight accumulators of four lanes (FMLA):
//     32 floats per iteration, then four, then one at a time. DotInt8
//     multiplies bytes into int16 (SMULL, SMULL2: a product fits) and adds
//     adjacent products into four int32 accumulators (SADALP): 32 bytes per
//     iteration, then sixteen, then one at a time. The dot-product
//     instructions (SDOT) are optional in arm64 and not used.
//   - "go", the portable code: Dot is a loop with eight independent
//     accumulators written so that the compiler checks no bounds in it,
//     DotInt8 the same with four.
//
// All of them read their vectors with unaligned loads, so a vector may
// start anywhere (a row of a contiguous block, a sub-slice), and read
// nothing outside them.
//
// # Choosing the kernel
//
// The choice is made once, when the package is initialised. On amd64 it
// asks the CPU, with a small CPUID and XGETBV routine of its own (the
// standard library's internal/cpu cannot be imported, and
// golang.org/x/sys/cpu would be a dependency): CPUID leaf 1 for FMA, AVX
// and OSXSAVE, XCR0 for the operating system saving the SSE and AVX
// registers, leaf 7 for AVX2. With all of them it uses "avx2", without any
// of them "go". Every arm64 CPU Go runs on has NEON (the runtime relies on
// it), so arm64 always uses "neon". Other platforms use "go".
//
// Building with the purego tag (go build -tags purego, go test -tags
// purego) leaves the assembly out on every platform: "go" everywhere, for
// platforms or tools that cannot take assembly, and to test the portable
// code the way users of such platforms run it.
//
// Dot and DotInt8 panic when the vectors' lengths differ, as the assembly
// would otherwise read past the shorter one.
//
// # Accuracy
//
// DotInt8 is exact: every kernel returns the same bits. Products are at
// most 128·128 = 2¹⁴ in magnitude, so int32 holds the dot product of
// vectors of up to [MaxExactInt8Len] = 131,071 values whatever they are;
// beyond that the result is the exact value modulo 2³², as Go's int32
// arithmetic wraps, the same on every kernel (integer addition wraps the
// same way in any order).
//
// Dot is not bit-for-bit the same on every kernel: they add the products in
// different orders (64 or 32 lanes against eight, fused multiply-adds
// against a multiplication then an addition), which changes the rounding. Each is
// within a bound of the exact value. Whatever the order of the additions,
// when no product goes through more than d roundings (its own, unless
// fused, and the additions after it), the computed sum ŝ satisfies
//
//	|ŝ − Σaᵢbᵢ| ≤ γ_d · Σ|aᵢbᵢ|,   γ_d = d·u / (1 − d·u),   u = 2⁻²⁴,
//
// plus at most 2⁻¹⁵⁰ per rounding that falls in the subnormal range. A
// product goes through at most n/8 + 11 roundings in the portable loop (one
// lane of eight, the tail of up to seven added to lane 0, three levels of
// the final sum), n/64 + 14 in the AVX2 kernel (64 lanes) and n/32 + 15
// in the NEON one (32 lanes), so d = n/8 + 16 bounds them all, and two kernels differ by at most 2·γ_d·Σ|aᵢbᵢ|.
// For unit vectors Σ|aᵢbᵢ| ≤ 1 (Cauchy–Schwarz); at 1,536 dimensions
// d = 208 and the bound is γ_d ≈ 1.24·10⁻⁵. Observed differences are far
// smaller: rounding errors have random signs and largely cancel. The bound
// is relative to Σ|aᵢbᵢ|, not to the result: when the products cancel, the
// result's relative error can be large on every kernel alike. The tests
// hold every kernel to the exact value and to the portable result with
// this bound.
//
// Special values come out alike on every kernel: a NaN in either vector, or
// an infinity times zero, gives NaN; infinite products of both signs give
// NaN; infinite products of one sign give that infinity; products that are
// all zeros, of either sign, give +0. Only when Σ|aᵢbᵢ| comes near
// math.MaxFloat32 can a partial sum overflow in one order of addition and
// not another.
//
// # Regenerating the amd64 assembly
//
// asm_amd64.s and stubs_amd64.go are generated with avo
// (github.com/mmcloughlin/avo) by the program in tools/internal/asmgen, in
// the tools module, so that avo is no dependency of memretrieve. Do not
// edit them: change the generator, then run, from the repository root,
//
//	go generate ./memretrieve/internal/vecmath
//
// and commit the files it writes (it also writes the stream-floor kernel of
// the benchmark harness, tools/internal/membench). The tools module's
// TestGeneratedFilesAreCurrent fails when the committed files differ from
// what the generator writes. avo has no arm64 support, so dot_arm64.s is
// written by hand; the few instructions Go's arm64 assembler has no name
// for (FADD and FADDP on vectors, SMULL, SADALP) are encoded by macros, and
// `go tool objdump` shows them decoded.
//
// # Testing
//
// go test runs every kernel the machine has: the portable code always,
// through an unexported switch, and the assembly when the CPU supports it
// (go test -v logs which). The tests include fixed cases, lengths on and
// around every vector width and unrolled block (0, 1, 7, 8, 9, … 129) and
// 1,535 to 1,537, unaligned vectors, and fuzz targets (go test -fuzz
// FuzzDot, FuzzDotBits, FuzzDotInt8) over lengths, offsets, negative zero,
// subnormal and huge values, NaN and infinities. scripts/test-arm64 vets
// the arm64 assembly, runs the tests with -tags purego, and runs the arm64
// test binary under qemu user-mode emulation when qemu-aarch64 is
// installed; scripts/test and CI run it.
//
// # Performance
//
// The benchmarks (go test -bench . -benchmem) compare the kernels on one
// pair of 1,536-dimensional vectors in cache, over a block of 10,000 such
// rows (60 MB of float32, out of cache; 15 MB of int8), and against
// BenchmarkStreamFloor, the time every core takes to read the same block
// with no other work: the memory-bandwidth floor. BenchmarkStreamVsFloor
// runs the scan of the block and the floor back to back and reports their
// ratio, x-floor, which stays meaningful on a busy machine.
//
// On a 2-core AMD EPYC (Zen 5) virtual machine shared with other work
// (medians of 10 interleaved runs; absolute times varied by ±30% and more
// from run to run, the paired ratio by about ±10%):
//
//	                                        avx2       go    naive
//	Dot, 1,536 floats in cache             74 ns   842 ns   1.3 µs
//	DotInt8, 1,536 bytes in cache          51 ns   1.3 µs
//	scan of 10,000 rows, both cores       2.1 ms   7.7 ms    12 ms
//	  x-floor (paired)                      0.95      3.2      4.3
//	int8 scan of 10,000 rows, one core   0.54 ms    12 ms
//
// The AVX2 scan runs at the floor: it is bound by the memory, not by the
// arithmetic, and one core nearly saturates it.
package vecmath
