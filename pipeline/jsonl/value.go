package jsonl

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Kind is the type of a JSON value.
type Kind uint8

// The kinds of JSON values. Invalid is the zero Kind: no value.
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Object
	Array
)

var kindNames = [...]string{"invalid", "null", "bool", "number", "string", "object", "array"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// kindOf returns the kind of value starting with byte c.
func kindOf(c byte) Kind {
	switch {
	case c == '"':
		return String
	case c == '{':
		return Object
	case c == '[':
		return Array
	case c == 't' || c == 'f':
		return Bool
	case c == 'n':
		return Null
	case c == '-' || c-'0' < 10:
		return Number
	}
	return Invalid
}

// Value is one JSON value read by a [Scanner]. It aliases the scanned data
// and is valid as long as that data is. A string Value holds the content
// between the quotes, still escaped; other kinds hold their JSON text.
// The zero Value has kind Invalid.
type Value struct {
	raw   []byte
	kind  Kind
	esc   bool // a string holding a backslash
	ascii bool // a string known to hold only ASCII and no backslash
}

// Kind returns the value's kind.
func (v Value) Kind() Kind { return v.kind }

// Raw returns the value's bytes: the escaped content of a string, or the
// JSON text of any other kind. It is a sub-slice of the data given to
// [Scanner.Reset] whose capacity runs to the end of that data, so that
// cap(data)-cap(v.Raw()) is the value's offset (parsers rely on it).
func (v Value) Raw() []byte { return v.raw }

// IsNull reports whether the value is JSON null.
func (v Value) IsNull() bool { return v.kind == Null }

// Escaped reports whether a string value contains escape sequences.
func (v Value) Escaped() bool { return v.esc }

// Plain reports whether v is a string whose raw bytes are its text as
// they stand: no escape and valid UTF-8, so that [Value.Raw] can be used
// without [Value.AppendText]. It costs nothing when the structural index
// has already seen that the string is plain ASCII, which is the common
// case for identifiers, timestamps and model names.
func (v Value) Plain() bool {
	return v.kind == String && (v.ascii || !v.esc && utf8.Valid(v.raw))
}

// Bool returns a boolean's value; ok is false for any other kind.
func (v Value) Bool() (b, ok bool) {
	if v.kind != Bool {
		return false, false
	}
	return v.raw[0] == 't', true
}

// Int returns a number's value as an int64. ok is false if the value is
// not a number, has a fraction or exponent, or overflows int64.
func (v Value) Int() (n int64, ok bool) {
	if v.kind != Number {
		return 0, false
	}
	b := v.raw
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false // not a number, or beyond int64 (19 digits)
	}
	var u uint64
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		u = u*10 + uint64(d)
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// Float returns a number's value as a float64; ok is false for any other
// kind or when the number is out of range.
func (v Value) Float() (f float64, ok bool) {
	if v.kind != Number {
		return 0, false
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(v.raw), len(v.raw)), 64)
	return f, err == nil
}

// AppendText appends the unescaped text of a string value to dst, as
// encoding/json would decode it: escapes resolved, surrogate pairs joined,
// lone surrogates and invalid UTF-8 bytes replaced by U+FFFD. For other
// kinds it appends the raw JSON text.
func (v Value) AppendText(dst []byte) []byte {
	if v.kind != String {
		return append(dst, v.raw...)
	}
	if v.Plain() {
		return append(dst, v.raw...)
	}
	return unescape(dst, v.raw)
}

// unescape appends the decoded text of escaped string content b: in one
// pass (AppendUnescaped), or, for content the scanner would have refused,
// escape by escape.
func unescape(dst, b []byte) []byte {
	if out, ok := AppendUnescaped(dst, b); ok {
		return out
	}
	return appendUnescaped(dst, b)
}

// String returns the unescaped text of a string value (see
// [Value.AppendText]), or the raw JSON text of other kinds. It allocates
// once, twice when escapes make the text shorter than the raw value by
// more than an eighth (and 64 bytes).
func (v Value) String() string {
	if v.Plain() {
		return string(v.raw)
	}
	b := v.AppendText(nil)
	if waste := len(v.raw) - len(b); waste > 64 && waste > len(v.raw)/8 {
		// Escapes shrank the text by more than an eighth: a copy of its
		// size rather than a string that keeps the raw value's room.
		return string(b)
	}
	// b is this call's own, never written again: the string is its bytes.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Equal reports whether v is a string whose decoded text (as String
// returns it) equals s. It allocates only to decode a string longer than
// 128 bytes that holds escapes or invalid UTF-8, and costs about a
// comparison of the shorter of the two otherwise.
func (v Value) Equal(s string) bool {
	if v.kind != String {
		return false
	}
	if !v.esc {
		// Decoding copies valid bytes and turns each invalid one into
		// the three bytes of U+FFFD: the text is never shorter than raw,
		// and it is raw itself when raw is valid.
		if string(v.raw) == s {
			return v.ascii || utf8.ValidString(s)
		}
		if v.ascii || len(v.raw) > len(s) || utf8.Valid(v.raw) {
			return false
		}
	} else if len(v.raw) > 6*len(s) {
		return false // an escape is at most six bytes for one of text
	}
	var buf [128]byte
	if len(s) > len(buf) {
		return string(unescape(nil, v.raw)) == s
	}
	return string(unescape(buf[:0], v.raw)) == s
}

// AppendUnescaped appends the decoded text of b, the content of a JSON
// string, as [Value.AppendText] decodes it; ok is false, and what it appended is
// to be dropped, at an escape the scanner would have refused or a
// backslash that ends b.
//
// The text is written into room made for all of b at once: but for an
// invalid byte (replaced by the three bytes of U+FFFD, after which room
// is made again), no part of b decodes to more bytes than it has. ASCII
// is read and written eight bytes at a time, each word stored whole and
// kept up to its first backslash or byte above 0x7F (the bytes stored
// past it are overwritten next); a run from a byte above 0x7F to the
// next backslash is checked and copied whole.
//
// Decoding a prefix of a string's content gives a prefix of its text
// but for the last few bytes: at most 3 bytes each for the up to 3 bytes
// of a character cut short, or 3 for half a surrogate pair.
func AppendUnescaped(dst, b []byte) (out []byte, ok bool) {
	const (
		ones      = 0x0101010101010101
		highs     = 0x8080808080808080
		backslash = 0x5C * ones
	)
	w := len(dst)
	dst = slices.Grow(dst, len(b))
	buf := dst[:cap(dst)] // len(buf)-w >= len(b)-i throughout
	for i := 0; i < len(b); {
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			binary.LittleEndian.PutUint64(buf[w:], x)
			y := x ^ backslash // a zero byte where b holds a backslash
			// The lowest byte flagged is the first backslash or byte
			// above 0x7F: a borrow only disturbs the bytes above it.
			if m := ((y-ones)&^y | x) & highs; m != 0 {
				k := bits.TrailingZeros64(m) >> 3
				i, w = i+k, w+k
				goto special
			}
			i, w = i+8, w+8
		}
		for i < len(b) && b[i] != '\\' && b[i] < utf8.RuneSelf {
			buf[w] = b[i]
			i, w = i+1, w+1
		}
		if i == len(b) {
			break
		}
	special:
		if b[i] >= utf8.RuneSelf {
			k := bytes.IndexByte(b[i:], '\\')
			if k < 0 {
				k = len(b) - i
			}
			if run := b[i : i+k]; utf8.Valid(run) {
				w += copy(buf[w:], run)
			} else {
				dst = AppendValidUTF8(buf[:w], run)
				w = len(dst)
				dst = slices.Grow(dst, len(b)-i-k)
				buf = dst[:cap(dst)]
			}
			i += k
			continue
		}
		if i+1 == len(b) {
			return buf[:w], false
		}
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			buf[w] = e
		case 'b':
			buf[w] = '\b'
		case 'f':
			buf[w] = '\f'
		case 'n':
			buf[w] = '\n'
		case 'r':
			buf[w] = '\r'
		case 't':
			buf[w] = '\t'
		case 'u':
			r, ok := hex4(b, i+2)
			if !ok {
				return buf[:w], false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(b, i+2); ok && b[i] == '\\' && b[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						w += utf8.EncodeRune(buf[w:], dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			w += utf8.EncodeRune(buf[w:], r)
			continue
		default:
			return buf[:w], false
		}
		i, w = i+2, w+1
	}
	return buf[:w], true
}

// appendUnescaped appends the decoded form of escaped string content b,
// escape by escape: the reference AppendUnescaped is held to, and the way
// for content the scanner would have refused (a backslash that ends it, a
// \u without four digits).
func appendUnescaped(dst, b []byte) []byte {
	for len(b) > 0 {
		n := bytes.IndexByte(b, '\\')
		if n < 0 {
			n = len(b)
		}
		dst = AppendValidUTF8(dst, b[:n])
		b = b[n:]
		if len(b) < 2 {
			// A lone trailing backslash: unreachable on scanned input.
			return append(dst, b...)
		}
		switch e := b[1]; e {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(b, 2)
			if !ok {
				return append(dst, b...) // unreachable on scanned input
			}
			b = b[6:]
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(b, 2); ok && b[0] == '\\' && b[1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						dst = utf8.AppendRune(dst, dec)
						b = b[6:]
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, e)
		}
		b = b[2:]
	}
	return dst
}

// AppendValidUTF8 appends run, the bytes of a string between escapes,
// replacing each byte that is not part of valid UTF-8 by U+FFFD, as
// [Value.AppendText] decodes them.
func AppendValidUTF8(dst, run []byte) []byte {
	if utf8.Valid(run) {
		return append(dst, run...)
	}
	for i := 0; i < len(run); {
		r, size := utf8.DecodeRune(run[i:])
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, run[i:i+size]...)
		}
		i += size
	}
	return dst
}

// hex4 decodes the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c-'0' < 10:
			c -= '0'
		case c-'a' < 6:
			c = c - 'a' + 10
		case c-'A' < 6:
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
