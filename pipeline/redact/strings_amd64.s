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

// func classifyAVX2(p *[64]byte) (quote, bslash, slash, u uint64)
//
// The 64 bytes at p compared with '"', '\\', '/' and 'u': one mask each,
// bit i for p[i]. Only VEX-encoded instructions: a legacy SSE one with
// the upper halves dirty costs a transition on some machines.
TEXT ·classifyAVX2(SB), NOSPLIT, $0-40
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
	MOVQ AX, quote+8(FP)

	VMOVDQU bslashes<>(SB), Y2
	VPCMPEQB Y0, Y2, Y3
	VPCMPEQB Y1, Y2, Y4
	VPMOVMSKB Y3, AX
	VPMOVMSKB Y4, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVQ AX, bslash+16(FP)

	VMOVDQU slashes<>(SB), Y2
	VPCMPEQB Y0, Y2, Y3
	VPCMPEQB Y1, Y2, Y4
	VPMOVMSKB Y3, AX
	VPMOVMSKB Y4, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVQ AX, slash+24(FP)

	VMOVDQU us<>(SB), Y2
	VPCMPEQB Y0, Y2, Y3
	VPCMPEQB Y1, Y2, Y4
	VPMOVMSKB Y3, AX
	VPMOVMSKB Y4, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVQ AX, u+32(FP)

	VZEROUPPER
	RET
