//go:build !purego

#include "textflag.h"

// NEON kernels. Go's arm64 assembler has no mnemonic for a few of the
// instructions they need, so these macros encode them (register numbers
// are plain integers: FADD4S(16, 16, 17) is fadd v16.4s, v16.4s, v17.4s).
// The disassembly (go tool objdump) shows the real instructions.

// fadd Vd.4S, Vn.4S, Vm.4S
#define FADD4S(d, n, m) WORD $(0x4E20D400 | (m)<<16 | (n)<<5 | (d))
// faddp Vd.4S, Vn.4S, Vm.4S (pairwise add)
#define FADDP4S(d, n, m) WORD $(0x6E20D400 | (m)<<16 | (n)<<5 | (d))
// faddp Sd, Vn.2S (add the two low lanes into a scalar)
#define FADDP2S(d, n) WORD $(0x7E30D800 | (n)<<5 | (d))
// smull Vd.8H, Vn.8B, Vm.8B (signed multiply of the low eight bytes, widening)
#define SMULL8B(d, n, m) WORD $(0x0E20C000 | (m)<<16 | (n)<<5 | (d))
// smull2 Vd.8H, Vn.16B, Vm.16B (the same for the high eight bytes)
#define SMULL16B(d, n, m) WORD $(0x4E20C000 | (m)<<16 | (n)<<5 | (d))
// sadalp Vd.4S, Vn.8H (add adjacent int16 pairs, widening, into Vd)
#define SADALP8H(d, n) WORD $(0x4E606800 | (n)<<5 | (d))

// func dotNEON(a, b []float32) float32
//
// Eight accumulators V16–V23 of four lanes: 32 floats a time with FMLA,
// then four at a time into V16, then the last zero to three floats with
// scalar fused multiply-adds after the lanes are summed.
TEXT ·dotNEON(SB), NOSPLIT, $0-52
	MOVD a_base+0(FP), R0
	MOVD a_len+8(FP), R2
	MOVD b_base+24(FP), R1
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16

	CMP $32, R2
	BLT dot_fours

dot_blocks:
	VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R0), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R1), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1.P 64(R1), [V12.S4, V13.S4, V14.S4, V15.S4]
	VFMLA  V0.S4, V8.S4, V16.S4
	VFMLA  V1.S4, V9.S4, V17.S4
	VFMLA  V2.S4, V10.S4, V18.S4
	VFMLA  V3.S4, V11.S4, V19.S4
	VFMLA  V4.S4, V12.S4, V20.S4
	VFMLA  V5.S4, V13.S4, V21.S4
	VFMLA  V6.S4, V14.S4, V22.S4
	VFMLA  V7.S4, V15.S4, V23.S4
	SUB    $32, R2
	CMP    $32, R2
	BGE    dot_blocks

dot_fours:
	CMP $4, R2
	BLT dot_reduce

dot_fours_loop:
	VLD1.P 16(R0), [V0.S4]
	VLD1.P 16(R1), [V8.S4]
	VFMLA  V0.S4, V8.S4, V16.S4
	SUB    $4, R2
	CMP    $4, R2
	BGE    dot_fours_loop

dot_reduce:
	// Sum the accumulators pairwise, then the lanes, into F16.
	FADD4S(16, 16, 17)
	FADD4S(18, 18, 19)
	FADD4S(20, 20, 21)
	FADD4S(22, 22, 23)
	FADD4S(16, 16, 18)
	FADD4S(20, 20, 22)
	FADD4S(16, 16, 20)
	FADDP4S(16, 16, 16)
	FADDP2S(16, 16)
	CBZ R2, dot_done

dot_tail:
	FMOVS.P 4(R0), F0
	FMOVS.P 4(R1), F1
	FMADDS  F0, F16, F1, F16 // F16 += F1 * F0
	SUB     $1, R2
	CBNZ    R2, dot_tail

dot_done:
	FMOVS F16, ret+48(FP)
	RET

// func dotInt8NEON(a, b []int8) int32
//
// 32 bytes at a time: SMULL and SMULL2 multiply sixteen pairs into int16
// (a product is at most 128·128 = 16384 in magnitude, so it fits), SADALP
// adds adjacent products into four int32 accumulators V16–V19 (wrapping like
// Go's int32). Then sixteen at a time into V16 and V17, then the last zero
// to fifteen bytes one by one.
TEXT ·dotInt8NEON(SB), NOSPLIT, $0-52
	MOVD a_base+0(FP), R0
	MOVD a_len+8(FP), R2
	MOVD b_base+24(FP), R1
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16

	CMP $32, R2
	BLT dot8_sixteens

dot8_blocks:
	VLD1.P 32(R0), [V0.B16, V1.B16]
	VLD1.P 32(R1), [V2.B16, V3.B16]
	SMULL8B(4, 0, 2)
	SMULL16B(5, 0, 2)
	SMULL8B(6, 1, 3)
	SMULL16B(7, 1, 3)
	SADALP8H(16, 4)
	SADALP8H(17, 5)
	SADALP8H(18, 6)
	SADALP8H(19, 7)
	SUB    $32, R2
	CMP    $32, R2
	BGE    dot8_blocks

dot8_sixteens:
	CMP $16, R2
	BLT dot8_reduce
	VLD1.P 16(R0), [V0.B16]
	VLD1.P 16(R1), [V2.B16]
	SMULL8B(4, 0, 2)
	SMULL16B(5, 0, 2)
	SADALP8H(16, 4)
	SADALP8H(17, 5)
	SUB    $16, R2

dot8_reduce:
	VADD  V17.S4, V16.S4, V16.S4
	VADD  V19.S4, V18.S4, V18.S4
	VADD  V18.S4, V16.S4, V16.S4
	VADDV V16.S4, V16
	VMOV  V16.S[0], R3
	CBZ   R2, dot8_done

dot8_tail:
	MOVB.P 1(R0), R4 // sign-extending loads
	MOVB.P 1(R1), R5
	MULW   R4, R5, R6
	ADDW   R6, R3, R3
	SUB    $1, R2
	CBNZ   R2, dot8_tail

dot8_done:
	MOVW R3, ret+48(FP)
	RET

// func sumNEON(x []float32) float32
//
// The stream floor's kernel: four accumulators, one load and one add per
// four floats.
TEXT ·sumNEON(SB), NOSPLIT, $0-28
	MOVD x_base+0(FP), R0
	MOVD x_len+8(FP), R2
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16

	CMP $16, R2
	BLT sum_fours

sum_blocks:
	VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]
	FADD4S(16, 16, 0)
	FADD4S(17, 17, 1)
	FADD4S(18, 18, 2)
	FADD4S(19, 19, 3)
	SUB    $16, R2
	CMP    $16, R2
	BGE    sum_blocks

sum_fours:
	CMP $4, R2
	BLT sum_reduce

sum_fours_loop:
	VLD1.P 16(R0), [V0.S4]
	FADD4S(16, 16, 0)
	SUB    $4, R2
	CMP    $4, R2
	BGE    sum_fours_loop

sum_reduce:
	FADD4S(16, 16, 17)
	FADD4S(18, 18, 19)
	FADD4S(16, 16, 18)
	FADDP4S(16, 16, 16)
	FADDP2S(16, 16)
	CBZ R2, sum_done

sum_tail:
	FMOVS.P 4(R0), F0
	FADDS   F0, F16
	SUB     $1, R2
	CBNZ    R2, sum_tail

sum_done:
	FMOVS F16, ret+24(FP)
	RET
