package export

import (
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Arena block sizes: the first block is small, so that the many parts of a
// quiet fleet cost little, and each next one doubles up to the maximum.
// The unused end of the current block is thus at most 64 KiB, and at most
// the larger of 4 KiB and the bytes already used.
const (
	arenaMinBlock = 4 << 10
	arenaMaxBlock = 64 << 10
)

// arena holds the string bytes of a part's buffered rows in large blocks:
// few allocations, no pointers inside for the garbage collector to follow,
// and an exact byte count for the memory budget. Strings it returns stay
// valid until the arena is dropped.
//
// Parquet strings must be UTF-8 (DuckDB refuses a whole column chunk that
// holds one invalid string), so an invalid sequence is replaced by U+FFFD
// on the way in and counted in invalid.
type arena struct {
	cur     []byte
	invalid int // strings that held invalid UTF-8
}

func (a *arena) str(s string) string {
	if s == "" {
		return ""
	}
	return a.bytes(unsafe.Slice(unsafe.StringData(s), len(s)))
}

func (a *arena) bytes(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if !utf8.Valid(b) {
		a.invalid++
		b = []byte(strings.ToValidUTF8(string(b), "\uFFFD"))
		n = len(b)
	}
	if n > arenaMaxBlock/4 {
		c := make([]byte, n)
		copy(c, b)
		return unsafe.String(&c[0], n)
	}
	if len(a.cur)+n > cap(a.cur) {
		size := max(2*cap(a.cur), arenaMinBlock)
		for size < n {
			size *= 2
		}
		size = min(size, arenaMaxBlock)
		a.cur = make([]byte, 0, size)
	}
	i := len(a.cur)
	a.cur = append(a.cur, b...)
	return unsafe.String(&a.cur[i], n)
}
