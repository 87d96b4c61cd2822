package jsonl

import (
	"math/bits"
	"unicode/utf8"
	"unsafe"
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
	ctx     byte // the innermost open container: '{', '[', or 0 at depth 0
	start   int  // offset of the current top-level value

	key    []byte // the current key (aliases data, or keyBuf if escaped)
	keyBuf []byte

	// The structural index (structural.go), when fast is set.
	fast   bool       // the cursor walks the index (indexed.go), not the bytes
	bm     uint64     // entries of the current block not yet consumed
	ba     uint64     // the current block's attention flags (indexedBlock.attn)
	bp     int        // offset of the current block
	bi     int        // index of the current block in blocks
	nb     int        // blocks in the window
	ipos   int        // offset of the next byte to index
	idone  bool       // nothing left to index
	ist    indexState // the indexer's carries between blocks
	blocks [window]indexedBlock
	tail   [blockBytes]byte // the last, partial block, padded

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
	s.ctx = 0
	s.start = 0
	s.key = nil
	s.resetIndex()
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
	if s.fast {
		if e, ok := s.peek(); ok {
			s.pos, s.start, s.started, s.pending = e, e, true, true
			return true
		}
		s.fast = false
	}
	return s.more()
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
	if s.fast {
		if e, ok := s.peek(); ok {
			s.pos = e
			return kindOf(s.data[e])
		}
		s.fast = false
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
	if s.fast {
		if e, ok := s.peek(); ok && s.depth < MaxDepth {
			if s.data[e] != open {
				s.pos = e
				return false
			}
			s.bm &= s.bm - 1
			s.pos = e + 1
			s.opened(open == '[')
			return true
		}
		s.fast = false
	}
	return s.enterBytes(open)
}

// opened records a container entered by the caller.
func (s *Scanner) opened(array bool) {
	s.depth++
	s.setArray(s.depth, array)
	s.ctx = '{'
	if array {
		s.ctx = '['
	}
	s.first = true
	s.pending = false
}

// due reports whether a value is due to be read, setting up the first
// top-level value after Reset.
func (s *Scanner) due() bool {
	if s.started || s.depth != 0 {
		return s.pending
	}
	return s.dueFirst()
}

// dueFirst is due for the first top-level value after Reset.
func (s *Scanner) dueFirst() bool {
	if s.fast {
		if e, ok := s.peek(); ok {
			s.pos, s.start, s.started, s.pending = e, e, true, true
			return true
		}
		s.fast = false
	}
	s.skipSpace()
	s.start = s.pos
	s.started = true
	s.pending = true
	return true
}

// NextField advances to the next field of the innermost open object and
// reports whether there is one; its key is then [Scanner.Key] and its
// value is due. At the end of the object it leaves the object and returns
// false. An unread value of the previous field is skipped first.
func (s *Scanner) NextField() bool {
	if !s.fast || s.ctx != '{' {
		return s.nextField()
	}
	// On the index (see indexed.go): the unread value, ',' or '}', the
	// key's quotes, ':'.
	p := unsafe.Pointer(unsafe.SliceData(s.data))
	m, bp := s.bm, s.bp
	var e, q, colon, bit int
	var c byte
	if s.pending {
		for m == 0 {
			if !s.nextBlock() && !s.advance() {
				goto slow
			}
			m, bp = s.bm, s.bp
		}
		e = bp + bits.TrailingZeros64(m)
		m &= m - 1
		switch entryByte(p, e) {
		case '"':
			for m == 0 {
				if !s.nextBlock() && !s.advance() {
					goto slow
				}
				m, bp = s.bm, s.bp
			}
			m &= m - 1
		case '{', '[':
			s.bm = m
			if _, ok := s.skipContainer(e); !ok {
				goto slow
			}
			m, bp = s.bm, s.bp
		default:
			s.bm = m
			if _, ok := s.scalarAt(e); !ok {
				goto slow
			}
			m, bp = s.bm, s.bp
		}
	}
	for m == 0 {
		if !s.nextBlock() && !s.advance() {
			goto slow
		}
		m, bp = s.bm, s.bp
	}
	e = bp + bits.TrailingZeros64(m)
	m &= m - 1
	c = entryByte(p, e)
	if !s.first {
		if c != ',' {
			if c != '}' {
				goto slow
			}
			s.bm = m
			s.pos = e
			s.leave()
			return false
		}
		for m == 0 {
			if !s.nextBlock() && !s.advance() {
				goto slow
			}
			m, bp = s.bm, s.bp
		}
		e = bp + bits.TrailingZeros64(m)
		m &= m - 1
		c = entryByte(p, e)
	}
	if c != '"' {
		if c != '}' || !s.first {
			goto slow
		}
		s.bm = m
		s.pos = e
		s.leave()
		return false
	}
	for m == 0 {
		if !s.nextBlock() && !s.advance() {
			goto slow
		}
		m, bp = s.bm, s.bp
	}
	bit = bits.TrailingZeros64(m)
	m &= m - 1
	q = bp + bit
	if s.ba>>(bit&63)&1 == 0 {
		s.key = s.data[e+1 : q]
	} else {
		s.setKey(s.data[e+1:q], hasBackslash(s.data[e+1:q]))
	}
	for m == 0 {
		if !s.nextBlock() && !s.advance() {
			goto slow
		}
		m, bp = s.bm, s.bp
	}
	colon = bp + bits.TrailingZeros64(m)
	if entryByte(p, colon) != ':' {
		goto slow
	}
	s.bm = m & (m - 1)
	s.pos = colon + 1
	s.first = false
	s.pending = true
	return true

slow:
	s.fast = false
	return s.nextField()
}

// setKey makes raw, the content of a key string, the current key,
// unescaped if it needs to be.
func (s *Scanner) setKey(raw []byte, esc bool) {
	if esc || !isASCII(raw) && !utf8.Valid(raw) {
		s.keyBuf = appendUnescaped(s.keyBuf[:0], raw)
		raw = s.keyBuf
	}
	s.key = raw
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
	if !s.fast || s.ctx != '[' {
		return s.nextElem()
	}
	// On the index: the unread element, then ',' or ']'.
	if s.pending && !s.skipIndexed() {
		s.fast = false
		return s.nextElem()
	}
	e, ok := s.peek()
	if ok {
		c := entryByte(unsafe.Pointer(unsafe.SliceData(s.data)), e)
		if c == ']' {
			s.bm &= s.bm - 1
			s.pos = e
			s.leave()
			return false
		}
		if s.first {
			s.pos = e
			s.first = false
			s.pending = true
			return true
		}
		if c == ',' {
			s.bm &= s.bm - 1
			if e, ok = s.peek(); ok {
				s.pos = e
				s.pending = true
				return true
			}
		}
	}
	s.fast = false
	return s.nextElem()
}

// leave closes the innermost container at s.pos.
func (s *Scanner) leave() {
	s.pos++
	s.depth--
	s.ctx = 0
	if s.depth > 0 {
		s.ctx = '{'
		if s.arrayAt(s.depth) {
			s.ctx = '['
		}
	}
	s.first = false
	s.pending = false
}

// Value reads the value due next and returns it. Strings are returned
// without their quotes and still escaped; objects and arrays are skipped,
// validated, and returned whole. It returns a zero Value (Kind Invalid) if
// no value is due or on error.
func (s *Scanner) Value() Value {
	if !s.fast || !s.pending {
		if s.err != nil || !s.due() {
			return Value{}
		}
		if !s.fast {
			return s.value()
		}
	}
	{
		data := s.data
		p := unsafe.Pointer(unsafe.SliceData(data))
		m, bp := s.bm, s.bp
		for m == 0 {
			if !s.nextBlock() && !s.advance() {
				goto slow
			}
			m, bp = s.bm, s.bp
		}
		e := bp + bits.TrailingZeros64(m)
		m &= m - 1
		c := entryByte(p, e)
		if c == '"' {
			for m == 0 {
				if !s.nextBlock() && !s.advance() {
					goto slow
				}
				m, bp = s.bm, s.bp
			}
			bit := bits.TrailingZeros64(m)
			s.bm = m & (m - 1)
			q := bp + bit
			s.pos = q + 1
			s.pending = false
			raw := data[e+1 : q]
			if s.ba>>(bit&63)&1 == 0 {
				return Value{raw: raw, kind: String, ascii: true}
			}
			return Value{raw: raw, kind: String, esc: hasBackslash(raw)}
		}
		s.bm = m
		var end int
		var ok bool
		if c == '{' || c == '[' {
			end, ok = s.skipContainer(e)
		} else {
			end, ok = s.scalarAt(e)
		}
		if ok {
			s.pos = end
			s.pending = false
			return Value{raw: data[e:end], kind: kindOf(c)}
		}
	}
slow:
	s.fast = false
	return s.value()
}

// Skip skips the value due next, validating it.
func (s *Scanner) Skip() {
	if !s.fast || !s.pending {
		if s.err != nil || !s.due() {
			return
		}
		if !s.fast {
			s.skip()
			return
		}
	}
	if !s.skipIndexed() {
		s.fast = false
		s.skip()
	}
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

// fail records the first error. The byte-by-byte cursor takes over for
// good: the index is not used after an error.
func (s *Scanner) fail(offset int, sentinel error, msg string) {
	if s.err == nil {
		s.pos = offset
		s.err = &SyntaxError{Offset: offset, Msg: msg, Err: sentinel}
		s.fast = false
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
