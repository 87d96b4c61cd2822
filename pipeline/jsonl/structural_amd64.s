//go:build amd64

#include "textflag.h"

// Tables for VPSHUFB lookups by low nibble (the same 16 bytes in each
// 128-bit lane; an index byte with its high bit set gives 0).

// tWS[x&15] == x exactly for the JSON whitespace bytes ' ', \t, \n, \r.
DATA tWS<>+0(SB)/8, $0xFFFFFFFFFFFFFF20
DATA tWS<>+8(SB)/8, $0xFFFF0DFFFF0A09FF
DATA tWS<>+16(SB)/8, $0xFFFFFFFFFFFFFF20
DATA tWS<>+24(SB)/8, $0xFFFF0DFFFF0A09FF
GLOBL tWS<>(SB), RODATA|NOPTR, $32

// tOp[x&15] == x|0x20 for { } [ ] : , (and for 0x0C and 0x1A, which are
// invalid wherever they are: the walker never accepts them).
DATA tOp<>+0(SB)/8, $0
DATA tOp<>+8(SB)/8, $0x00007D2C7B3A0000
DATA tOp<>+16(SB)/8, $0
DATA tOp<>+24(SB)/8, $0x00007D2C7B3A0000
GLOBL tOp<>(SB), RODATA|NOPTR, $32

// tClsLo[x&15] & tClsHi[x>>4] classifies the bytes that may follow a
// backslash: bits 0-3 are set for " \ / b f n r t u (one bit per high
// nibble), bits 4-5 for the hexadecimal digits, bit 7 for u.
DATA tClsLo<>+0(SB)/8, $0x1034B838303D3010
DATA tClsLo<>+8(SB)/8, $0x0104000200001010
DATA tClsLo<>+16(SB)/8, $0x1034B838303D3010
DATA tClsLo<>+24(SB)/8, $0x0104000200001010
GLOBL tClsLo<>(SB), RODATA|NOPTR, $32

DATA tClsHi<>+0(SB)/8, $0x8824022010010000
DATA tClsHi<>+8(SB)/8, $0
DATA tClsHi<>+16(SB)/8, $0x8824022010010000
DATA tClsHi<>+24(SB)/8, $0
GLOBL tClsHi<>(SB), RODATA|NOPTR, $32

// Byte constants, 32 copies each.
DATA sQuote<>+0(SB)/8, $0x2222222222222222
DATA sQuote<>+8(SB)/8, $0x2222222222222222
DATA sQuote<>+16(SB)/8, $0x2222222222222222
DATA sQuote<>+24(SB)/8, $0x2222222222222222
GLOBL sQuote<>(SB), RODATA|NOPTR, $32

DATA sBackslash<>+0(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA sBackslash<>+8(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA sBackslash<>+16(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA sBackslash<>+24(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL sBackslash<>(SB), RODATA|NOPTR, $32

DATA s1F<>+0(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA s1F<>+8(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA s1F<>+16(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA s1F<>+24(SB)/8, $0x1f1f1f1f1f1f1f1f
GLOBL s1F<>(SB), RODATA|NOPTR, $32

DATA s20<>+0(SB)/8, $0x2020202020202020
DATA s20<>+8(SB)/8, $0x2020202020202020
DATA s20<>+16(SB)/8, $0x2020202020202020
DATA s20<>+24(SB)/8, $0x2020202020202020
GLOBL s20<>(SB), RODATA|NOPTR, $32

DATA s0F<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA s0F<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA s0F<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA s0F<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL s0F<>(SB), RODATA|NOPTR, $32

DATA s30<>+0(SB)/8, $0x3030303030303030
DATA s30<>+8(SB)/8, $0x3030303030303030
DATA s30<>+16(SB)/8, $0x3030303030303030
DATA s30<>+24(SB)/8, $0x3030303030303030
GLOBL s30<>(SB), RODATA|NOPTR, $32

DATA ones<>+0(SB)/8, $-1
DATA ones<>+8(SB)/8, $-1
GLOBL ones<>(SB), RODATA|NOPTR, $16

// func indexBlocksAVX2(p *byte, n int, base int, st *indexState, out *indexedBlock, room int, tail *byte) (read, wrote int, bad bool)
//
// indexBlocksGeneric (structural.go) is the specification: the whole
// 64-byte blocks of p[0:n], then the 64 bytes at tail, if not nil, as the
// block that follows them. For each block (bit i of a mask is byte i):
//
//	Q       = unescaped quotes (escapes found by carry-propagating
//	          arithmetic over the backslashes, as simdjson does)
//	inStr   = prefix XOR of Q: 1 from an opening quote up to, not
//	          including, its closing quote
//	scalar  = bytes that are neither whitespace, { } [ ] : , nor Q
//	entries = ((op | first byte of each scalar run) &^ inStr) | Q
//	attn    = the closing quotes of strings that hold a backslash or a
//	          byte above 0x7F
//
// A block with entries is recorded in out as {entries, attn, offset}. A
// block fails when a control character is inside a string, an escaped
// byte is not one of " \ / b f n r t u, or one of the four bytes after \u
// is not a hexadecimal digit.
//
// Three kinds of blocks take different paths: a block inside a string
// with nothing but plain bytes (base64 images), a block inside a string
// from end to end (text with escapes), and the others, which hold
// entries.
//
// Within a path, the work that depends on the bytes (backslash runs, \u
// escapes, the strings that need attention) is done without branches:
// mispredicted branches cost more than the arithmetic (measured).
//
// Every instruction that touches a vector register is VEX-encoded (the
// carry-less multiplication too: VPCLMULQDQ, not PCLMULQDQ). Processors
// may charge for a legacy SSE instruction among VEX ones: with one such
// sequence per block this routine ran at 480 MB/s on one host, under
// half its speed there in VEX form. TestAssembly_VEXOnly keeps it so.
//
// Registers: SI block, BX end of p, DI base-p, R8 out, R9 1 for a block
// inside a string from end to end, R10 st; Y4-Y6 and Y8-Y15 constants,
// Y2 and Y3 temporaries; last-8(SP) the last record of out. In the loop:
// AX quotes, then Q; CX backslashes; DX control characters; R11 inStr;
// R12 escaped bytes.
TEXT ·indexBlocksAVX2(SB), NOSPLIT, $8-73
	MOVQ  p+0(FP), SI
	MOVQ  n+8(FP), BX
	ADDQ  SI, BX
	MOVQ  base+16(FP), DI
	SUBQ  SI, DI
	MOVQ  st+24(FP), R10
	MOVQ  out+32(FP), R8
	MOVQ  room+40(FP), AX
	DECQ  AX
	IMULQ $24, AX
	ADDQ  R8, AX
	MOVQ  AX, last-8(SP)

	VMOVDQU tClsLo<>(SB), Y4
	VMOVDQU tClsHi<>(SB), Y5
	VPXOR   Y6, Y6, Y6
	VMOVDQU sQuote<>(SB), Y8
	VMOVDQU sBackslash<>(SB), Y9
	VMOVDQU s1F<>(SB), Y10
	VMOVDQU tWS<>(SB), Y11
	VMOVDQU tOp<>(SB), Y12
	VMOVDQU s20<>(SB), Y13
	VMOVDQU s0F<>(SB), Y14
	VMOVDQU s30<>(SB), Y15

loop:
	CMPQ R8, last-8(SP)
	JHI  done
	LEAQ 64(SI), AX
	CMPQ AX, BX
	JHI  partial
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1

	// AX = quotes, CX = backslashes, DX != 0 if the block holds a
	// control character.
	VPCMPEQB  Y0, Y8, Y2
	VPCMPEQB  Y1, Y8, Y3
	VPMOVMSKB Y2, AX
	VPMOVMSKB Y3, CX
	SHLQ      $32, CX
	ORQ       CX, AX
	VPCMPEQB  Y0, Y9, Y2
	VPCMPEQB  Y1, Y9, Y3
	VPMOVMSKB Y2, CX
	VPMOVMSKB Y3, DX
	SHLQ      $32, DX
	ORQ       DX, CX
	VPMINUB   Y0, Y1, Y2
	VPMINUB   Y2, Y10, Y3
	VPCMPEQB  Y3, Y2, Y3
	VPMOVMSKB Y3, DX

	XORQ  R9, R9
	MOVQ  0(R10), R11
	TESTQ R11, R11
	JZ    escapes

	// Inside a string: a block without quote, backslash, control
	// character, pending escape or due \u digit holds nothing but
	// string content, which may need attention.
	TESTQ CX, CX
	JNZ   inside
	MOVQ  AX, R12
	ORQ   DX, R12
	ORQ   8(R10), R12
	ORQ   32(R10), R12
	JNZ   inside
	CMPQ  24(R10), $0
	JNE   next
	VPOR      Y0, Y1, Y2
	VPMOVMSKB Y2, R12
	TESTQ     R12, R12
	JZ        next
	MOVQ      $1, 24(R10)
	JMP       next

inside:
	MOVQ $1, R9

escapes:
	// R12 = escaped bytes, as simdjson's find_escaped_branchless;
	// st.escaped = whether the next block's first byte is escaped.
	MOVQ 8(R10), R13
	MOVQ CX, R12
	ORQ  R13, R12
	JZ   unescaped          // R12 = 0
	MOVQ R13, R14
	NOTQ R14
	ANDQ CX, R14            // backslashes, less an escaped first byte
	MOVQ R14, R15
	SHLQ $1, R15
	ORQ  R13, R15           // R15 = follows a backslash
	MOVQ $0x5555555555555555, R11
	MOVQ R11, R12
	NOTQ R12
	ANDQ R14, R12
	MOVQ R15, R13
	NOTQ R13
	ANDQ R13, R12           // backslash runs starting on odd bits
	XORQ R13, R13
	ADDQ R14, R12
	SETCS R13
	MOVQ R13, 8(R10)
	SHLQ $1, R12
	XORQ R11, R12
	ANDQ R15, R12           // escaped bytes

unescaped:
	// AX = unescaped quotes, R11 = inStr, st.inString = its last bit.
	MOVQ  R12, R11
	NOTQ  R11
	ANDQ  R11, AX
	MOVQ  0(R10), R11
	JNZ   quotes
	TESTQ DX, DX
	JZ    checks
	TESTQ R9, R9
	JNZ   bad               // a control character in a string
	JMP   checks

quotes:
	XORQ  R9, R9
	TESTQ DX, DX
	JZ    prefix
	VPMINUB   Y0, Y10, Y2   // DX = the control characters
	VPMINUB   Y1, Y10, Y3
	VPCMPEQB  Y2, Y0, Y2
	VPCMPEQB  Y3, Y1, Y3
	VPMOVMSKB Y2, DX
	VPMOVMSKB Y3, R13
	SHLQ      $32, R13
	ORQ       R13, DX

prefix:
	VMOVQ      AX, X2
	VPCLMULQDQ $0x00, ones<>(SB), X2, X2
	VMOVQ      X2, R13
	XORQ      R13, R11
	MOVQ      R11, R13
	SARQ      $63, R13
	MOVQ      R13, 0(R10)
	ANDQ      R11, DX
	JNZ       bad           // a control character in a string

checks:
	// Escaped bytes must be valid escapes, and the four bytes after \u
	// hex digits (st.uDigits: those due in the next block).
	MOVQ  R12, R13
	ORQ   32(R10), R13
	JZ    strings
	VPSHUFB   Y0, Y4, Y2
	VPSRLW    $4, Y0, Y3
	VPAND     Y14, Y3, Y3
	VPSHUFB   Y3, Y5, Y3
	VPAND     Y3, Y2, Y2    // classes of the first 32 bytes
	VPMOVMSKB Y2, R13       // R13 = u
	VPAND     Y14, Y2, Y3
	VPCMPEQB  Y6, Y3, Y3
	VPMOVMSKB Y3, R15       // R15 = not an escape
	VPAND     Y15, Y2, Y3
	VPCMPEQB  Y6, Y3, Y3
	VPMOVMSKB Y3, DX        // DX = not a hex digit
	VPSHUFB   Y1, Y4, Y2
	VPSRLW    $4, Y1, Y3
	VPAND     Y14, Y3, Y3
	VPSHUFB   Y3, Y5, Y3
	VPAND     Y3, Y2, Y2    // classes of the last 32 bytes
	VPMOVMSKB Y2, R14
	SHLQ      $32, R14
	ORQ       R14, R13
	VPAND     Y14, Y2, Y3
	VPCMPEQB  Y6, Y3, Y3
	VPMOVMSKB Y3, R14
	SHLQ      $32, R14
	ORQ       R14, R15
	VPAND     Y15, Y2, Y3
	VPCMPEQB  Y6, Y3, Y3
	VPMOVMSKB Y3, R14
	SHLQ      $32, R14
	ORQ       R14, DX
	ANDQ      R12, R15
	JNZ       bad           // an invalid escape
	ANDQ      R12, R13      // escaped u
	MOVQ      32(R10), R14
	MOVQ      R13, R15
	SHLQ      $1, R15
	ORQ       R15, R14
	SHLQ      $1, R15
	ORQ       R15, R14
	SHLQ      $1, R15
	ORQ       R15, R14
	SHLQ      $1, R15
	ORQ       R15, R14      // R14 = the digits due in this block
	ANDQ      R14, DX
	JNZ       bad           // a bad \u digit
	SHRQ      $60, R13
	MOVQ      R13, R15
	SHRQ      $1, R15
	ORQ       R15, R13
	SHRQ      $1, R15
	ORQ       R15, R13
	SHRQ      $1, R15
	ORQ       R15, R13
	MOVQ      R13, 32(R10)

strings:
	TESTQ R9, R9
	JNZ   midstring
	MOVQ  R11, R13
	NOTQ  R13               // R13 = outside strings
	XORQ  R15, R15
	TESTQ AX, AX
	JZ    structure         // outside strings from end to end

	// R15 = closing quotes of strings that need attention: that hold a
	// backslash or a byte above 0x7F. Adding those bytes (inside strings)
	// to inStr carries out of each such string into its closing quote
	// (and out of the block, into st.attn, if the string goes on).
	VPMOVMSKB Y0, R12
	VPMOVMSKB Y1, R14
	SHLQ      $32, R14
	ORQ       R14, R12
	ORQ       R12, CX
	ANDQ      R11, CX
	MOVQ      24(R10), R14
	MOVQ      R11, R15
	BTQ       $0, R14
	ADCQ      CX, R15
	SETCS     R14
	MOVQ      R14, 24(R10)
	ANDQ      AX, R15
	ANDQ      R13, R15

	// In a block inside strings from end to end the entries are Q.
	TESTQ R13, R13
	JNZ   structure
	MOVQ  AX, R12
	JMP   record

midstring:
	// A block inside a string from end to end holds no entry.
	CMPQ      24(R10), $0
	JNE       next
	VPOR      Y0, Y1, Y2
	VPMOVMSKB Y2, R13
	ORQ       CX, R13
	JZ        next
	MOVQ      $1, 24(R10)
	JMP       next

structure:
	// CX = whitespace, DX = operators.
	VPSHUFB   Y0, Y11, Y2
	VPCMPEQB  Y2, Y0, Y2
	VPMOVMSKB Y2, CX
	VPSHUFB   Y1, Y11, Y3
	VPCMPEQB  Y3, Y1, Y3
	VPMOVMSKB Y3, DX
	SHLQ      $32, DX
	ORQ       DX, CX
	VPOR      Y0, Y13, Y2
	VPSHUFB   Y0, Y12, Y3
	VPCMPEQB  Y3, Y2, Y2
	VPMOVMSKB Y2, DX
	VPOR      Y1, Y13, Y2
	VPSHUFB   Y1, Y12, Y3
	VPCMPEQB  Y3, Y2, Y2
	VPMOVMSKB Y2, R12
	SHLQ      $32, R12
	ORQ       R12, DX

	// R12 = entries.
	ORQ  DX, CX
	ORQ  AX, CX
	NOTQ CX                 // scalar bytes
	MOVQ CX, R12
	SHLQ $1, R12
	ORQ  16(R10), R12       // follows a scalar byte
	MOVQ CX, R14
	SHRQ $63, R14
	MOVQ R14, 16(R10)
	NOTQ R12
	ANDQ CX, R12            // first bytes of scalar runs
	ORQ  DX, R12
	ANDQ R13, R12
	ORQ  AX, R12
	JZ   next

record:
	LEAQ (SI)(DI*1), DX
	MOVQ R12, 0(R8)
	MOVQ R15, 8(R8)
	MOVQ DX, 16(R8)
	ADDQ $24, R8

next:
	ADDQ $64, SI
	JMP  loop

partial:
	// No whole block left: the padded last block, once, if there is one.
	MOVQ  tail+48(FP), AX
	TESTQ AX, AX
	JZ    done
	MOVQ  $0, tail+48(FP)
	ADDQ  SI, DI
	SUBQ  AX, DI            // DI = the last block's offset - tail
	MOVQ  AX, SI
	LEAQ  64(AX), BX
	JMP   loop

done:
	XORQ R13, R13
	JMP  ret

bad:
	MOVQ $1, R13

ret:
	VZEROUPPER
	ADDQ DI, SI             // the offset of the next block
	SUBQ base+16(FP), SI
	MOVQ SI, read+56(FP)
	MOVQ out+32(FP), AX
	SUBQ AX, R8
	MOVQ R8, AX
	XORQ DX, DX
	MOVQ $24, CX
	DIVQ CX
	MOVQ AX, wrote+64(FP)
	MOVB R13, bad+72(FP)
	RET
