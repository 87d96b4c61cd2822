package index_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// A table of the state that is corrupt or gone (a disk's bad day, a
// hand that deleted a file) makes the indexer move the state aside and
// rebuild it from the stream, instead of panicking at every start or
// exiting: the numbers equal those of the whole stream, and the broken
// state is kept beside for a post-mortem.
func TestIndexer_CorruptTableRebuilds(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, sst string)
	}{
		{"GarbageInTheMiddle", func(t *testing.T, sst string) {
			b, err := os.ReadFile(sst)
			require.NoError(t, err)
			for i := len(b) / 4; i < len(b)*3/4; i += 97 {
				b[i] ^= 0x5a
			}
			require.NoError(t, os.WriteFile(sst, b, 0o644))
		}},
		{"Truncated", func(t *testing.T, sst string) {
			fi, err := os.Stat(sst)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(sst, fi.Size()/2))
		}},
		{"Deleted", func(t *testing.T, sst string) {
			require.NoError(t, os.Remove(sst))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := indextest.ReadFiles(t, "../../testdata/corpus")
			stream := indextest.Interleave(files, rand.New(rand.NewPCG(5, 5)))
			mem := indextest.MustNew(t, index.Config{})
			for _, e := range stream {
				mem.Add(e)
			}
			js := indextest.NewStream(t, bus.StreamConfig{})
			half := len(stream) / 2
			last := indextest.Publish(t, js, stream[:half])
			cfg := index.IndexerConfig{JS: js, Dir: t.TempDir(), CommitInterval: 10 * time.Millisecond}
			ix, stop := indextest.RunIndexer(t, cfg)
			indextest.WaitApplied(t, ix, last)
			require.NoError(t, stop())

			// Everything into one table, then break it.
			state := filepath.Join(cfg.Dir, "state")
			db, err := pebble.Open(state, &pebble.Options{})
			require.NoError(t, err)
			require.NoError(t, db.Compact(t.Context(), []byte{0}, []byte{0xff}, true))
			require.NoError(t, db.Close())
			ssts, err := filepath.Glob(filepath.Join(state, "*.sst"))
			require.NoError(t, err)
			require.Len(t, ssts, 1)
			tt.damage(t, ssts[0])

			last = indextest.Publish(t, js, stream[half:])
			ix, stop = indextest.RunIndexer(t, cfg)
			indextest.WaitApplied(t, ix, last)
			got, err := ix.Sessions()
			require.NoError(t, err)
			require.Equal(t, mem.Sessions(), got)
			require.NoError(t, stop())
			aside, err := filepath.Glob(filepath.Join(cfg.Dir, "state.corrupt-*"))
			require.NoError(t, err)
			require.Len(t, aside, 1, "the broken state is kept aside")
		})
	}
}
