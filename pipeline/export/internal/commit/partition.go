package commit

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sessionpipe/sessionpipe/schema"
)

// NullValue is the partition value written for an empty format or host
// and for the date of an entry without a timestamp: DuckDB writes NULL
// partition values so and reads "NULL" back as NULL. (Hive and Spark use
// __HIVE_DEFAULT_PARTITION__, which DuckDB 1.4 reads as that string.)
const NullValue = "NULL"

// escapedReplacement is U+FFFD escaped, written for each byte of an
// invalid UTF-8 sequence: DuckDB refuses a partition value that does not
// un-escape to valid UTF-8.
const escapedReplacement = "%EF%BF%BD"

// maxValueBytes bounds an escaped partition value so that a directory name
// stays far below the 255 bytes file systems allow.
const maxValueBytes = 160

// Partition is where an entry's row goes: its format, the UTC date of its
// timestamp and its host, as they appear in the directory
// format=<f>/date=<YYYY-MM-DD>/host=<h>. The values are the entry's own,
// unescaped; [Partition.Dir] escapes them.
type Partition struct {
	Format string `json:"format"`
	Date   string `json:"date"` // YYYY-MM-DD, or "" for an entry without ts
	Host   string `json:"host"`
}

// PartitionOf returns the partition of e.
func PartitionOf(e *schema.Entry) Partition {
	p := Partition{Format: string(e.Format), Host: e.Host}
	if !e.TS.IsZero() {
		var b [10]byte
		p.Date = string(e.TS.UTC().AppendFormat(b[:0], time.DateOnly))
	}
	return p
}

// Dir returns the partition's directory relative to the output root, with
// slashes: format=<f>/date=<d>/host=<h>, each value escaped by
// [EscapeValue]. It is always three path elements below the root, whatever
// the values hold.
func (p Partition) Dir() string {
	var b strings.Builder
	b.WriteString("format=")
	b.WriteString(EscapeValue(p.Format))
	b.WriteString("/date=")
	b.WriteString(EscapeValue(p.Date))
	b.WriteString("/host=")
	b.WriteString(EscapeValue(p.Host))
	return b.String()
}

// path returns the partition's directory under root, in the OS's form.
func (p Partition) Path(root string) string {
	return filepath.Join(root, filepath.FromSlash(p.Dir()))
}

// EscapeValue returns v as a Hive partition value: the characters Hive's
// FileUtils.escapePathName escapes ('"', '#', '%', '\”, '*', '/', ':',
// '=', '?', '\\', '[', ']', '^', '{', DEL and the control characters),
// NUL, and every byte of an invalid UTF-8 sequence become %XX (upper-case
// hex); other bytes, valid UTF-8 included, are kept. An empty value is
// [DefaultPartitionValue]. A value whose escaped form is longer than 160
// bytes is cut there (at a character boundary) and ends with "~" and 16
// hex digits of its FNV-1a hash, so that distinct long values stay
// distinct directories; the entry's own column keeps the whole value.
//
// The result never contains '/', '\\', NUL or "..": a partition value
// cannot name a directory outside the output root.
func EscapeValue(v string) string {
	if v == "" {
		return NullValue
	}
	if v == NullValue {
		// The value itself, not NULL: its first letter escaped keeps the
		// two apart, and DuckDB un-escapes it.
		return "%4EULL"
	}
	var b strings.Builder
	replaced := false
	cutAt := -1 // where a too long value is cut: a whole character or escape
	for i := 0; i < len(v); {
		prev := b.Len()
		c := v[i]
		if c < utf8.RuneSelf {
			if needsEscape(c) {
				escapeByte(&b, c)
			} else {
				b.WriteByte(c)
			}
			i++
		} else if r, n := utf8.DecodeRuneInString(v[i:]); r == utf8.RuneError && n == 1 {
			b.WriteString(escapedReplacement)
			replaced = true
			i++
		} else {
			b.WriteString(v[i : i+n])
			i += n
		}
		if cutAt < 0 && b.Len() > maxValueBytes-17 {
			cutAt = prev
		}
	}
	s := b.String()
	if !replaced && len(s) <= maxValueBytes {
		return s
	}
	if cutAt >= 0 {
		s = s[:cutAt] // room for the suffix
	}
	return s + "~" + hash16(v)
}

// needsEscape reports whether Hive escapes the ASCII byte c (and NUL).
func needsEscape(c byte) bool {
	if c < 0x20 || c == 0x7f {
		return true
	}
	switch c {
	case '"', '#', '%', '\'', '*', '/', ':', '=', '?', '\\', '[', ']', '^', '{':
		return true
	}
	return false
}

func escapeByte(b *strings.Builder, c byte) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('%')
	b.WriteByte(hex[c>>4])
	b.WriteByte(hex[c&15])
}

// hash16 returns 16 hex digits of the 64-bit FNV-1a hash of s.
func hash16(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("%016x", h.Sum64())
}
