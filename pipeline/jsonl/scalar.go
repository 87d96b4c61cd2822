package jsonl

import (
	"encoding/binary"
	"unicode/utf8"
)

// The byte-by-byte cursor: the Scanner's methods when no structural index
// is used (off amd64, or after the index handed over). They are the
// reference for the indexed cursor, which must behave identically.

// more is More after Finish: it looks for the next top-level value.
func (s *Scanner) more() bool {
	c := s.skipSpace()
	if c == 0 && s.pos >= len(s.data) {
		return false
	}
	s.start = s.pos
	s.started = true
	s.pending = true
	return true
}

// enterBytes is enter once a value is due.
func (s *Scanner) enterBytes(open byte) bool {
	c := s.skipSpace()
	if c != open {
		if s.pos >= len(s.data) {
			s.fail(s.pos, ErrUnexpectedEnd, "unexpected end of JSON input")
		}
		return false
	}
	if s.depth >= MaxDepth {
		s.fail(s.pos, ErrTooDeep, "exceeded max depth")
		return false
	}
	s.pos++
	s.opened(open == '[')
	return true
}

// nextField is NextField.
func (s *Scanner) nextField() bool {
	if s.err != nil {
		return false
	}
	if s.depth == 0 || s.arrayAt(s.depth) {
		s.fail(s.pos, ErrMisuse, "NextField outside an object")
		return false
	}
	if s.pending {
		s.Skip()
		if s.err != nil {
			return false
		}
	}
	c := s.skipSpace()
	if c == '}' {
		s.leave()
		return false
	}
	if !s.first {
		if c != ',' {
			s.unexpected(c, "after object key:value pair")
			return false
		}
		s.pos++
		c = s.skipSpace()
	}
	if c != '"' {
		s.unexpected(c, "looking for beginning of object key string")
		return false
	}
	end, esc := s.scanString(s.pos + 1)
	if s.err != nil {
		return false
	}
	s.setKey(s.data[s.pos+1:end], esc)
	s.pos = end + 1
	if c = s.skipSpace(); c != ':' {
		s.unexpected(c, "after object key")
		return false
	}
	s.pos++
	s.first = false
	s.pending = true
	return true
}

// nextElem is NextElem.
func (s *Scanner) nextElem() bool {
	if s.err != nil {
		return false
	}
	if s.depth == 0 || !s.arrayAt(s.depth) {
		s.fail(s.pos, ErrMisuse, "NextElem outside an array")
		return false
	}
	if s.pending {
		s.Skip()
		if s.err != nil {
			return false
		}
	}
	c := s.skipSpace()
	if c == ']' {
		s.leave()
		return false
	}
	if !s.first {
		if c != ',' {
			s.unexpected(c, "after array element")
			return false
		}
		s.pos++
		s.skipSpace()
	}
	s.first = false
	s.pending = true
	return true
}

// value is Value once a value is due.
func (s *Scanner) value() Value {
	c := s.skipSpace()
	start := s.pos
	switch {
	case c == '"':
		end, esc := s.scanString(start + 1)
		if s.err != nil {
			return Value{}
		}
		s.pos = end + 1
		s.pending = false
		return Value{raw: s.data[start+1 : end], kind: String, esc: esc}
	case c == '{' || c == '[':
		s.skipValue()
	default:
		s.skipScalar(c)
	}
	if s.err != nil {
		return Value{}
	}
	s.pending = false
	return Value{raw: s.data[start:s.pos], kind: kindOf(c)}
}

// skip is Skip once a value is due.
func (s *Scanner) skip() {
	c := s.skipSpace()
	switch {
	case c == '"':
		end, _ := s.scanString(s.pos + 1)
		if s.err != nil {
			return
		}
		s.pos = end + 1
	case c == '{' || c == '[':
		s.skipValue()
	default:
		s.skipScalar(c)
	}
	if s.err == nil {
		s.pending = false
	}
}

// skipSpace advances past JSON whitespace and returns the next byte, or 0
// at the end of the data.
func (s *Scanner) skipSpace() byte {
	data, i := s.data, s.pos
	for i < len(data) {
		c := data[i]
		if c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			s.pos = i
			return c
		}
		i++
	}
	s.pos = i
	return 0
}

// isASCII reports whether b holds only ASCII bytes, eight at a time.
func isASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&highs != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
