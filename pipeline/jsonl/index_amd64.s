//go:build amd64

#include "textflag.h"

// simpleEscape<> marks the bytes that may follow a backslash in a simple
// JSON escape: " \ / b f n r t.
DATA simpleEscape<>+0x22(SB)/1, $1 // '"'
DATA simpleEscape<>+0x2f(SB)/1, $1 // '/'
DATA simpleEscape<>+0x5c(SB)/1, $1 // '\\'
DATA simpleEscape<>+0x62(SB)/1, $1 // 'b'
DATA simpleEscape<>+0x66(SB)/1, $1 // 'f'
DATA simpleEscape<>+0x6e(SB)/1, $1 // 'n'
DATA simpleEscape<>+0x72(SB)/1, $1 // 'r'
DATA simpleEscape<>+0x74(SB)/1, $1 // 't'
GLOBL simpleEscape<>(SB), RODATA, $256

// func scanStringAVX2(p *byte, n int) (idx int, esc bool)
//
// Scans JSON string content p[0:n] for the first byte that ends the fast
// path: a '"', a control character below 0x20, or a backslash that does not
// start a simple escape (a \u escape, an invalid escape, or one cut off by
// the end of the data). Simple escapes are stepped over and reported in esc.
// Returns n if no such byte exists. Requires AVX2 and n >= 32: the last
// block is an overlapping load of the final 32 bytes, never a read past p+n.
TEXT ·scanStringAVX2(SB), NOSPLIT, $0-25
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), BX
	XORQ R8, R8                  // esc

	MOVQ $0x2222222222222222, AX
	MOVQ AX, X1
	VPBROADCASTB X1, Y1          // '"'
	MOVQ $0x5c5c5c5c5c5c5c5c, AX
	MOVQ AX, X2
	VPBROADCASTB X2, Y2          // '\\'
	MOVQ $0x1f1f1f1f1f1f1f1f, AX
	MOVQ AX, X5
	VPBROADCASTB X5, Y5          // 0x1f
	LEAQ simpleEscape<>(SB), R10

	XORQ DI, DI                  // start of the block to load next
	XORQ R9, R9                  // bits below R9 of the block are done

block:
	LEAQ 32(DI), CX
	CMPQ CX, BX
	JA   tail
	VMOVDQU (SI)(DI*1), Y0
	JMP  mask

tail:
	// Fewer than 32 bytes left from DI: load the final 32 bytes and
	// ignore the ones before DI.
	CMPQ DI, BX
	JAE  notfound
	MOVQ BX, CX
	SUBQ $32, CX
	MOVQ DI, R9
	SUBQ CX, R9
	MOVQ CX, DI
	VMOVDQU (SI)(DI*1), Y0

mask:
	VPCMPEQB Y0, Y1, Y3
	VPCMPEQB Y0, Y2, Y4
	VPMINUB  Y0, Y5, Y6
	VPCMPEQB Y6, Y0, Y6
	VPOR     Y3, Y4, Y3
	VPOR     Y3, Y6, Y3
	VPMOVMSKB Y3, AX
	// Clear the bits below R9.
	MOVL  $-1, DX
	MOVQ  R9, CX
	SHLL  CX, DX
	ANDL  DX, AX
	XORQ  R9, R9

bits:
	TESTL AX, AX
	JZ    next
	BSFL  AX, DX
	LEAQ  (DI)(DX*1), CX         // absolute index
	MOVBLZX (SI)(CX*1), R11
	CMPB  R11, $0x5c
	JNE   found                  // '"' or a control character
	LEAQ  1(CX), R11
	CMPQ  R11, BX
	JAE   found                  // backslash at the end
	MOVBLZX (SI)(R11*1), R11
	MOVBLZX (R10)(R11*1), R11
	TESTL R11, R11
	JZ    found                  // \u or an invalid escape: the caller decides
	MOVQ  $1, R8
	// Continue after the escaped byte: relative position DX+2.
	ADDL  $2, DX
	CMPL  DX, $32
	JAE   skipblock
	MOVL  $-1, R11
	MOVL  DX, CX
	SHLL  CX, R11
	ANDL  R11, AX
	JMP   bits

skipblock:
	ADDQ DX, DI
	JMP  block

next:
	ADDQ $32, DI
	JMP  block

notfound:
	VZEROUPPER
	MOVQ BX, idx+16(FP)
	MOVB R8, esc+24(FP)
	RET

found:
	VZEROUPPER
	MOVQ CX, idx+16(FP)
	MOVB R8, esc+24(FP)
	RET
