package bus

import (
	"bytes"
	"encoding/binary"
	"math/bits"
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
// backslash that ends b. Runs of ASCII are copied eight bytes at a time
// up to the next backslash or byte above 0x7F; from such a byte to the
// next backslash the run is checked and copied whole.
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
	for i := 0; i < len(b); {
		j := i
		for j+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[j:])
			y := x ^ backslash // a zero byte where b holds a backslash
			// The lowest byte flagged is the first backslash or byte
			// above 0x7F: a borrow only disturbs the bytes above it.
			if m := ((y-ones)&^y | x) & highs; m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				goto found
			}
			j += 8
		}
		for j < len(b) && b[j] != '\\' && b[j] < utf8.RuneSelf {
			j++
		}
	found:
		dst = append(dst, b[i:j]...)
		if i = j; i == len(b) {
			break
		}
		if b[i] >= utf8.RuneSelf {
			k := bytes.IndexByte(b[i:], '\\')
			if k < 0 {
				k = len(b) - i
			}
			dst = appendValidUTF8(dst, b[i:i+k])
			i += k
			continue
		}
		if i+1 == len(b) {
			return dst, false
		}
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			dst = append(dst, e)
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
			r, ok := hex4(b, i+2)
			if !ok {
				return dst, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(b, i+2); ok && b[i] == '\\' && b[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						dst = utf8.AppendRune(dst, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return dst, false
		}
		i += 2
	}
	return dst, true
}

// appendValidUTF8 appends run, which holds no escape, replacing each byte
// that is not part of valid UTF-8 by U+FFFD.
func appendValidUTF8(dst, run []byte) []byte {
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
