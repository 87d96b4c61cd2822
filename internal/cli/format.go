package cli

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Printable returns s safe to print on a terminal: each C0 control
// character (ESC, CR, NUL, tab, newline, ...), DEL, C1 control character
// and byte of invalid UTF-8 becomes its Go escape (\x1b, \r, \x00, \t,
// \x7f, \u009b, \xff, as %q writes them), so that text from a transcript
// can neither drive the terminal (move the cursor, clear the screen, set
// the title) nor break a table's lines and columns. Everything else,
// backslashes included, is kept: the result is for reading, not for
// parsing back. JSON output needs none of this; it escapes these itself.
func Printable(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unprintable(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unprintable(r, n):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unprintable reports whether the rune r, n bytes long, is a C0 or C1
// control character, DEL, or a byte of invalid UTF-8.
func unprintable(r rune, n int) bool {
	return r < 0x20 || r >= 0x7f && r < 0xa0 || r == utf8.RuneError && n == 1
}

// Thousands formats n with comma separators.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// HumanBytes formats n as B, KB, MB or GB (powers of 1000).
func HumanBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// Count returns n and noun, the noun in its plural form unless n is 1
// ("1 API call", "2 API calls", "3 entries").
func Count[N int | int64 | uint64](n N, noun string) string { return count(n, noun) }

// Dollars formats a cost in dollars for a table: two decimals, or four
// for a cost under a cent that is not zero (0.0019, not 0.00), and a "*"
// when some calls were not priced.
func Dollars(v float64, unpriced bool) string {
	s := fmt.Sprintf("%.2f", v)
	if v > 0 && v < 0.005 {
		s = fmt.Sprintf("%.4f", v)
	}
	if unpriced {
		s += "*"
	}
	return s
}

// count says "1 message", "2 messages", "3 directories".
func count[N int | int64 | uint64](n N, noun string) string {
	switch {
	case n == 1:
	case strings.HasSuffix(noun, "y"):
		noun = noun[:len(noun)-1] + "ies"
	case !strings.HasSuffix(noun, "ed"):
		noun += "s"
	}
	return fmt.Sprintf("%d %s", n, noun)
}
