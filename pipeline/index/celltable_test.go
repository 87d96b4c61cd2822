package index

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/schema"
)

// cellEntries makes n sessions' worth of calls in many cells: hosts,
// models, projects, labels (and none), hours before the epoch and calls
// without a timestamp, from the offset first.
func cellEntries(first, n int) []schema.Entry {
	var out []schema.Entry
	for i := first; i < first+n; i++ {
		id := fmt.Sprintf("s%d", i)
		b := &builder{format: schema.FormatClaudeCode, session: id, path: id + ".jsonl"}
		ts := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i*37) * time.Minute)
		switch i % 11 {
		case 3:
			ts = time.Time{} // no timestamp
		case 7:
			ts = time.Date(1969, 12, 31, 23, 30, 0, 0, time.UTC).Add(-time.Duration(i) * time.Hour)
		}
		u := b.user("u"+id, ts, "hi")
		m := b.assistant("a"+id, ts.Add(time.Minute), "msg"+id, schema.Usage{Input: int64(10 + i), Output: int64(i % 7), CacheRead: int64(i % 3)})
		for _, e := range []*schema.Entry{&u, &m} {
			e.Host = fmt.Sprint("h", i%3)
			e.CWD = fmt.Sprint("/p/", i%4)
			if i%5 != 0 {
				e.Labels = map[string]string{"team": fmt.Sprint("t", i%2)}
				if i%10 == 1 {
					e.Labels["env"] = "prod"
				}
			}
		}
		m.Model = []string{"m", "m2", "unpriced"}[i%3]
		out = append(out, u, m)
	}
	return out
}

// The cell table answers usage as the store and the cache do, for every
// grouping, bucket, filter, range and zone: after it is built, after
// commits that add, change and empty cells (a call whose counting moves
// to another session), and with changes not yet committed.
func TestAggregator_CellTableAgreesWithTheStore(t *testing.T) {
	st, err := store.Open(store.Config{Dir: t.TempDir()})
	require.NoError(t, err)
	defer st.Close()
	a, err := New(Config{Pricer: flatPricer{"m": true, "m2": true}, Store: st, Turns: true})
	require.NoError(t, err)
	addAll(a, cellEntries(0, 60))
	require.NoError(t, a.Commit(nil, 1))
	require.NoError(t, a.buildListing())
	require.NotNil(t, a.cells)

	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	require.NoError(t, err)
	check := func(step string) {
		t.Helper()
		n := 0
		for _, g := range []GroupBy{ByHost, ByFormat, ByModel, ByProject, ByDay, ByHour, "label:team", "label:env"} {
			for _, bucket := range []GroupBy{"", ByDay, ByHour} {
				for _, loc := range []*time.Location{nil, berlin, kolkata} {
					for _, f := range []UsageQuery{
						{},
						{Host: "h1"},
						{Model: "m2", Project: "/p/2"},
						{Format: "claude-code", Labels: map[string]string{"team": "t1"}},
						{Labels: map[string]string{"env": "prod"}},
						{Host: "no such host"},
						{Since: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
						{Since: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Until: time.Date(2026, 3, 1, 20, 30, 0, 0, time.UTC)},
						{Until: time.Date(2026, 3, 1, 5, 0, 0, 0, time.UTC)},
						{Since: time.Date(1969, 12, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)},
					} {
						q := f
						q.GroupBy, q.Bucket, q.Location = g, bucket, loc
						wantRows, wantTotal, err := a.UsageScan(q)
						require.NoError(t, err)
						rows, total, err := a.UsageWithTotal(q)
						require.NoError(t, err)
						require.Equal(t, wantRows, rows, "%s: %+v", step, q)
						require.Equal(t, wantTotal, total, "%s: %+v", step, q)
						n += len(rows)
					}
				}
			}
		}
		require.Positive(t, n, step)
	}
	check("built")

	addAll(a, cellEntries(60, 40))
	check("dirty")
	require.NoError(t, a.Commit(nil, 1))
	check("committed")

	// A resumed copy read first counts its replayed call in itself; the
	// original, read next, takes the call back: the copy's cell empties.
	orig, cp := resumed()
	for i := range orig {
		orig[i].CWD = "/orig"
	}
	for i := range cp {
		cp[i].CWD = "/copy"
	}
	addAll(a, cp)
	require.NoError(t, a.Commit(nil, 1))
	check("copy first")
	copyCalls := func() int64 {
		rows, err := a.Usage(UsageQuery{GroupBy: ByProject, Project: "/copy"})
		require.NoError(t, err)
		require.Len(t, rows, 1)
		return rows[0].Calls
	}
	require.Equal(t, int64(3), copyCalls())
	addAll(a, orig)
	check("moved, dirty")
	for range 3 { // until the cache is evicted
		require.NoError(t, a.Commit(nil, 1))
	}
	require.Empty(t, a.dirtyR)
	check("moved, committed and evicted")
	require.Equal(t, int64(1), copyCalls(), "the replayed calls moved to the original")

	// A cell taken to zero leaves the table, as it leaves the store.
	stored := 0
	for _, p := range []byte{'r', 'l'} {
		require.NoError(t, a.scanCellRange([]byte{p}, prefixEnd([]byte{p}), func(*rollCell) { stored++ }))
	}
	held := 0
	for _, h := range a.cells.hours {
		held += len(h.cells)
	}
	require.Equal(t, stored, held, "the table holds the stored cells")
}
