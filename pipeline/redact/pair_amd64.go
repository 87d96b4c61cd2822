package redact

import (
	"math/bits"

	"golang.org/x/sys/cpu"
)

// hasAVX2 reports whether pairMaskAVX2 can run. Tests switch it off to
// run the portable loop.
var hasAVX2 = cpu.X86.HasAVX2

// pairMaskAVX2 is implemented in pair_amd64.s. It requires AVX2.
//
//go:noescape
func pairMaskAVX2(p *byte, n int, t *pairTables) (off int, mask uint32)

// nextPair returns the first i >= from where b[i] b[i+1] is a pair that
// an anchor holds, or -1. With AVX2 it looks at 32 positions at a time
// through the nibble tables, then checks the positions they let through
// in pairBits.
func nextPair(b []byte, from int) int {
	if from < 0 {
		return -1
	}
	for hasAVX2 && len(b)-from >= 33 {
		off, mask := pairMaskAVX2(&b[from], len(b)-from, &pairNibbles)
		if mask == 0 {
			from += off
			break
		}
		for ; mask != 0; mask &= mask - 1 {
			i := from + off + bits.TrailingZeros32(mask)
			p := uint16(b[i])<<8 | uint16(b[i+1])
			if pairBits[p>>6]&(1<<(p&63)) != 0 {
				return i
			}
		}
		from += off + 32
	}
	return nextPairPortable(b, from)
}
