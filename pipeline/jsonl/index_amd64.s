//go:build amd64

#include "textflag.h"

// Byte constants, 32 copies each.
DATA cQuote<>+0(SB)/8, $0x2222222222222222
DATA cQuote<>+8(SB)/8, $0x2222222222222222
DATA cQuote<>+16(SB)/8, $0x2222222222222222
DATA cQuote<>+24(SB)/8, $0x2222222222222222
GLOBL cQuote<>(SB), RODATA|NOPTR, $32

DATA cBackslash<>+0(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA cBackslash<>+8(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA cBackslash<>+16(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA cBackslash<>+24(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL cBackslash<>(SB), RODATA|NOPTR, $32

DATA c1F<>+0(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA c1F<>+8(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA c1F<>+16(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA c1F<>+24(SB)/8, $0x1f1f1f1f1f1f1f1f
GLOBL c1F<>(SB), RODATA|NOPTR, $32

DATA cSlash<>+0(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA cSlash<>+8(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA cSlash<>+16(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA cSlash<>+24(SB)/8, $0x2f2f2f2f2f2f2f2f
GLOBL cSlash<>(SB), RODATA|NOPTR, $32

DATA cb<>+0(SB)/8, $0x6262626262626262
DATA cb<>+8(SB)/8, $0x6262626262626262
DATA cb<>+16(SB)/8, $0x6262626262626262
DATA cb<>+24(SB)/8, $0x6262626262626262
GLOBL cb<>(SB), RODATA|NOPTR, $32

DATA cf<>+0(SB)/8, $0x6666666666666666
DATA cf<>+8(SB)/8, $0x6666666666666666
DATA cf<>+16(SB)/8, $0x6666666666666666
DATA cf<>+24(SB)/8, $0x6666666666666666
GLOBL cf<>(SB), RODATA|NOPTR, $32

DATA cn<>+0(SB)/8, $0x6e6e6e6e6e6e6e6e
DATA cn<>+8(SB)/8, $0x6e6e6e6e6e6e6e6e
DATA cn<>+16(SB)/8, $0x6e6e6e6e6e6e6e6e
DATA cn<>+24(SB)/8, $0x6e6e6e6e6e6e6e6e
GLOBL cn<>(SB), RODATA|NOPTR, $32

DATA cr<>+0(SB)/8, $0x7272727272727272
DATA cr<>+8(SB)/8, $0x7272727272727272
DATA cr<>+16(SB)/8, $0x7272727272727272
DATA cr<>+24(SB)/8, $0x7272727272727272
GLOBL cr<>(SB), RODATA|NOPTR, $32

DATA ct<>+0(SB)/8, $0x7474747474747474
DATA ct<>+8(SB)/8, $0x7474747474747474
DATA ct<>+16(SB)/8, $0x7474747474747474
DATA ct<>+24(SB)/8, $0x7474747474747474
GLOBL ct<>(SB), RODATA|NOPTR, $32

DATA cu<>+0(SB)/8, $0x7575757575757575
DATA cu<>+8(SB)/8, $0x7575757575757575
DATA cu<>+16(SB)/8, $0x7575757575757575
DATA cu<>+24(SB)/8, $0x7575757575757575
GLOBL cu<>(SB), RODATA|NOPTR, $32

DATA c0<>+0(SB)/8, $0x3030303030303030
DATA c0<>+8(SB)/8, $0x3030303030303030
DATA c0<>+16(SB)/8, $0x3030303030303030
DATA c0<>+24(SB)/8, $0x3030303030303030
GLOBL c0<>(SB), RODATA|NOPTR, $32

DATA c9<>+0(SB)/8, $0x0909090909090909
DATA c9<>+8(SB)/8, $0x0909090909090909
DATA c9<>+16(SB)/8, $0x0909090909090909
DATA c9<>+24(SB)/8, $0x0909090909090909
GLOBL c9<>(SB), RODATA|NOPTR, $32

DATA c20<>+0(SB)/8, $0x2020202020202020
DATA c20<>+8(SB)/8, $0x2020202020202020
DATA c20<>+16(SB)/8, $0x2020202020202020
DATA c20<>+24(SB)/8, $0x2020202020202020
GLOBL c20<>(SB), RODATA|NOPTR, $32

DATA ca<>+0(SB)/8, $0x6161616161616161
DATA ca<>+8(SB)/8, $0x6161616161616161
DATA ca<>+16(SB)/8, $0x6161616161616161
DATA ca<>+24(SB)/8, $0x6161616161616161
GLOBL ca<>(SB), RODATA|NOPTR, $32

DATA c5<>+0(SB)/8, $0x0505050505050505
DATA c5<>+8(SB)/8, $0x0505050505050505
DATA c5<>+16(SB)/8, $0x0505050505050505
DATA c5<>+24(SB)/8, $0x0505050505050505
GLOBL c5<>(SB), RODATA|NOPTR, $32

// func scanStringAVX2(p *byte, n int) (idx int, esc bool)
//
// Scans JSON string content p[0:n], 64 bytes at a time, for the first byte
// that ends the fast path: the closing '"', a control character below
// 0x20, or a backslash starting an escape it cannot vouch for (an invalid
// escape, or a \u escape whose four hex digits are not all in the block).
// Valid escapes, \u ones included, are stepped over without leaving the
// block: escaped characters are found with carry-propagating bit
// arithmetic over the backslash mask (as simdjson does), then checked
// against the set of valid escapes. esc reports whether any escape was
// stepped over.
//
// With fewer than 64 bytes left it returns the offset of the first byte
// not yet examined (or of the backslash before it, if that byte is
// escaped); the caller scans the rest. Requires AVX2, BMI1 and n >= 64.
TEXT ·scanStringAVX2(SB), NOSPLIT, $0-25
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), BX
	XORQ R8, R8                 // carry: the first byte of the block is escaped
	XORQ R9, R9                 // esc
	VMOVDQU cQuote<>(SB), Y1
	VMOVDQU cBackslash<>(SB), Y2
	VMOVDQU c1F<>(SB), Y5
	MOVQ $0x5555555555555555, R12
	XORQ DI, DI

block:
	LEAQ 64(DI), CX
	CMPQ CX, BX
	JA   tail
	VMOVDQU (SI)(DI*1), Y0
	VMOVDQU 32(SI)(DI*1), Y7

	// AX = quotes, DX = control characters, R10 = backslashes.
	VPCMPEQB Y0, Y1, Y3
	VPMOVMSKB Y3, AX
	VPCMPEQB Y7, Y1, Y3
	VPMOVMSKB Y3, CX
	SHLQ $32, CX
	ORQ  CX, AX
	VPMINUB Y0, Y5, Y3
	VPCMPEQB Y3, Y0, Y3
	VPMOVMSKB Y3, DX
	VPMINUB Y7, Y5, Y3
	VPCMPEQB Y3, Y7, Y3
	VPMOVMSKB Y3, CX
	SHLQ $32, CX
	ORQ  CX, DX
	VPCMPEQB Y0, Y2, Y3
	VPMOVMSKB Y3, R10
	VPCMPEQB Y7, Y2, Y3
	VPMOVMSKB Y3, CX
	SHLQ $32, CX
	ORQ  CX, R10

	MOVQ R10, CX
	ORQ  R8, CX
	JNZ  escapes

	// No escape in the block: stop at the first quote or control byte.
	ORQ    DX, AX
	JZ     next
	TZCNTQ AX, AX
	ADDQ   DI, AX
	JMP    ret

next:
	ADDQ $64, DI
	JMP  block

escapes:
	// R13 = escaped bytes (the byte after each escaping backslash), R8 =
	// carry into the next block.
	MOVQ   R8, CX
	NOTQ   CX
	ANDQ   CX, R10              // a backslash that is itself escaped escapes nothing
	MOVQ   R10, R11
	SHLQ   $1, R11
	ORQ    R8, R11              // R11 = follows an escaping candidate
	MOVQ   R12, R13
	NOTQ   R13
	ANDQ   R10, R13
	MOVQ   R11, CX
	NOTQ   CX
	ANDQ   CX, R13              // odd-position sequence starts
	XORQ   R8, R8
	ADDQ   R10, R13
	SETCS  R8
	SHLQ   $1, R13
	XORQ   R12, R13
	ANDQ   R11, R13             // escaped

	// Stop at the first unescaped quote or control byte: R14 = its
	// offset in the block (64 if none), R15 = mask of the bytes before it.
	MOVQ   R13, CX
	NOTQ   CX
	ANDQ   CX, AX
	ORQ    DX, AX
	TZCNTQ AX, R14
	MOVQ   $-1, R15
	CMPQ   R14, $64
	JEQ    masked
	MOVQ   R14, CX
	MOVQ   $1, R15
	SHLQ   CX, R15
	DECQ   R15

masked:
	ANDQ R15, R13               // escaped bytes before the stop
	JZ   stop
	MOVQ $1, R9

	// Every escaped byte must be one of " \ / b f n r t u.
	VPCMPEQB Y0, Y1, Y3
	VPCMPEQB Y0, Y2, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB cSlash<>(SB), Y0, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB cb<>(SB), Y0, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB cf<>(SB), Y0, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB cn<>(SB), Y0, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB cr<>(SB), Y0, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB ct<>(SB), Y0, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB cu<>(SB), Y0, Y4
	VPOR Y4, Y3, Y3
	VPMOVMSKB Y3, R11
	VPCMPEQB Y7, Y1, Y3
	VPCMPEQB Y7, Y2, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB cSlash<>(SB), Y7, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB cb<>(SB), Y7, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB cf<>(SB), Y7, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB cn<>(SB), Y7, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB cr<>(SB), Y7, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB ct<>(SB), Y7, Y4
	VPOR Y4, Y3, Y3
	VPCMPEQB cu<>(SB), Y7, Y4
	VPOR Y4, Y3, Y3
	VPMOVMSKB Y3, CX
	SHLQ $32, CX
	ORQ  CX, R11
	NOTQ R11
	ANDQ R13, R11
	JNZ  giveback               // an invalid escape: the caller reports it

	// \u escapes: their four hex digits must follow in the block.
	VPCMPEQB cu<>(SB), Y0, Y3
	VPMOVMSKB Y3, R11
	VPCMPEQB cu<>(SB), Y7, Y3
	VPMOVMSKB Y3, CX
	SHLQ $32, CX
	ORQ  CX, R11
	ANDQ R13, R11
	JZ   stop
	MOVQ R11, CX
	SHRQ $59, CX
	JNZ  givebackU              // digits past the block: the caller checks
	VPSUBB c0<>(SB), Y0, Y3
	VPMINUB c9<>(SB), Y3, Y4
	VPCMPEQB Y4, Y3, Y3
	VPOR c20<>(SB), Y0, Y4
	VPSUBB ca<>(SB), Y4, Y4
	VPMINUB c5<>(SB), Y4, Y6
	VPCMPEQB Y6, Y4, Y4
	VPOR Y4, Y3, Y3
	VPMOVMSKB Y3, DX
	VPSUBB c0<>(SB), Y7, Y3
	VPMINUB c9<>(SB), Y3, Y4
	VPCMPEQB Y4, Y3, Y3
	VPOR c20<>(SB), Y7, Y4
	VPSUBB ca<>(SB), Y4, Y4
	VPMINUB c5<>(SB), Y4, Y6
	VPCMPEQB Y6, Y4, Y4
	VPOR Y4, Y3, Y3
	VPMOVMSKB Y3, CX
	SHLQ $32, CX
	ORQ  CX, DX
	MOVQ R11, CX
	SHLQ $1, CX
	MOVQ CX, AX
	SHLQ $1, CX
	ORQ  CX, AX
	SHLQ $1, CX
	ORQ  CX, AX
	SHLQ $1, CX
	ORQ  CX, AX                 // AX = the digit positions
	NOTQ DX
	ANDQ DX, AX
	JNZ  givebackU              // a bad digit: the caller reports it

stop:
	CMPQ R14, $64
	JEQ  next
	LEAQ (DI)(R14*1), AX
	JMP  ret

giveback:
	// R11 = invalid escaped bytes: return the backslash before the first.
	TZCNTQ R11, AX
	LEAQ   -1(DI)(AX*1), AX
	JMP    ret

givebackU:
	// R11 = escaped 'u' bytes: return the backslash before the first.
	TZCNTQ R11, AX
	LEAQ   -1(DI)(AX*1), AX
	JMP    ret

tail:
	// Fewer than 64 bytes left: the caller scans them. If the next byte
	// is escaped, hand back its backslash.
	MOVQ DI, AX
	SUBQ R8, AX

ret:
	VZEROUPPER
	MOVQ AX, idx+16(FP)
	MOVB R9, esc+24(FP)
	RET
