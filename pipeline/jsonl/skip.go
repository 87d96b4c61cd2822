package jsonl

import (
	"encoding/binary"
	"math/bits"
)

// SWAR constants: one byte value repeated in each of the 8 bytes of a word.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialMask returns a word whose lowest set high bit marks the first byte
// of w that ends a run of plain string bytes: '"', '\\' or a control
// character below 0x20. Bits above the lowest may be false positives
// (borrows); the lowest set bit is always exact.
func specialMask(w uint64) uint64 {
	q := w ^ (ones * '"')
	b := w ^ (ones * '\\')
	return ((q-ones)&^q | (b-ones)&^b | (w - ones*0x20)) &^ w & highs
}

// scanString scans string content starting at data[i] (just past the
// opening quote). It returns the index of the closing quote and whether
// the content holds escapes. It validates escapes and rejects control
// characters, as encoding/json does; bytes >= 0x80 are not validated
// (invalid UTF-8 is replaced when unescaping, as encoding/json does).
func (s *Scanner) scanString(i int) (end int, esc bool) {
	data := s.data
	// Most strings (keys, ids, short values) end within 16 bytes without
	// escapes: find their end with two words, no call.
	if i+16 <= len(data) {
		if m := specialMask(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			if data[i] == '"' {
				return i, false
			}
		} else if m := specialMask(binary.LittleEndian.Uint64(data[i+8:])); m != 0 {
			i += 8 + bits.TrailingZeros64(m)>>3
			if data[i] == '"' {
				return i, false
			}
		} else {
			i += 16
		}
	}
	for {
		var e bool
		i, e = stringStop(data, i)
		esc = esc || e
		if i >= len(data) {
			s.fail(len(data), ErrUnexpectedEnd, "unexpected end of JSON input")
			return 0, false
		}
		switch c := data[i]; c {
		case '"':
			return i, esc
		case '\\':
			esc = true
			if i+1 >= len(data) {
				s.fail(len(data), ErrUnexpectedEnd, "unexpected end of JSON input")
				return 0, false
			}
			switch e := data[i+1]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					for j := i + 2; j < len(data); j++ {
						if !isHex(data[j]) {
							s.fail(j, ErrSyntax, "invalid character "+quoteChar(data[j])+" in \\u hexadecimal character escape")
							return 0, false
						}
					}
					s.fail(len(data), ErrUnexpectedEnd, "unexpected end of JSON input")
					return 0, false
				}
				for j := i + 2; j < i+6; j++ {
					if !isHex(data[j]) {
						s.fail(j, ErrSyntax, "invalid character "+quoteChar(data[j])+" in \\u hexadecimal character escape")
						return 0, false
					}
				}
				i += 6
			default:
				s.fail(i+1, ErrSyntax, "invalid character "+quoteChar(e)+" in string escape code")
				return 0, false
			}
		default:
			s.fail(i, ErrSyntax, "invalid character "+quoteChar(c)+" in string literal")
			return 0, false
		}
	}
}

// indexSpecialPortable returns the index of the first byte at or after i that is
// '"', '\\' or below 0x20, or len(data) if there is none. It reads eight
// bytes at a time.
func indexSpecialPortable(data []byte, i int) int {
	for ; i+8 <= len(data); i += 8 {
		if m := specialMask(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(data); i++ {
		if c := data[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

func isHex(c byte) bool {
	return c-'0' < 10 || (c|0x20)-'a' < 6
}

// skipScalar skips the number or literal starting with c at s.pos.
func (s *Scanner) skipScalar(c byte) {
	switch {
	case c == '-' || c-'0' < 10:
		s.pos = s.scanNumber(s.pos)
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	default:
		s.unexpected(c, "looking for beginning of value")
	}
}

func (s *Scanner) literal(lit string) {
	data := s.data
	for k := 1; k < len(lit); k++ {
		i := s.pos + k
		if i >= len(data) {
			s.fail(len(data), ErrUnexpectedEnd, "unexpected end of JSON input")
			return
		}
		if data[i] != lit[k] {
			s.fail(i, ErrSyntax, "invalid character "+quoteChar(data[i])+" in literal "+lit+" (expecting "+quoteChar(lit[k])+")")
			return
		}
	}
	s.pos += len(lit)
}

// scanNumber validates the number starting at data[i] and returns the index
// just past it. The grammar is RFC 8259's:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *Scanner) scanNumber(i int) int {
	data := s.data
	n := len(data)
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= n:
		s.fail(n, ErrUnexpectedEnd, "unexpected end of JSON input")
		return i
	case data[i] == '0':
		i++
	case data[i]-'1' < 9:
		for i++; i < n && data[i]-'0' < 10; i++ {
		}
	default:
		s.fail(i, ErrSyntax, "invalid character "+quoteChar(data[i])+" in numeric literal")
		return i
	}
	if i < n && data[i] == '.' {
		i++
		if i >= n {
			s.fail(n, ErrUnexpectedEnd, "unexpected end of JSON input")
			return i
		}
		if data[i]-'0' >= 10 {
			s.fail(i, ErrSyntax, "invalid character "+quoteChar(data[i])+" after decimal point in numeric literal")
			return i
		}
		for i++; i < n && data[i]-'0' < 10; i++ {
		}
	}
	if i < n && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= n {
			s.fail(n, ErrUnexpectedEnd, "unexpected end of JSON input")
			return i
		}
		if data[i]-'0' >= 10 {
			s.fail(i, ErrSyntax, "invalid character "+quoteChar(data[i])+" in exponent of numeric literal")
			return i
		}
		for i++; i < n && data[i]-'0' < 10; i++ {
		}
	}
	return i
}

// skipValue skips, and validates, the object or array starting at s.pos.
// It walks nested containers iteratively, recording their kinds above the
// caller's depth.
func (s *Scanner) skipValue() {
	data := s.data
	n := len(data)
	base := s.depth
	d := base
	i := s.pos
	for {
		// A value starts at i (whitespace already skipped).
		if i >= n {
			s.fail(n, ErrUnexpectedEnd, "unexpected end of JSON input")
			return
		}
		switch c := data[i]; {
		case c == '"':
			end, _ := s.scanString(i + 1)
			if s.err != nil {
				return
			}
			i = end + 1
		case c == '{' || c == '[':
			if d >= MaxDepth {
				s.fail(i, ErrTooDeep, "exceeded max depth")
				return
			}
			d++
			s.setArray(d, c == '[')
			i = skipSpaceAt(data, i+1)
			if i < n && data[i] == c+2 { // '{'+2 == '}', '['+2 == ']'
				i++
				d--
				break
			}
			if c == '{' {
				if i = s.objectKey(i, "looking for beginning of object key string"); s.err != nil {
					return
				}
			}
			continue
		default:
			s.pos = i
			s.skipScalar(c)
			if s.err != nil {
				return
			}
			i = s.pos
		}

		// A value ended at i: close finished containers, or move on to
		// the next element.
		for d > base {
			i = skipSpaceAt(data, i)
			if i >= n {
				s.fail(n, ErrUnexpectedEnd, "unexpected end of JSON input")
				return
			}
			c := data[i]
			array := s.arrayAt(d)
			if c == ',' {
				i = skipSpaceAt(data, i+1)
				if !array {
					if i = s.objectKey(i, "looking for beginning of object key string"); s.err != nil {
						return
					}
				}
				break
			}
			if (array && c == ']') || (!array && c == '}') {
				i++
				d--
				continue
			}
			s.pos = i
			if array {
				s.unexpected(c, "after array element")
			} else {
				s.unexpected(c, "after object key:value pair")
			}
			return
		}
		if d == base {
			s.pos = i
			return
		}
	}
}

// objectKey scans `"key" :` at data[i] and returns the index of the value
// after it, whitespace skipped.
func (s *Scanner) objectKey(i int, context string) int {
	data := s.data
	if i >= len(data) || data[i] != '"' {
		s.pos = i
		s.unexpected(byteAt(data, i), context)
		return i
	}
	end, _ := s.scanString(i + 1)
	if s.err != nil {
		return i
	}
	i = skipSpaceAt(data, end+1)
	if i >= len(data) || data[i] != ':' {
		s.pos = i
		s.unexpected(byteAt(data, i), "after object key")
		return i
	}
	return skipSpaceAt(data, i+1)
}

func byteAt(data []byte, i int) byte {
	if i < len(data) {
		return data[i]
	}
	return 0
}

func skipSpaceAt(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
