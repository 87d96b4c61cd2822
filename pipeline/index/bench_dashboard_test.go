package index_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// buildState writes a state of n Claude Code sessions into dir, as an
// indexer leaves it: each session a user message and an API call, spread
// over the 90 days before end, on 20 hosts, 300 projects, 6 models and
// 5 teams (label team).
func buildState(tb testing.TB, dir string, n int, end time.Time) {
	tb.Helper()
	st, err := store.Open(store.Config{Dir: dir})
	require.NoError(tb, err)
	a, err := index.New(index.Config{Pricer: price.Default(), Store: st, Turns: true})
	require.NoError(tb, err)
	models := []string{"claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001", "gpt-5-codex", "gpt-5", "gemini-2.5-pro"}
	step := 90 * 24 * time.Hour / time.Duration(n)
	for i := range n {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		ts := end.Add(-step * time.Duration(n-i))
		labels := map[string]string{"team": fmt.Sprint("team-", i%5)}
		base := schema.Entry{Format: schema.FormatClaudeCode, Host: fmt.Sprint("host-", i%20), Path: "/p/" + id + ".jsonl",
			SessionID: id, CWD: fmt.Sprintf("/work/project-%d", i%300), Labels: labels}
		u := base
		u.Line, u.EntryID, u.TS, u.Kind, u.Role, u.Text = 1, id+"-u", ts, schema.KindMessage, schema.RoleUser, "question"
		m := base
		m.Line, m.EntryID, m.TS, m.Kind, m.Role = 2, id+"-a", ts.Add(30*time.Second), schema.KindMessage, schema.RoleAssistant
		m.Model, m.MessageID = models[i%len(models)], "msg-"+id
		m.UsageKey = "claude:msg-" + id + ":req"
		m.Usage = &schema.Usage{Input: int64(1000 + i%5000), Output: int64(200 + i%700), CacheRead: int64(i % 20000)}
		a.Add(&u)
		a.Add(&m)
		if i%20000 == 19999 {
			require.NoError(tb, a.Commit(nil, index.DefaultMaxFacts))
		}
	}
	require.NoError(tb, a.Commit(nil, index.DefaultMaxFacts))
	require.NoError(tb, st.Close())
}

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
	buildState(b, dir, n, end)
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
