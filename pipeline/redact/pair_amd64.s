//go:build amd64

#include "textflag.h"

DATA nib0f<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib0f<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib0f<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib0f<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nib0f<>(SB), RODATA|NOPTR, $32

// func pairMaskAVX2(p *byte, n int, t *pairTables) (off int, mask uint32)
//
// For each position i of 32 at a time, while i+33 <= n: the byte pair
// p[i], p[i+1] is looked up by its four nibbles in t (lo0, hi0, lo1, hi1:
// 16-byte tables of bucket bits, twice), as Hyperscan's Teddy does. It
// returns the first block with a position whose four lookups share a
// bucket, and the mask of those positions, or the first position not
// examined and a zero mask.
TEXT ·pairMaskAVX2(SB), NOSPLIT, $0-36
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ t+16(FP), DX
	VMOVDQU nib0f<>(SB), Y15
	VMOVDQU 0(DX), Y8
	VMOVDQU 32(DX), Y9
	VMOVDQU 64(DX), Y10
	VMOVDQU 96(DX), Y11
	VPXOR Y14, Y14, Y14
	XORQ AX, AX

loop:
	LEAQ 33(AX), BX
	CMPQ BX, CX
	JA   done
	VMOVDQU (SI)(AX*1), Y0
	VMOVDQU 1(SI)(AX*1), Y1
	VPSRLW  $4, Y0, Y2
	VPAND   Y15, Y0, Y0
	VPAND   Y15, Y2, Y2
	VPSHUFB Y0, Y8, Y0
	VPSHUFB Y2, Y9, Y2
	VPAND   Y0, Y2, Y0
	VPSRLW  $4, Y1, Y3
	VPAND   Y15, Y1, Y1
	VPAND   Y15, Y3, Y3
	VPSHUFB Y1, Y10, Y1
	VPSHUFB Y3, Y11, Y3
	VPAND   Y1, Y3, Y1
	VPAND   Y0, Y1, Y0
	VPCMPEQB Y14, Y0, Y0
	VPMOVMSKB Y0, BX
	NOTL    BX
	TESTL   BX, BX
	JNZ     found
	ADDQ    $32, AX
	JMP     loop

found:
	MOVQ AX, off+24(FP)
	MOVL BX, mask+32(FP)
	VZEROUPPER
	RET

done:
	MOVQ AX, off+24(FP)
	MOVL $0, mask+32(FP)
	VZEROUPPER
	RET
