//go:build amd64

#include "textflag.h"

// Each byte class as 32 copies of its byte.
DATA quotes<>+0(SB)/8, $0x2222222222222222
DATA quotes<>+8(SB)/8, $0x2222222222222222
DATA quotes<>+16(SB)/8, $0x2222222222222222
DATA quotes<>+24(SB)/8, $0x2222222222222222
GLOBL quotes<>(SB), RODATA|NOPTR, $32

DATA bslashes<>+0(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bslashes<>+8(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bslashes<>+16(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bslashes<>+24(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL bslashes<>(SB), RODATA|NOPTR, $32

DATA slashes<>+0(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA slashes<>+8(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA slashes<>+16(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA slashes<>+24(SB)/8, $0x2f2f2f2f2f2f2f2f
GLOBL slashes<>(SB), RODATA|NOPTR, $32

DATA us<>+0(SB)/8, $0x7575757575757575
DATA us<>+8(SB)/8, $0x7575757575757575
DATA us<>+16(SB)/8, $0x7575757575757575
DATA us<>+24(SB)/8, $0x7575757575757575
GLOBL us<>(SB), RODATA|NOPTR, $32

DATA nibs<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibs<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibs<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibs<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibs<>(SB), RODATA|NOPTR, $32

// func classifyAVX2(p *[65]byte, t *pairTables) (quote, bslash, slash, u, pairs uint64)
//
// The 64 bytes at p compared with '"', '\\', '/' and 'u': one mask each,
// bit i for p[i]; and pairs, the positions i whose pair p[i], p[i+1]
// passes the nibble tables t, as in pairMaskAVX2 (p[64] is read). Only
// VEX-encoded instructions: a legacy SSE one with the upper halves dirty
// costs a transition on some machines.
TEXT ·classifyAVX2(SB), NOSPLIT, $0-56
	MOVQ p+0(FP), SI
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1

	VMOVDQU quotes<>(SB), Y2
	VPCMPEQB Y0, Y2, Y3
	VPCMPEQB Y1, Y2, Y4
	VPMOVMSKB Y3, AX
	VPMOVMSKB Y4, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVQ AX, quote+16(FP)

	VMOVDQU bslashes<>(SB), Y2
	VPCMPEQB Y0, Y2, Y3
	VPCMPEQB Y1, Y2, Y4
	VPMOVMSKB Y3, AX
	VPMOVMSKB Y4, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVQ AX, bslash+24(FP)

	VMOVDQU slashes<>(SB), Y2
	VPCMPEQB Y0, Y2, Y3
	VPCMPEQB Y1, Y2, Y4
	VPMOVMSKB Y3, AX
	VPMOVMSKB Y4, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVQ AX, slash+32(FP)

	VMOVDQU us<>(SB), Y2
	VPCMPEQB Y0, Y2, Y3
	VPCMPEQB Y1, Y2, Y4
	VPMOVMSKB Y3, AX
	VPMOVMSKB Y4, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVQ AX, u+40(FP)

	// Pairs, one half at a time: the nibbles of p[i] and p[i+1] looked
	// up in t, the four lookups ANDed.
	MOVQ t+8(FP), DX
	VMOVDQU nibs<>(SB), Y15
	VMOVDQU 0(DX), Y8
	VMOVDQU 32(DX), Y9
	VMOVDQU 64(DX), Y10
	VMOVDQU 96(DX), Y11
	VPXOR Y14, Y14, Y14

	VMOVDQU 1(SI), Y5
	VPSRLW  $4, Y0, Y2
	VPAND   Y15, Y0, Y0
	VPAND   Y15, Y2, Y2
	VPSHUFB Y0, Y8, Y0
	VPSHUFB Y2, Y9, Y2
	VPAND   Y0, Y2, Y0
	VPSRLW  $4, Y5, Y3
	VPAND   Y15, Y5, Y5
	VPAND   Y15, Y3, Y3
	VPSHUFB Y5, Y10, Y5
	VPSHUFB Y3, Y11, Y3
	VPAND   Y5, Y3, Y5
	VPAND   Y0, Y5, Y0
	VPCMPEQB Y14, Y0, Y0
	VPMOVMSKB Y0, AX

	VMOVDQU 33(SI), Y5
	VPSRLW  $4, Y1, Y2
	VPAND   Y15, Y1, Y1
	VPAND   Y15, Y2, Y2
	VPSHUFB Y1, Y8, Y1
	VPSHUFB Y2, Y9, Y2
	VPAND   Y1, Y2, Y1
	VPSRLW  $4, Y5, Y3
	VPAND   Y15, Y5, Y5
	VPAND   Y15, Y3, Y3
	VPSHUFB Y5, Y10, Y5
	VPSHUFB Y3, Y11, Y3
	VPAND   Y5, Y3, Y5
	VPAND   Y1, Y5, Y1
	VPCMPEQB Y14, Y1, Y1
	VPMOVMSKB Y1, BX

	SHLQ $32, BX
	ORQ  BX, AX
	NOTQ AX
	MOVQ AX, pairs+48(FP)

	VZEROUPPER
	RET
