package jsonl

import (
	"encoding/binary"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of objects and arrays a [Scanner]
// accepts, the same limit as encoding/json.
const MaxDepth = 10000

// Scanner is a zero-allocation cursor over JSON text. It walks the values
// of one line in order, validating as it goes, and returns the parts the
// caller asks for as sub-slices of the input ([Value]). Values the caller
// does not ask for are skipped without being decoded; strings are
// unescaped only on request ([Value.AppendText]).
//
// Usage: [Scanner.Reset] with a line, then for each top-level value
// [Scanner.More], then walk it with [Scanner.EnterObject] and
// [Scanner.NextField], [Scanner.EnterArray] and [Scanner.NextElem],
// [Scanner.Value] and [Scanner.Skip]. A value left unread after
// NextField or NextElem is skipped by the next call; containers left open
// are skipped, and validated, by [Scanner.Finish] or the next More. A line
// holding two objects back to back yields two top-level values.
//
// Errors are sticky: after the first error every method returns false or
// a zero Value, and [Scanner.Err] returns a *SyntaxError with the offset.
// The Scanner never panics on any input.
//
// The zero Scanner is ready for Reset. A Scanner is not safe for
// concurrent use; reuse one per goroutine to avoid allocation.
type Scanner struct {
	data    []byte
	pos     int
	err     error
	depth   int  // containers opened by the caller and not yet closed
	first   bool // the innermost open container has no element read yet
	pending bool // a value is due at pos and has not been consumed
	started bool // a top-level value has been announced by More
	start   int  // offset of the current top-level value

	key    []byte // the current key (aliases data, or keyBuf if escaped)
	keyBuf []byte

	// arrays has bit d set when the container at depth d+1 is an array.
	arrays [MaxDepth/64 + 1]uint64
}

// Reset makes the scanner walk data from its beginning.
func (s *Scanner) Reset(data []byte) {
	s.data = data
	s.pos = 0
	s.err = nil
	s.depth = 0
	s.first = false
	s.pending = false
	s.started = false
	s.start = 0
	s.key = nil
}

// Err returns the first error met, or nil. It is a *SyntaxError.
func (s *Scanner) Err() error { return s.err }

// Offset returns the current position in the data.
func (s *Scanner) Offset() int { return s.pos }

// Depth returns the number of containers entered and not yet left.
func (s *Scanner) Depth() int { return s.depth }

// More reports whether another top-level value follows, and prepares it to
// be read. It first finishes the previous top-level value: containers left
// open are skipped and validated. It returns false at the end of the data
// and on error.
func (s *Scanner) More() bool {
	if !s.Finish() {
		return false
	}
	c := s.skipSpace()
	if c == 0 && s.pos >= len(s.data) {
		return false
	}
	s.start = s.pos
	s.started = true
	s.pending = true
	return true
}

// Finish skips, and validates, whatever remains of the current top-level
// value, and reports whether no error occurred.
func (s *Scanner) Finish() bool {
	if s.err != nil {
		return false
	}
	for s.depth > 0 {
		if s.pending {
			s.Skip()
		}
		if s.arrayAt(s.depth) {
			for s.NextElem() {
			}
		} else {
			for s.NextField() {
			}
		}
		if s.err != nil {
			return false
		}
	}
	if s.pending && s.started {
		s.Skip()
	}
	return s.err == nil
}

// Span returns the bytes of the current top-level value from its first
// byte to the current position: the whole value once it has been read or
// finished.
func (s *Scanner) Span() []byte { return s.data[s.start:s.pos] }

// Peek returns the kind of the value due to be read next, without
// consuming it. It returns Invalid when no value is due or the next byte
// cannot start a value.
func (s *Scanner) Peek() Kind {
	if s.err != nil || !s.due() {
		return Invalid
	}
	return kindOf(s.skipSpace())
}

// EnterObject enters the object due to be read next and reports whether
// it did. If the next value is not an object it is left in place (to be
// read with [Scanner.Value] or skipped) and EnterObject returns false
// without error.
func (s *Scanner) EnterObject() bool {
	return s.enter('{')
}

// EnterArray enters the array due to be read next, like
// [Scanner.EnterObject].
func (s *Scanner) EnterArray() bool {
	return s.enter('[')
}

func (s *Scanner) enter(open byte) bool {
	if s.err != nil || !s.due() {
		return false
	}
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
	s.depth++
	s.setArray(s.depth, open == '[')
	s.first = true
	s.pending = false
	return true
}

// due reports whether a value is due to be read, setting up the first
// top-level value after Reset.
func (s *Scanner) due() bool {
	if !s.started && s.depth == 0 {
		s.skipSpace()
		s.start = s.pos
		s.started = true
		s.pending = true
	}
	return s.pending
}

// NextField advances to the next field of the innermost open object and
// reports whether there is one; its key is then [Scanner.Key] and its
// value is due. At the end of the object it leaves the object and returns
// false. An unread value of the previous field is skipped first.
func (s *Scanner) NextField() bool {
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
	s.key = s.data[s.pos+1 : end]
	if esc || !isASCII(s.key) && !utf8.Valid(s.key) {
		s.keyBuf = appendUnescaped(s.keyBuf[:0], s.key)
		s.key = s.keyBuf
	}
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

// Key returns the unescaped key of the current field. It aliases the
// scanned data or an internal buffer and is valid until the next call to
// NextField.
func (s *Scanner) Key() []byte { return s.key }

// NextElem advances to the next element of the innermost open array and
// reports whether there is one; its value is then due. At the end of the
// array it leaves the array and returns false. An unread previous element
// is skipped first.
func (s *Scanner) NextElem() bool {
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

// leave closes the innermost container at s.pos.
func (s *Scanner) leave() {
	s.pos++
	s.depth--
	s.first = false
	s.pending = false
}

// Value reads the value due next and returns it. Strings are returned
// without their quotes and still escaped; objects and arrays are skipped,
// validated, and returned whole. It returns a zero Value (Kind Invalid) if
// no value is due or on error.
func (s *Scanner) Value() Value {
	if s.err != nil || !s.due() {
		return Value{}
	}
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

// Skip skips the value due next, validating it.
func (s *Scanner) Skip() {
	if s.err != nil || !s.due() {
		return
	}
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

func (s *Scanner) arrayAt(depth int) bool {
	d := depth - 1
	return s.arrays[d>>6]&(1<<(uint(d)&63)) != 0
}

func (s *Scanner) setArray(depth int, array bool) {
	d := depth - 1
	if array {
		s.arrays[d>>6] |= 1 << (uint(d) & 63)
	} else {
		s.arrays[d>>6] &^= 1 << (uint(d) & 63)
	}
}

// fail records the first error.
func (s *Scanner) fail(offset int, sentinel error, msg string) {
	if s.err == nil {
		s.pos = offset
		s.err = &SyntaxError{Offset: offset, Msg: msg, Err: sentinel}
	}
}

// unexpected reports byte c at s.pos (or the end of the data) in context.
func (s *Scanner) unexpected(c byte, context string) {
	if s.pos >= len(s.data) {
		s.fail(s.pos, ErrUnexpectedEnd, "unexpected end of JSON input")
		return
	}
	s.fail(s.pos, ErrSyntax, "invalid character "+quoteChar(c)+" "+context)
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
