package redact

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNextPair_VectorMatchesPortable checks that the AVX2 pair filter
// finds exactly the positions the portable loop finds, on random text
// dense in anchor bytes, at every length and start around the 32-byte
// blocks.
func TestNextPair_VectorMatchesPortable(t *testing.T) {
	if !hasAVX2 {
		t.Log("no AVX2: nextPair is the portable loop")
	}
	const alphabet = "AKISGRceghiklopqrstwxyzJ-_:/=. \n\"'Bb0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	rnd := rand.New(rand.NewPCG(1, 2))
	all := func(b []byte, from int, next func([]byte, int) int) (out []int) {
		for i := next(b, from); i >= 0; i = next(b, i+1) {
			out = append(out, i)
		}
		return out
	}
	for n := range 200 {
		for range 20 {
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rnd.IntN(len(alphabet))]
			}
			for from := 0; from <= min(n, 40); from++ {
				require.Equal(t, all(b, from, nextPairPortable), all(b, from, nextPair), "n=%d from=%d %q", n, from, b)
			}
		}
	}
	// Every byte pair, each at every offset of a block.
	b := make([]byte, 96)
	for p := range 65536 {
		i := p % 64
		clear(b)
		b[i], b[i+1] = byte(p>>8), byte(p)
		require.Equal(t, all(b, 0, nextPairPortable), all(b, 0, nextPair), "pair %q at %d", b[i:i+2], i)
	}
}
