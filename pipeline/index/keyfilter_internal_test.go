package index

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// A key added is always "maybe", through every level the filter grows;
// about one other key in a hundred is; past maxFilterKeys nothing is
// added and add says so.
func TestKeyFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var f keyFilter
	var added []factKey
	for range 5*minFilterKeys + 123 { // past two levels' capacity
		k := factKey{r.Uint64(), r.Uint64()}
		require.True(t, f.add(k))
		added = append(added, k)
	}
	require.Len(t, f.levels, 3, "64k, 128k and 256k keys")
	for i, k := range added {
		require.True(t, f.mayContain(k), "key %d added", i)
	}
	fp := 0
	const others = 100_000
	for range others {
		if f.mayContain(factKey{r.Uint64(), r.Uint64()}) {
			fp++
		}
	}
	require.Less(t, fp, others*3/100, "false positives: %d of %d", fp, others)

	n := f.n
	f.n = maxFilterKeys // as if full
	require.False(t, f.add(factKey{1, 2}), "full")
	require.Equal(t, n, f.levels[0].n+f.levels[1].n+f.levels[2].n, "nothing added once full")
}

// BenchmarkKeyFilter_MayContain looks up keys not added to a filter of a
// million keys, as the cache does for each new fact of a backfill.
func BenchmarkKeyFilter_MayContain(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	var f keyFilter
	for range 1 << 20 {
		f.add(factKey{r.Uint64(), r.Uint64()})
	}
	keys := make([]factKey, 4096)
	for i := range keys {
		keys[i] = factKey{r.Uint64(), r.Uint64()}
	}
	b.ReportAllocs()
	i, maybe := 0, 0
	for b.Loop() {
		if f.mayContain(keys[i%len(keys)]) {
			maybe++
		}
		i++
	}
	b.ReportMetric(float64(maybe)/float64(i), "maybe/op")
}
