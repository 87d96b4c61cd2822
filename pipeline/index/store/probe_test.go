package store_test

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
)

// factLikeKey is a key shaped as the indexer's facts': a prefix and a
// 128-bit hash, so that keys spread over every table's range.
func factLikeKey(r *rand.Rand) []byte {
	k := []byte{'f', 1}
	k = binary.BigEndian.AppendUint64(k, r.Uint64())
	return binary.BigEndian.AppendUint64(k, r.Uint64())
}

// filledStore returns a store holding n fact-like keys, committed in
// batches as the indexer commits them, and the keys.
func filledStore(tb testing.TB, n int) (*store.Store, [][]byte) {
	tb.Helper()
	s, err := store.Open(store.Config{Dir: tb.TempDir()})
	require.NoError(tb, err)
	tb.Cleanup(func() { s.Close() })
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, n)
	value := make([]byte, 40)
	for i := 0; i < n; {
		b := s.NewBatch()
		for end := min(n, i+5000); i < end; i++ {
			keys[i] = factLikeKey(r)
			b.Set(keys[i], value)
		}
		require.NoError(tb, s.Commit(b))
		b.Close()
	}
	return s, keys
}

// Probe finds what Get finds: the keys present with their values, nil
// for a key absent, in the memtable and in the tables alike; it sees a
// commit made after it was last called.
func TestStore_ProbeFindsWhatGetFinds(t *testing.T) {
	s, keys := filledStore(t, 300_000) // past the memtable: tables on disk
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < len(keys); i += 997 {
		want, err := s.Get(keys[i])
		require.NoError(t, err)
		require.NotNil(t, want)
		got, err := s.Probe(keys[i])
		require.NoError(t, err)
		require.Equal(t, want, got, "key %d", i)

		absent := factLikeKey(r)
		got, err = s.Probe(absent)
		require.NoError(t, err)
		require.Nil(t, got, "an absent key")
	}

	k := factLikeKey(r)
	got, err := s.Probe(k)
	require.NoError(t, err)
	require.Nil(t, got)
	b := s.NewBatch()
	b.Set(k, nil)
	require.NoError(t, s.Commit(b))
	b.Close()
	got, err = s.Probe(k)
	require.NoError(t, err)
	require.Equal(t, []byte{}, got, "an empty value is not an absent key")

	b = s.NewBatch()
	b.Delete(keys[0])
	require.NoError(t, s.Commit(b))
	b.Close()
	got, err = s.Probe(keys[0])
	require.NoError(t, err)
	require.Nil(t, got, "deleted")
}

// Probe may run beside commits and other probes (the API's readers
// beside the indexer): each sees a key once its commit returned, and
// Reset and Close end what it sees.
func TestStore_ProbeBesideCommits(t *testing.T) {
	s, keys := filledStore(t, 50_000)
	r := rand.New(rand.NewPCG(7, 8))
	var fresh [][]byte
	for range 200 {
		fresh = append(fresh, factLikeKey(r))
	}
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for i := g; i < len(keys); i += 101 {
				v, err := s.Probe(keys[i])
				if err != nil || v == nil {
					t.Errorf("key %d: %v, %v", i, v, err)
					return
				}
			}
		})
	}
	for _, k := range fresh {
		b := s.NewBatch()
		b.Set(k, []byte("v"))
		require.NoError(t, s.Commit(b))
		b.Close()
		v, err := s.Probe(k)
		require.NoError(t, err)
		require.Equal(t, []byte("v"), v, "seen once its commit returned")
	}
	wg.Wait()

	require.NoError(t, s.Reset())
	v, err := s.Probe(keys[0])
	require.NoError(t, err)
	require.Nil(t, v, "the state started over")

	require.NoError(t, s.Close())
	_, err = s.Probe(keys[0])
	require.ErrorIs(t, err, store.ErrClosed)
}

// BenchmarkStore_AbsentKeys looks up keys the store does not hold, as the
// indexer does for each new fact of a backfill: Get against Probe.
func BenchmarkStore_AbsentKeys(b *testing.B) {
	s, _ := filledStore(b, 1_000_000)
	for _, impl := range []struct {
		name string
		get  func([]byte) ([]byte, error)
	}{{"get", s.Get}, {"probe", s.Probe}} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 6))
			keys := make([][]byte, 4096)
			for i := range keys {
				keys[i] = factLikeKey(r)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if v, err := impl.get(keys[i%len(keys)]); err != nil || v != nil {
					b.Fatal(v, err)
				}
				i++
			}
		})
	}
}
