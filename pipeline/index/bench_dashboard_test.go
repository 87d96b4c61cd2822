package index_test

import (
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// openState opens a state buildState wrote, as an Aggregator.
func openState(tb testing.TB, dir string) *index.Aggregator {
	tb.Helper()
	st, err := store.Open(store.Config{Dir: dir})
	require.NoError(tb, err)
	tb.Cleanup(func() { st.Close() })
	a, err := index.New(index.Config{Pricer: price.Default(), Store: st, Turns: true})
	require.NoError(tb, err)
	start := time.Now()
	require.NoError(tb, a.BuildListing())
	tb.Logf("listing of the stored sessions built in %s", time.Since(start).Round(time.Millisecond))
	return a
}

// BenchmarkDashboard_100k measures the queries of the dashboard on a
// state of 100,000 sessions (buildState): the first page of sessions
// (default order, then by cost), its total (Count), a search, and the
// chart's usage series (30 days by day and model, today by hour) with
// its total.
func BenchmarkDashboard_100k(b *testing.B) {
	const n = 100_000
	dir := b.TempDir()
	end := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	start := time.Now()
	indextest.BuildState(b, dir, n, end)
	b.Logf("built a state of %d sessions in %s", n, time.Since(start).Round(time.Millisecond))
	a := openState(b, dir)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(b, err)
	cases := []struct {
		name string
		fn   func() error
	}{
		{"page=recent", func() error { _, _, err := a.Query(index.SessionQuery{Limit: 25}); return err }},
		{"page=cost", func() error { _, _, err := a.Query(index.SessionQuery{Limit: 25, Sort: index.SortCost}); return err }},
		{"count=all", func() error { _, err := a.Count(index.SessionQuery{}); return err }},
		{"page=search", func() error {
			_, _, err := a.Query(index.SessionQuery{Limit: 25, Search: "PROJECT-17"})
			return err
		}},
		{"page=filtered", func() error {
			_, _, err := a.Query(index.SessionQuery{Limit: 25, Host: "host-3", Model: "gpt-5", Since: end.AddDate(0, 0, -30)})
			return err
		}},
		{"usage=30d-by-day-and-model", func() error {
			_, _, err := a.UsageWithTotal(index.UsageQuery{GroupBy: index.ByModel, Bucket: index.ByDay, Location: berlin, Since: end.AddDate(0, 0, -30)})
			return err
		}},
		{"usage=all-by-day-and-host", func() error {
			_, _, err := a.UsageWithTotal(index.UsageQuery{GroupBy: index.ByHost, Bucket: index.ByDay, Location: berlin})
			return err
		}},
		{"usage=today-by-hour", func() error {
			_, _, err := a.UsageWithTotal(index.UsageQuery{GroupBy: index.ByModel, Bucket: index.ByHour, Location: berlin, Since: end.Truncate(24 * time.Hour)})
			return err
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := c.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
