package bus

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// appendText appends the decoded text of v, a string value that is not
// plain (it holds an escape or a byte above 0x7F), exactly as
// v.AppendText does: escapes decoded, a \u escape of half a surrogate
// pair, and each byte that is not part of valid UTF-8, replaced by U+FFFD
// (as encoding/json replaces them).
//
// It is AppendText's work without a call per run between two escapes:
// message texts and tool results hold a \n or a \" every few dozen bytes,
// and there AppendText spends more on the calls (a search for the next
// backslash, a UTF-8 check, an append) than on the bytes.
func appendText(dst []byte, v jsonl.Value) []byte {
	if out, ok := appendUnescaped(dst, v.Raw()); ok {
		return out
	}
	return v.AppendText(dst)
}

// appendUnescaped appends the decoded text of b, the content of a JSON
// string, as appendText describes; ok is false, and what it appended is
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
func appendUnescaped(dst, b []byte) (out []byte, ok bool) {
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
				dst = jsonl.AppendValidUTF8(buf[:w], run)
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

// hex4 decodes the four hexadecimal digits at b[i:i+4]; ok is false when
// there are not four.
func hex4(b []byte, i int) (r rune, ok bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
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
