package redact

import (
	"encoding/binary"
	"math/bits"
)

// The strings of a JSON text
//
// [Redactor.JSON] walks the strings of its input with a strCursor, which
// reads the input once, 64 bytes at a time (with AVX2, strings_amd64.s),
// into masks of its quotes, its backslashes and the escaped bytes (as
// simdjson does). From them it knows where each string ends, whether the
// string holds a backslash and whether it holds an escape that may hide
// an anchor or an assignment (see stringEnd), without going back over
// the string once per escape: tool results are JSON printed inside
// strings, with \" and \n every few bytes.

// blockBytes is the cursor's unit.
const blockBytes = 64

// strCursor walks the blocks of raw in order. Its queries take offsets
// that never decrease.
type strCursor struct {
	raw   []byte
	pos   int    // offset of the current block
	quote uint64 // the current block's quotes
	close uint64 // its quotes that are not escaped
	bs    uint64 // its backslashes
	slash uint64 // its escaped '/', and those right after an escaped backslash
	u     uint64 // its escaped 'u', and those right after an escaped backslash
	carry uint64 // 1 if the next block's first byte is escaped
	after uint64 // 1 if the next block's first byte follows an escaped backslash
}

// strFlags tells what a string's content holds.
type strFlags uint8

const (
	strBackslash strFlags = 1 << iota // a backslash
	strHides                          // an escape that may hide an anchor or an assignment: see stringEnd
)

// init sets the cursor on the first block of raw.
func (c *strCursor) init(raw []byte) {
	*c = strCursor{raw: raw, pos: -blockBytes}
	c.advance()
}

// advance moves to the next block and reports whether there is one.
func (c *strCursor) advance() bool {
	c.pos += blockBytes
	if c.pos >= len(c.raw) {
		c.quote, c.close, c.bs, c.slash, c.u = 0, 0, 0, 0, 0
		return false
	}
	var (
		p    *[blockBytes]byte
		tail [blockBytes]byte
	)
	if len(c.raw)-c.pos >= blockBytes {
		p = (*[blockBytes]byte)(c.raw[c.pos:])
	} else {
		// The last, partial block, from a copy padded with zeros (no
		// byte of any class).
		copy(tail[:], c.raw[c.pos:])
		p = &tail
	}
	q, b, sl, u, all := classify(p)
	// Escaped bytes, as in simdjson's find_escaped_branchless: the bytes
	// after an odd-length run of backslashes.
	var esc uint64
	if b|c.carry != 0 {
		const even = 0x5555555555555555
		bs := b &^ c.carry
		follows := bs<<1 | c.carry
		oddStarts := bs &^ even &^ follows
		sum, carry := bits.Add64(oddStarts, bs, 0)
		c.carry = carry
		esc = (even ^ sum<<1) & follows
	}
	// The bytes right after an escaped backslash: JSON printed in a
	// string unescapes to escapes of its own there (\\/ to \/, \\u0041
	// to \u0041), which findText1 undoes in turn.
	var after uint64
	if eb := b & esc; eb|c.after != 0 {
		after = eb<<1 | c.after
		c.after = eb >> 63
	}
	if !all {
		for m := esc | after; m != 0; m &= m - 1 {
			switch i := bits.TrailingZeros64(m); p[i] {
			case '/':
				sl |= 1 << i
			case 'u':
				u |= 1 << i
			}
		}
	}
	c.quote, c.close, c.bs = q, q&^esc, b
	c.slash, c.u = sl&(esc|after), u&(esc|after)
	return true
}

// from returns the bits of m at or after offset p of the current block
// (p >= c.pos).
func (c *strCursor) from(m uint64, p int) uint64 {
	if off := p - c.pos; off > 0 {
		return m &^ (1<<uint(off) - 1) // 0 when off >= 64
	}
	return m
}

// nextQuote returns the offset of the first quote at or after p, escaped
// or not, or -1.
func (c *strCursor) nextQuote(p int) int {
	for {
		if m := c.from(c.quote, p); m != 0 {
			return c.pos + bits.TrailingZeros64(m)
		}
		if !c.advance() {
			return -1
		}
	}
}

// stringEnd returns the offset of the first quote at or after s that is
// not escaped (the end of the string whose content starts at s, after its
// opening quote), or len(raw), and what the content holds: a backslash,
// and an escape that may hide an anchor or an assignment (strHides): \/
// or a \u escape that hidesU tells may, here or one level down (\\/ and
// \\u of JSON printed in the string, which findText1 unescapes too).
func (c *strCursor) stringEnd(s int) (e int, f strFlags) {
	for {
		end := c.from(c.close, s)
		// The bits of the content in this block: from s to the end.
		in := c.from(^uint64(0), s)
		if end != 0 {
			in &= end&-end - 1
		}
		if c.bs&in != 0 {
			f |= strBackslash
		}
		// Not only where this block holds a backslash: an escape may
		// begin at the end of the block before.
		if c.slash&in != 0 || c.u&in != 0 && c.hidesU(c.u&in) {
			f |= strHides
		}
		if end != 0 {
			return c.pos + bits.TrailingZeros64(end), f
		}
		if !c.advance() {
			return len(c.raw), f
		}
	}
}

// hidesU reports whether one of the u of the current block in m (escaped,
// or right after an escaped backslash) starts a \u escape that may hide
// an anchor or an assignment: of a byte anchors are made of or of one
// that [mayAssign] skips, or one whose hex digits are not written out
// (they may come from escapes one level down). Its hex digits never run
// past the string: its closing quote is not one.
func (c *strCursor) hidesU(m uint64) bool {
	for ; m != 0; m &= m - 1 {
		i := c.pos + bits.TrailingZeros64(m)
		if r, ok := hex4(c.raw, i+1); !ok || r < 0x80 && hidingBytes[r] {
			return true
		}
	}
	return false
}

// hidingBytes holds the bytes whose \u escape may hide an anchor or an
// assignment: those anchors are made of, and the quotes, backslash and
// blanks [mayAssign] skips.
var hidingBytes = func() [128]bool {
	set := anchorBytes
	for _, c := range "\"'`\\ \t" {
		set[c] = true
	}
	return set
}()

// classifyPortable returns the masks of the bytes of p that are '"' and
// '\\', in Go, eight bytes a step.
func classifyPortable(p *[blockBytes]byte) (quote, bslash uint64) {
	for i := 0; i < blockBytes; i += 8 {
		w := binary.LittleEndian.Uint64(p[i:])
		quote |= eqMask(w, '"') << i
		bslash |= eqMask(w, '\\') << i
	}
	return quote, bslash
}

// eqMask returns the 8-bit mask of the bytes of w (little-endian) equal
// to x.
func eqMask(w uint64, x byte) uint64 {
	const lo7, hi = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	v := w ^ 0x0101010101010101*uint64(x)
	zero := ^((v&lo7 + lo7) | v) & hi // high bit of each zero byte
	return (zero >> 7) * 0x0102040810204080 >> 56
}
