package index

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Days are the user's: with a Location, a call at 23:30 UTC on March 1st
// is on March 2nd in Berlin (+01:00), and hours are keyed by their local
// start with the offset; a Bucket splits each group by day or hour; the
// total sums the selected calls' nano-dollars.
func TestAggregator_UsageInTimeZone(t *testing.T) {
	t.Parallel()
	b := &builder{format: schema.FormatClaudeCode, session: "s", path: "s.jsonl"}
	late := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
	x := b.assistant("a1", late, "m1", schema.Usage{Input: 10, Output: 1})
	y := b.assistant("a2", late.Add(-12*time.Hour), "m2", schema.Usage{Input: 20, Output: 2})
	y.Model = "other"
	a := NewAggregator(flatPricer{"m": true, "other": true})
	addAll(a, []schema.Entry{x, y})
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)

	rows, err := a.Usage(UsageQuery{GroupBy: ByDay})
	require.NoError(t, err)
	require.Equal(t, []string{"2026-03-01"}, rowKeys(rows), "UTC: one day")
	rows, err = a.Usage(UsageQuery{GroupBy: ByDay, Location: berlin})
	require.NoError(t, err)
	require.Equal(t, []string{"2026-03-01", "2026-03-02"}, rowKeys(rows), "Berlin: 23:30Z is the next day")

	rows, err = a.Usage(UsageQuery{GroupBy: ByHour, Location: berlin})
	require.NoError(t, err)
	require.Equal(t, []string{"2026-03-01T12:00+01:00", "2026-03-02T00:00+01:00"}, rowKeys(rows))

	rows, total, err := a.UsageWithTotal(UsageQuery{GroupBy: ByModel, Bucket: ByDay, Location: berlin})
	require.NoError(t, err)
	require.Equal(t, []UsageRow{
		{Bucket: "2026-03-01", Key: "other", Calls: 1, InputTokens: 20, OutputTokens: 2, TotalTokens: 22, CostUSD: 22e-6},
		{Bucket: "2026-03-02", Key: "m", Calls: 1, InputTokens: 10, OutputTokens: 1, TotalTokens: 11, CostUSD: 11e-6},
	}, rows)
	require.Equal(t, UsageRow{Calls: 2, InputTokens: 30, OutputTokens: 3, TotalTokens: 33, CostUSD: 33e-6}, total)

	_, _, err = a.UsageWithTotal(UsageQuery{GroupBy: ByModel, Bucket: ByHost})
	require.ErrorContains(t, err, "bucket")
}

func rowKeys(rows []UsageRow) []string {
	var ks []string
	for _, r := range rows {
		ks = append(ks, r.Key)
	}
	return ks
}

// Search matches a substring in any case of the id, working directory,
// title, slug or a model; Parent selects a session's children; Count
// counts what the filters select, whatever the page.
func TestAggregator_QuerySearchAndCount(t *testing.T) {
	t.Parallel()
	var all []schema.Entry
	for i, id := range []string{"alpha-1", "beta-2", "gamma-3"} {
		b := &builder{format: schema.FormatClaudeCode, session: id, path: id + ".jsonl"}
		u := b.user("u"+id, at(i), "hi")
		u.CWD = "/work/Proj-" + id
		m := b.assistant("a"+id, at(i+1), "m"+id, schema.Usage{Input: 1})
		if id == "gamma-3" {
			m.Model = "claude-Opus-4"
			u.ParentSessionID = "alpha-1"
			m.ParentSessionID = "alpha-1"
		}
		all = append(all, u, m)
	}
	a := NewAggregator(flatPricer{"m": true})
	addAll(a, all)
	ids := func(q SessionQuery) []string {
		page, _, err := a.Query(q)
		require.NoError(t, err)
		var out []string
		for _, s := range page {
			out = append(out, s.SessionID)
		}
		n, err := a.Count(q)
		require.NoError(t, err)
		require.Equal(t, len(out), n, "count agrees with the listing")
		return out
	}
	require.Equal(t, []string{"beta-2"}, ids(SessionQuery{Search: "BETA"}), "id, any case")
	require.Equal(t, []string{"alpha-1"}, ids(SessionQuery{Search: "proj-alpha"}), "working directory")
	require.Equal(t, []string{"gamma-3"}, ids(SessionQuery{Search: "opus"}), "model")
	require.Empty(t, ids(SessionQuery{Search: "nothing"}))
	require.Equal(t, []string{"gamma-3"}, ids(SessionQuery{Parent: "alpha-1"}))
	page, _, err := a.Query(SessionQuery{Limit: 1})
	require.NoError(t, err)
	require.Len(t, page, 1)
	n, err := a.Count(SessionQuery{Limit: 1})
	require.NoError(t, err)
	require.Equal(t, 3, n, "the total is not the page's")
}

// The listing follows the commits: a session added after it was built,
// committed and evicted from the cache, is found by a filtered query and
// counted, and a session whose figures changed is listed with the new
// ones, in the order they give.
func TestAggregator_ListingFollowsCommits(t *testing.T) {
	t.Parallel()
	st, err := store.Open(store.Config{Dir: t.TempDir()})
	require.NoError(t, err)
	defer st.Close()
	a, err := New(Config{Pricer: flatPricer{"m": true}, Store: st})
	require.NoError(t, err)
	add := func(id string, sec int, input int64) {
		b := &builder{format: schema.FormatClaudeCode, session: id, path: id + ".jsonl"}
		addAll(a, []schema.Entry{b.user("u"+id+fmt.Sprint(sec), at(sec), "hi"), b.assistant("a"+id+fmt.Sprint(sec), at(sec+1), "m"+id+fmt.Sprint(sec), schema.Usage{Input: input})})
	}
	add("first", 0, 10)
	require.NoError(t, a.Commit(nil, 1))
	require.NoError(t, a.buildListing())
	add("second", 10, 20)
	add("first", 20, 30) // first now costs 40: the costliest
	for range 3 {        // commits until both are evicted from the cache
		require.NoError(t, a.Commit(nil, 1))
	}
	require.Empty(t, a.byNum, "evicted: the listing answers")

	page, _, err := a.Query(SessionQuery{Search: "SECOND"})
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, "second", page[0].SessionID)
	n, err := a.Count(SessionQuery{Model: "m"})
	require.NoError(t, err)
	require.Equal(t, 2, n)
	page, _, err = a.Query(SessionQuery{Sort: SortCost})
	require.NoError(t, err)
	require.Equal(t, []string{"first", "second"}, []string{page[0].SessionID, page[1].SessionID})
	require.InDelta(t, 40e-6, page[0].CostUSD, 1e-12)
}
