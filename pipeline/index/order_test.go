package index_test

import (
	"math/rand/v2"
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// addShuffled adds the files in a random order, interleaving the lines of
// different files at random; each file's own lines stay in order, as a
// tailer following several files delivers them.
func addShuffled(a *index.Aggregator, files [][]schema.Entry, rng *rand.Rand) {
	order := rng.Perm(len(files))
	pos := make([]int, len(files))
	live := append([]int(nil), order...)
	for len(live) > 0 {
		k := rng.IntN(len(live))
		// Runs of a few lines from one file, as reads deliver them.
		f := live[k]
		for n := 1 + rng.IntN(8); n > 0 && pos[f] < len(files[f]); n-- {
			a.Add(&files[f][pos[f]])
			pos[f]++
		}
		if pos[f] == len(files[f]) {
			live = append(live[:k], live[k+1:]...)
		}
	}
}

// TestAggregator_ArrivalOrderDoesNotMatter: the aggregates of a set of
// transcripts are the same for every order in which their files, and the
// lines of different files, arrive: on every sample of testdata, and on
// generated sessions with resumed and forked copies and with compaction
// and side-question replays.
func TestAggregator_ArrivalOrderDoesNotMatter(t *testing.T) {
	t.Parallel()
	gen := testcorpus.Generate(t, 3<<20, 7)

	table := price.Default()
	for name, root := range map[string]string{"testdata": "../../testdata/corpus", "generated": gen} {
		t.Run(name, func(t *testing.T) {
			files := indextest.ReadFiles(t, root)
			a := indextest.MustNew(t, index.Config{Pricer: table, Seed: 1, Turns: true})
			for _, es := range files {
				for i := range es {
					a.Add(&es[i])
				}
			}
			want := a.Sessions()
			require.NotEmpty(t, want)
			for seed := range uint64(12) {
				rng := rand.New(rand.NewPCG(seed, 99))
				// Another seed too: the outcome must not depend on the
				// fact keys' hash order either.
				b := indextest.MustNew(t, index.Config{Pricer: table, Seed: seed + 2, Turns: true})
				addShuffled(b, files, rng)
				require.Equal(t, want, b.Sessions(), "arrival order %d", seed)
				requireSameUsage(t, a, b)
				requireSameTurns(t, a, b)
			}
		})
	}
}
