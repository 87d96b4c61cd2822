package index_test

import (
	"fmt"
	"math/rand/v2"
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

// TestAggregator_StoreResumesExactly applies a stream to an Aggregator
// over a store, committing at random points with a tiny cache (so that
// facts and sessions are evicted and read back all the time) and
// "crashing" at random points (the store closed without committing what
// was applied since the last commit); each restart resumes after the
// sequence the state was committed with. The final aggregates equal those
// of an in-memory Aggregator over the same stream: nothing counted twice,
// nothing missed.
func TestAggregator_StoreResumesExactly(t *testing.T) {
	t.Parallel()
	files := indextest.ReadFiles(t, testcorpus.Generate(t, 2<<20, 21), "../../testdata/corpus")
	table := price.Default()
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 7))
		stream := indextest.Interleave(files, rng)
		mem := indextest.MustNew(t, index.Config{Pricer: table, Turns: true})
		for _, e := range stream {
			mem.Add(e)
		}
		want := mem.Sessions()

		dir := t.TempDir()
		restarts := 0
		for {
			st, err := store.Open(store.Config{Dir: dir})
			require.NoError(t, err)
			a := indextest.MustNew(t, index.Config{Pricer: table, Store: st, Turns: true})
			next := 0
			if v, err := st.Meta("seq"); err == nil && v != nil {
				next, err = strconv.Atoi(string(v))
				require.NoError(t, err)
			}
			crashed := false
			for i := next; i < len(stream); i++ {
				a.Add(stream[i])
				switch r := rng.IntN(1000); {
				case r < 20:
					require.NoError(t, a.Commit(map[string][]byte{"seq": []byte(strconv.Itoa(i + 1))}, 60))
				case r < 22 && restarts < 20:
					crashed = true
				}
				if crashed {
					break
				}
			}
			if crashed {
				restarts++
				require.NoError(t, st.Close())
				continue
			}
			// Before the last commit: pages merge the cache and the index.
			requireSamePages(t, mem, a)
			requireSameTurns(t, mem, a)
			require.NoError(t, a.Commit(map[string][]byte{"seq": []byte(strconv.Itoa(len(stream)))}, 60))
			require.Equal(t, want, a.Sessions(), "seed %d after %d restarts", seed, restarts)
			requireSameUsage(t, mem, a)
			require.NoError(t, st.Close())

			// And read back cold, by a fresh process.
			st, err = store.Open(store.Config{Dir: dir})
			require.NoError(t, err)
			cold := indextest.MustNew(t, index.Config{Pricer: table, Store: st, Turns: true})
			require.Equal(t, want, cold.Sessions(), "seed %d, cold", seed)
			requireSameUsage(t, mem, cold)
			requireSamePages(t, mem, cold)
			requireSameTurns(t, mem, cold)
			require.NoError(t, st.Close())
			break
		}
		require.Positive(t, restarts, "the test must crash at least once")
	}
}

// requireSameUsage requires the same usage rollups of two Aggregators by
// every dimension, and rollups whose sums are the sessions' sums.
func requireSameUsage(t *testing.T, want, got *index.Aggregator) {
	t.Helper()
	for _, g := range []index.GroupBy{index.ByHost, index.ByFormat, index.ByModel, index.ByProject, index.ByDay, index.ByHour} {
		w, err := want.Usage(index.UsageQuery{GroupBy: g})
		require.NoError(t, err)
		gt, err := got.Usage(index.UsageQuery{GroupBy: g})
		require.NoError(t, err)
		require.Equal(t, w, gt, "group by %s", g)
		var calls, total int64
		for _, r := range gt {
			calls += r.Calls
			total += r.TotalTokens
		}
		var sc, st int64
		for _, s := range got.Sessions() {
			sc += s.APICalls
			st += s.TotalTokens
		}
		require.Equal(t, sc, calls, "group by %s: calls", g)
		require.Equal(t, st, total, "group by %s: tokens", g)
	}
}

// requireSamePages requires the same pages of sessions from two
// Aggregators for a few queries, read page by page to the end.
func requireSamePages(t *testing.T, want, got *index.Aggregator) {
	t.Helper()
	all := want.Sessions()
	require.NotEmpty(t, all)
	// The middle session, or the first after it with a model (a session
	// of bookkeeping and subagents only has none).
	mid := all[len(all)/2]
	for _, s := range all[len(all)/2:] {
		if len(s.Models) > 0 {
			mid = s
			break
		}
	}
	for i, q := range []index.SessionQuery{
		{},
		{Sort: index.SortCost},
		{Sort: index.SortTokens, Format: "claude-code"},
		{Sort: index.SortFirstTS, Since: mid.FirstTS},
		{Host: "h", Model: mid.Models[0]},
		{Project: mid.CWD, Until: mid.LastTS},
	} {
		w := readPages(t, want, q)
		g := readPages(t, got, q)
		require.Equal(t, w, g, "query %+v", q)
		if i == 0 { // no filter
			require.Len(t, g, len(all), "every session is listed once")
		}
	}
}

func readPages(t *testing.T, a *index.Aggregator, q index.SessionQuery) []index.Session {
	t.Helper()
	q.Limit = 7
	var out []index.Session
	for range 10000 {
		page, next, err := a.Query(q)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page), 7)
		out = append(out, page...)
		if next == "" {
			return out
		}
		require.Len(t, page, 7, "a page before the last is full")
		q.Cursor = next
	}
	t.Fatal("no end of pages")
	return nil
}

// requireSameTurns requires the same turns of every session from two
// Aggregators, and turns that add up to their session.
func requireSameTurns(t *testing.T, want, got *index.Aggregator) {
	t.Helper()
	for _, s := range want.Sessions() {
		w, ok, err := want.Turns(s.Format, s.Host, s.SessionID)
		require.NoError(t, err)
		require.True(t, ok)
		g, ok, err := got.Turns(s.Format, s.Host, s.SessionID)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, w, g, "session %s", s.SessionID)
		var calls, tokens int64
		for _, turn := range g {
			calls += turn.APICalls
			tokens += turn.TotalTokens
		}
		require.Equal(t, s.APICalls, calls, "session %s: calls", s.SessionID)
		require.Equal(t, s.TotalTokens, tokens, "session %s: tokens", s.SessionID)
		// One turn per turn counted, and one more when calls come before
		// the first real input.
		require.Contains(t, []int64{s.Turns, s.Turns + 1}, int64(len(g)), "session %s: turns", s.SessionID)
	}
}

// Plans and implementations are linked in pages of a stored state too,
// through the slug index, whatever is cached.
func TestAggregator_StoredPlanLinks(t *testing.T) {
	t.Parallel()
	st, err := store.Open(store.Config{Dir: t.TempDir()})
	require.NoError(t, err)
	defer st.Close()
	a := indextest.MustNew(t, index.Config{Store: st})
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i, prompt := range []string{"Let's plan the parser", "Implement the following plan:\n# Parser", "unrelated"} {
		e := schema.Entry{Format: schema.FormatClaudeCode, Host: "h", Path: fmt.Sprintf("s%d.jsonl", i), SessionID: fmt.Sprintf("s%d", i),
			EntryID: "u", TS: t0.Add(time.Duration(i) * time.Minute), Kind: schema.KindMessage, Role: schema.RoleUser, Text: prompt, Slug: "quiet-river"}
		if i == 2 {
			e.Slug = "other-slug"
		}
		a.Add(&e)
		require.NoError(t, a.Commit(nil, 1)) // a tiny cache: read back from the store
	}
	page, _, err := a.Query(index.SessionQuery{Limit: 1}) // the newest only: s2, then s1
	require.NoError(t, err)
	require.Equal(t, "s2", page[0].SessionID)
	require.Empty(t, page[0].SessionKind)
	page, _, err = a.Query(index.SessionQuery{Format: "claude-code", Sort: index.SortFirstTS})
	require.NoError(t, err)
	byID := map[string]index.Session{}
	for _, s := range page {
		byID[s.SessionID] = s
	}
	require.Equal(t, "implementation", byID["s1"].SessionKind)
	require.Equal(t, []string{"s0"}, byID["s1"].PlanSessionIDs)
	require.Equal(t, "plan", byID["s0"].SessionKind)
	require.Equal(t, []string{"s1"}, byID["s0"].ImplementationSessionIDs)
}
