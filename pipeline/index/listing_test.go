package index

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Pages and totals read from the listing are those read from the
// sessions themselves, with sessions cached and changed since the last
// commit, new ones not yet stored, and the unfiltered total kept as a
// count.
func TestAggregator_ListingAgreesWithTheSessions(t *testing.T) {
	st, err := store.Open(store.Config{Dir: t.TempDir()})
	require.NoError(t, err)
	defer st.Close()
	a, err := New(Config{Pricer: flatPricer{"m": true, "m2": true}, Store: st, Turns: true})
	require.NoError(t, err)
	addAll(a, cellEntries(0, 80))
	require.NoError(t, a.Commit(nil, 1))
	require.NoError(t, a.buildListing())
	check := func(step string) {
		t.Helper()
		for _, sort := range []SessionSort{SortLastTS, SortFirstTS, SortCost, SortTokens} {
			for _, f := range []SessionQuery{
				{}, {Host: "h1"}, {Model: "m2"}, {Search: "S1"}, {Project: "/p/3"},
				{Since: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
			} {
				q := f
				q.Sort, q.Limit = sort, 7
				list := a.list
				var want [][]Session
				var wantN int
				a.list = nil
				for cur := ""; ; {
					q.Cursor = cur
					page, next, err := a.Query(q)
					require.NoError(t, err)
					want = append(want, page)
					if cur = next; cur == "" {
						break
					}
				}
				wantN, err = a.Count(q)
				require.NoError(t, err)
				a.list = list
				var got [][]Session
				for cur := ""; ; {
					q.Cursor = cur
					page, next, err := a.Query(q)
					require.NoError(t, err)
					got = append(got, page)
					if cur = next; cur == "" {
						break
					}
				}
				n, err := a.Count(q)
				require.NoError(t, err)
				require.Equal(t, want, got, "%s: %+v", step, q)
				require.Equal(t, wantN, n, "%s: %+v", step, q)
			}
		}
	}
	check("built")
	addAll(a, cellEntries(80, 20)) // new sessions
	for i := range 20 {            // changed ones: a later, costlier call
		id := fmt.Sprintf("s%d", i*3)
		b := &builder{format: schema.FormatClaudeCode, session: id, path: id + ".jsonl", n: 10}
		m := b.assistant("late"+id, time.Date(2026, 3, 9, 0, i, 0, 0, time.UTC), "late"+id, schema.Usage{Input: int64(1000 * i)})
		m.Host, m.Model = fmt.Sprint("h", i*3%3), "m2"
		addAll(a, []schema.Entry{m})
	}
	check("dirty")
	require.NoError(t, a.Commit(nil, 1))
	check("committed")
	for range 3 {
		require.NoError(t, a.Commit(nil, 1))
	}
	check("evicted")
}
