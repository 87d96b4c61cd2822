package jsonl

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// The indexed cursor: the Scanner's steps on the structural index
// (structural.go) instead of the bytes. Each fails (ok false), leaving the
// Scanner's visible state as it was or as a successful Skip of the pending
// value leaves it, when it cannot vouch for what it read: the index ran
// out, or the bytes do not follow the grammar. The method then hands over
// to the byte-by-byte cursor (scalar.go), for good: it repeats the step
// from that state and reports any error exactly.
//
// Between two entries outside strings there is only whitespace: every
// other byte is a structural byte, a quote, or part of a number or
// literal, whose first byte is an entry and whose end is checked.
//
// The hot steps keep the unconsumed entries of the current block (s.bm)
// and its offset (s.bp) in locals m and bp, and read the next entry as
//
//	for m == 0 { if !s.nextBlock() && !s.advance() { return …, false }; m, bp = s.bm, s.bp }
//	e = bp + bits.TrailingZeros64(m); m &= m - 1
//
// storing m back into s.bm when they succeed. (A loop rather than an if
// lets the compiler know that m is not zero after it.)

// entryByte returns the byte at offset i of the data p points to, without
// a bounds check: i must be an entry, and refill makes sure that every
// entry lies in the data.
func entryByte(p unsafe.Pointer, i int) byte {
	return *(*byte)(unsafe.Add(p, i))
}

// peek returns the offset of the next entry without consuming it.
func (s *Scanner) peek() (int, bool) {
	if s.bm == 0 && !s.advance() {
		return 0, false
	}
	return s.bp + bits.TrailingZeros64(s.bm), true
}

// isSpace reports whether c is JSON whitespace.
func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r'
}

// hasBackslash reports whether b holds a backslash.
func hasBackslash(b []byte) bool {
	return bytes.IndexByte(b, '\\') >= 0
}

// scalarAt validates the number or literal at entry p, just consumed, and
// returns the offset just past it. What follows must be whitespace, the
// end of the data, or the next entry.
func (s *Scanner) scalarAt(p int) (int, bool) {
	data := s.data
	end := -1
	if p+8 <= len(data) {
		// The usual cases in eight bytes: a literal, or an integer of up
		// to seven digits without sign, fraction or exponent.
		x := binary.LittleEndian.Uint64(data[p:])
		switch uint32(x) {
		case 't' | 'r'<<8 | 'u'<<16 | 'e'<<24, 'n' | 'u'<<8 | 'l'<<16 | 'l'<<24:
			end = p + 4
		case 'f' | 'a'<<8 | 'l'<<16 | 's'<<24:
			if byte(x>>32) == 'e' {
				end = p + 5
			}
		default:
			if nd := ((x - ones*'0') | (x + ones*0x46)) & highs; nd != 0 {
				k := bits.TrailingZeros64(nd) >> 3
				if c := byte(x >> (k * 8)); k > 0 && (k == 1 || byte(x) != '0') && c != '.' && c|0x20 != 'e' {
					end = p + k
				}
			}
		}
	}
	if end < 0 {
		if end = scalarEnd(data, p); end < 0 {
			return 0, false
		}
	}
	if end < len(data) && !isSpace(data[end]) {
		if e, ok := s.peek(); !ok || e != end {
			return 0, false
		}
	}
	return end, true
}

// skipIndexed is Skip once a value is due.
func (s *Scanner) skipIndexed() bool {
	m, bp := s.bm, s.bp
	for m == 0 {
		if !s.nextBlock() && !s.advance() {
			return false
		}
		m, bp = s.bm, s.bp
	}
	e := bp + bits.TrailingZeros64(m)
	m &= m - 1
	var end int
	var ok bool
	switch entryByte(unsafe.Pointer(unsafe.SliceData(s.data)), e) {
	case '"':
		for m == 0 {
			if !s.nextBlock() && !s.advance() {
				return false
			}
			m, bp = s.bm, s.bp
		}
		end = bp + bits.TrailingZeros64(m) + 1
		s.bm = m & (m - 1)
		ok = true
	case '{', '[':
		s.bm = m
		end, ok = s.skipContainer(e)
	default:
		s.bm = m
		end, ok = s.scalarAt(e)
	}
	if ok {
		s.pos = end
		s.pending = false
	}
	return ok
}

// skipContainer skips the object or array whose opening byte, at entry
// at, was just consumed, and returns the offset just past its end. It
// checks the grammar of every nested value; it hands over containers
// nested more than 63 deep within it.
func (s *Scanner) skipContainer(at int) (int, bool) {
	data := s.data
	p := unsafe.Pointer(unsafe.SliceData(data))
	if s.depth >= MaxDepth {
		return 0, false
	}
	m, bp := s.bm, s.bp
	var arrays uint64 // bit d-1: the container at nesting d (1 at at) is an array
	if entryByte(p, at) == '[' {
		arrays = 1
	}
	d := 1
	var e, end int
	var c byte

opened:
	for m == 0 {
		if !s.nextBlock() && !s.advance() {
			return 0, false
		}
		m, bp = s.bm, s.bp
	}
	e = bp + bits.TrailingZeros64(m)
	m &= m - 1
	c = entryByte(p, e)
	if arrays&(1<<(d-1)) != 0 {
		if c == ']' {
			goto closed
		}
		goto value
	}
	if c == '}' {
		goto closed
	}

key:
	if c != '"' {
		return 0, false
	}
	for m == 0 {
		if !s.nextBlock() && !s.advance() {
			return 0, false
		}
		m, bp = s.bm, s.bp
	}
	m &= m - 1 // the closing quote
	for m == 0 {
		if !s.nextBlock() && !s.advance() {
			return 0, false
		}
		m, bp = s.bm, s.bp
	}
	e = bp + bits.TrailingZeros64(m)
	m &= m - 1
	if entryByte(p, e) != ':' {
		return 0, false
	}
	for m == 0 {
		if !s.nextBlock() && !s.advance() {
			return 0, false
		}
		m, bp = s.bm, s.bp
	}
	e = bp + bits.TrailingZeros64(m)
	m &= m - 1
	c = entryByte(p, e)

value:
	switch c {
	case '"':
		for m == 0 {
			if !s.nextBlock() && !s.advance() {
				return 0, false
			}
			m, bp = s.bm, s.bp
		}
		m &= m - 1 // the closing quote
	case '{', '[':
		if d >= 63 || s.depth+d >= MaxDepth {
			return 0, false
		}
		d++
		if c == '[' {
			arrays |= 1 << (d - 1)
		} else {
			arrays &^= 1 << (d - 1)
		}
		goto opened
	default:
		if end = scalarEnd(data, e); end < 0 {
			return 0, false
		}
		if end < len(data) && !isSpace(data[end]) {
			for m == 0 {
				if !s.nextBlock() && !s.advance() {
					return 0, false
				}
				m, bp = s.bm, s.bp
			}
			if bp+bits.TrailingZeros64(m) != end {
				return 0, false
			}
		}
	}

after:
	// A value ended: a comma, or the end of its container.
	for m == 0 {
		if !s.nextBlock() && !s.advance() {
			return 0, false
		}
		m, bp = s.bm, s.bp
	}
	e = bp + bits.TrailingZeros64(m)
	m &= m - 1
	c = entryByte(p, e)
	if c == ',' {
		for m == 0 {
			if !s.nextBlock() && !s.advance() {
				return 0, false
			}
			m, bp = s.bm, s.bp
		}
		e = bp + bits.TrailingZeros64(m)
		m &= m - 1
		c = entryByte(p, e)
		if arrays&(1<<(d-1)) != 0 {
			goto value
		}
		goto key
	}
	if arrays&(1<<(d-1)) != 0 {
		if c != ']' {
			return 0, false
		}
	} else if c != '}' {
		return 0, false
	}

closed:
	if d--; d == 0 {
		s.bm = m
		return e + 1, true
	}
	goto after
}

// scalarEnd returns the offset just past the number or literal at
// data[p], or -1 if there is none there.
func scalarEnd(data []byte, p int) int {
	switch c := data[p]; {
	case c-'0' < 10 || c == '-':
		return numberEnd(data, p)
	case c == 't':
		if p+4 <= len(data) && string(data[p:p+4]) == "true" {
			return p + 4
		}
	case c == 'f':
		if p+5 <= len(data) && string(data[p:p+5]) == "false" {
			return p + 5
		}
	case c == 'n':
		if p+4 <= len(data) && string(data[p:p+4]) == "null" {
			return p + 4
		}
	}
	return -1
}

// numberEnd returns the offset just past the number at data[i], or -1 if
// it does not follow RFC 8259's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberEnd(data []byte, i int) int {
	n := len(data)
	if data[i] == '-' {
		if i++; i >= n {
			return -1
		}
	}
	switch c := data[i]; {
	case c == '0':
		i++
	case c-'1' < 9:
		i = digitsEnd(data, i+1)
	default:
		return -1
	}
	if i < n && data[i] == '.' {
		if i++; i >= n || data[i]-'0' >= 10 {
			return -1
		}
		i = digitsEnd(data, i+1)
	}
	if i < n && data[i]|0x20 == 'e' {
		if i++; i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= n || data[i]-'0' >= 10 {
			return -1
		}
		i = digitsEnd(data, i+1)
	}
	return i
}

// digitsEnd returns the offset of the first byte at or after i that is
// not a decimal digit, or len(data). It reads eight bytes at a time: a
// byte is not a digit if subtracting '0' borrows or adding 0x46 reaches
// 0x80; borrows and carries between bytes only disturb the bytes above
// the lowest non-digit.
func digitsEnd(data []byte, i int) int {
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		if nd := ((x - ones*'0') | (x + ones*0x46)) & highs; nd != 0 {
			return i + bits.TrailingZeros64(nd)>>3
		}
	}
	for i < len(data) && data[i]-'0' < 10 {
		i++
	}
	return i
}
