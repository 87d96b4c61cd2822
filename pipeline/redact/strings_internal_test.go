package redact

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClassify_VectorMatchesModel checks the AVX2 and the portable masks
// of a block against a byte-at-a-time model, on random blocks dense in
// the classes' bytes, their neighbours and anchors' bytes, every byte at
// every offset, and every anchor pair at every offset (the last one's
// second byte in the byte after the block).
func TestClassify_VectorMatchesModel(t *testing.T) {
	model := func(p *[blockBytes + 1]byte) (q, b, sl, u, pairs uint64) {
		for i, c := range p[:blockBytes] {
			switch c {
			case '"':
				q |= 1 << i
			case '\\':
				b |= 1 << i
			case '/':
				sl |= 1 << i
			case 'u':
				u |= 1 << i
			}
			for _, a := range anchors {
				for _, x := range variants(a.lit[a.off], a.fold) {
					for _, y := range variants(a.lit[a.off+1], a.fold) {
						if c == x && p[i+1] == y {
							pairs |= 1 << i
						}
					}
				}
			}
		}
		return q, b, sl, u, pairs
	}
	check := func(p *[blockBytes + 1]byte) {
		t.Helper()
		q, b, sl, u, pairs := model(p)
		pq, pb, _, _, pp, all := classify(p)
		require.Equal(t, [3]uint64{q, b, pairs}, [3]uint64{pq, pb, pp}, "classify %q", p[:])
		if all {
			_, _, psl, pu, _, _ := classify(p)
			require.Equal(t, [2]uint64{sl, u}, [2]uint64{psl, pu}, "classify %q", p[:])
		}
		pq, pb = classifyPortable(p)
		require.Equal(t, [3]uint64{q, b, pairs}, [3]uint64{pq, pb, pairsPortable(p)}, "portable %q", p[:])
		if aq, ab, asl, au, ap, ok := classifyVector(p); ok {
			require.Equal(t, [4]uint64{q, b, sl, u}, [4]uint64{aq, ab, asl, au}, "avx2 %q", p[:])
			require.Equal(t, pairs, ap&pairs, "avx2 lets every pair through: %q", p[:])
			require.Equal(t, pairs, checkPairs(p, ap), "avx2 %q", p[:])
		}
	}
	if !hasAVX2 {
		t.Log("no AVX2: the portable masks only")
	}
	const alphabet = "\"\\/u!#[]]0vt\xa2\xdc\xaf\xf5\x00\x7f\xffAKIShpkyJzaeEsx_-:"
	rnd := rand.New(rand.NewPCG(19, 64))
	var p [blockBytes + 1]byte
	for range 3000 {
		for i := range p {
			p[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		check(&p)
	}
	for c := range 256 {
		for i := range p {
			clear(p[:])
			p[i] = byte(c)
			check(&p)
		}
	}
	for pair := range 65536 {
		if pairBits[pair>>6]&(1<<(pair&63)) == 0 {
			continue
		}
		for i := range blockBytes {
			clear(p[:])
			p[i], p[i+1] = byte(pair>>8), byte(pair)
			check(&p)
		}
	}
}
