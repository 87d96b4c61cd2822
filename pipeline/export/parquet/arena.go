package parquet

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

// span is a string held in an arena: its block, offset and length. Rows
// hold spans, not strings, so that buffered rows contain no pointers and
// the garbage collector never scans them.
type span struct{ blk, off, n uint32 }

// arena holds the string bytes of a part's buffered rows in blocks: few
// allocations, and no pointers inside for the garbage collector to
// follow.
//
// Parquet strings must be UTF-8 (DuckDB refuses a whole column chunk that
// holds one invalid string), so an invalid sequence is replaced by U+FFFD
// on the way in and counted in invalid.
type arena struct {
	blocks  [][]byte
	cur     int // index of the block being filled
	invalid int // strings that held invalid UTF-8
}

func (a *arena) str(s string) span {
	if s == "" {
		return span{}
	}
	return a.bytes(unsafe.Slice(unsafe.StringData(s), len(s)))
}

func (a *arena) bytes(b []byte) span {
	n := len(b)
	if n == 0 {
		return span{}
	}
	if !utf8.Valid(b) {
		a.invalid++
		b = []byte(strings.ToValidUTF8(string(b), "\uFFFD"))
		n = len(b)
	}
	if n > arenaMaxBlock/4 {
		a.blocks = append(a.blocks, append([]byte(nil), b...))
		return span{blk: uint32(len(a.blocks) - 1), n: uint32(n)}
	}
	if len(a.blocks) == 0 || len(a.blocks[a.cur])+n > cap(a.blocks[a.cur]) {
		size := arenaMinBlock
		if len(a.blocks) > 0 {
			size = 2 * cap(a.blocks[a.cur])
		}
		for size < n {
			size *= 2
		}
		a.blocks = append(a.blocks, make([]byte, 0, min(size, arenaMaxBlock)))
		a.cur = len(a.blocks) - 1
	}
	blk := a.blocks[a.cur]
	off := len(blk)
	a.blocks[a.cur] = append(blk, b...)
	return span{blk: uint32(a.cur), off: uint32(off), n: uint32(n)}
}

// get returns the string s locates. It aliases the arena: valid as long
// as the arena is.
func (a *arena) get(s span) string {
	if s.n == 0 {
		return ""
	}
	return unsafe.String(&a.blocks[s.blk][s.off], int(s.n))
}
