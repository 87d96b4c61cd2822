package redact

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClassify_VectorMatchesModel checks the AVX2 and the portable byte
// classes against a byte-at-a-time model, on random blocks dense in the
// classes' bytes and their neighbours, and every byte at every offset.
func TestClassify_VectorMatchesModel(t *testing.T) {
	model := func(p *[blockBytes]byte) (q, b, sl, u uint64) {
		for i, c := range p {
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
		}
		return q, b, sl, u
	}
	check := func(p *[blockBytes]byte) {
		q, b, sl, u := model(p)
		pq, pb := classifyPortable(p)
		require.Equal(t, [2]uint64{q, b}, [2]uint64{pq, pb}, "portable %q", p[:])
		if aq, ab, asl, au, ok := classifyVector(p); ok {
			require.Equal(t, [4]uint64{q, b, sl, u}, [4]uint64{aq, ab, asl, au}, "avx2 %q", p[:])
		}
	}
	if !hasAVX2 {
		t.Log("no AVX2: the portable classes only")
	}
	const alphabet = "\"\\/u!#[]]0vt\xa2\xdc\xaf\xf5\x00\x7f\xff"
	rnd := rand.New(rand.NewPCG(19, 64))
	var p [blockBytes]byte
	for range 5000 {
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
}
