package schema

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
	"unsafe"
)

// appendString appends s as a JSON string. Its output is byte for byte
// that of segmentio/encoding's json.AppendEscape(b, s, 0), which the
// canonical form was first written with (and which the tests compare it
// against): '"' and '\\' and the control characters \b \f \n \r \t get
// their short escapes, other control characters \u00XX, each byte that is
// not part of valid UTF-8 \ufffd, U+2028 and U+2029 their \u escapes;
// '<', '>' and '&' stay as they are.
//
// Message text is most of what the tailer publishes, and it is full of
// newlines, quotes and non-ASCII letters. This reads s eight bytes at a
// time, flags the bytes of each word that need attention at once (see
// attention), visits only the flagged ones and copies the runs between
// them whole.
func appendString(b []byte, s string) []byte {
	if cap(b)-len(b) < len(s)+2 {
		b = slices.Grow(b, len(s)+len(s)/8+2)
	}
	b = append(b, '"')
	p := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	i := 0                                          // start of the run not yet copied
	for j := 0; j < len(p); {
		// Skip clean words two at a time.
		for j+16 <= len(p) && anyAttention(binary.LittleEndian.Uint64(p[j:]))|anyAttention(binary.LittleEndian.Uint64(p[j+8:])) == 0 {
			j += 16
		}
		base := j
		var m uint64
		if base+8 <= len(p) {
			m = attention(binary.LittleEndian.Uint64(p[base:]))
			j = base + 8
		} else {
			for k, c := range p[base:] {
				if needsAttention[c] {
					m |= 0x80 << (8 * k)
				}
			}
			j = len(p)
		}
		for m != 0 {
			k := base + bits.TrailingZeros64(m)>>3
			end := k + 1
			if c := p[k]; c < utf8.RuneSelf {
				b = append(b, s[i:k]...)
				b = appendEscape(b, c)
				i = end
			} else {
				r, size := utf8.DecodeRuneInString(s[k:])
				end = k + size
				switch {
				case r == utf8.RuneError && size == 1:
					b = append(b, s[i:k]...)
					b = append(b, `\ufffd`...)
					i = end
				case r == '\u2028' || r == '\u2029':
					b = append(b, s[i:k]...)
					b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
					i = end
				}
				// Other runes are valid UTF-8, part of the run.
			}
			if end >= base+8 {
				j = end // a rune that runs into the next word
				break
			}
			m &= ^uint64(0) << (8 * (end - base))
		}
	}
	b = append(b, s[i:]...)
	return append(b, '"')
}

// appendEscape appends the escape of c, an ASCII byte that needs one.
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

const hexDigits = "0123456789abcdef"

// attention sets the high bit of each byte of the word x that needs
// attention: below 0x20, '"', '\\', or above 0x7F. The sums never carry
// from one byte into the next, so every flag is exact.
func attention(x uint64) uint64 {
	const (
		ones  = 0x0101010101010101
		low7  = 0x7F7F7F7F7F7F7F7F
		highs = 0x8080808080808080
	)
	lo := x & low7
	ctrl := ^(lo + ones*(0x80-0x20)) // high bit set where lo < 0x20
	q := x ^ (ones * '"')
	q = (q & low7) + low7 | q // high bit clear where the byte is '"'
	bs := x ^ (ones * '\\')
	bs = (bs & low7) + low7 | bs
	return (ctrl&^x | ^q | ^bs | x) & highs
}

// anyAttention is not zero if a byte of x needs attention. It is
// cheaper than attention, but a flag above the lowest one may be wrong
// (the borrow of a subtraction can carry into the next byte).
func anyAttention(x uint64) uint64 {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	q := x ^ (ones * '"')
	bs := x ^ (ones * '\\')
	return (((x-ones*0x20)|(q-ones)|(bs-ones))&^x | x) & highs
}

// needsAttention holds the bytes that attention flags.
var needsAttention = func() (t [256]bool) {
	for c := range t {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf
	}
	return t
}()
