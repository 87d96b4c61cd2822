package index_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
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

// TestAggregator_OneEntryInManySessions: a session copied into many
// sessions (each copy under its own session id and file, its clock shifted
// so that the copies' order by creation is not their order of arrival)
// counts each entry, response and usage once, whatever the arrival order,
// in memory and through a store evicting and reading back all the time.
// Past sessionIndexMin copies a fact finds a session's occurrence through
// its map, and a new occurrence is compared with the winner only.
func TestAggregator_OneEntryInManySessions(t *testing.T) {
	t.Parallel()
	orig := indextest.ReadFiles(t, "../../testdata/corpus/claude-code/claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
	require.Len(t, orig, 1)
	table := price.Default()
	one := indextest.MustNew(t, index.Config{Pricer: table, Seed: 1})
	for i := range orig[0] {
		one.Add(&orig[0][i])
	}
	alone := one.Sessions()
	require.Len(t, alone, 1)
	require.Positive(t, alone[0].APICalls)

	const copies = 3 * 16
	rng := rand.New(rand.NewPCG(5, 6))
	files := make([][]schema.Entry, copies)
	for c := range files {
		shift := time.Duration(rng.IntN(7200)-3600) * time.Second
		for _, e := range orig[0] {
			e.SessionID = fmt.Sprintf("%s-copy%02d", e.SessionID, c)
			e.Path = fmt.Sprintf("/copies/%02d/%s", c, filepath.Base(e.Path))
			if !e.TS.IsZero() {
				e.TS = e.TS.Add(shift)
			}
			files[c] = append(files[c], e)
		}
	}
	mem := indextest.MustNew(t, index.Config{Pricer: table, Seed: 1})
	for _, es := range files {
		for i := range es {
			mem.Add(&es[i])
		}
	}
	want := mem.Sessions()
	var calls, tokens int64
	for _, s := range want {
		calls += s.APICalls
		tokens += s.TotalTokens
	}
	require.Equal(t, alone[0].APICalls, calls, "each call counted once over the copies")
	require.Equal(t, alone[0].TotalTokens, tokens, "each token counted once over the copies")

	for seed := range uint64(6) {
		b := indextest.MustNew(t, index.Config{Pricer: table, Seed: seed + 2})
		addShuffled(b, files, rand.New(rand.NewPCG(seed, 17)))
		require.Equal(t, want, b.Sessions(), "arrival order %d", seed)
		requireSameUsage(t, mem, b)
	}

	// Through a store, with a tiny cache and commits at random.
	st, err := store.Open(store.Config{Dir: t.TempDir()})
	require.NoError(t, err)
	defer st.Close()
	a := indextest.MustNew(t, index.Config{Pricer: table, Seed: 1, Store: st})
	stream := indextest.Interleave(files, rand.New(rand.NewPCG(8, 9)))
	for i, e := range stream {
		a.Add(e)
		if rng.IntN(40) == 0 {
			require.NoError(t, a.Commit(map[string][]byte{"seq": []byte(strconv.Itoa(i + 1))}, 10))
		}
	}
	require.NoError(t, a.Commit(nil, 10))
	require.Equal(t, want, a.Sessions(), "through the store")
	requireSameUsage(t, mem, a)
}
