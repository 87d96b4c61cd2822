package index_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/schema"
)

// edgeTimes are timestamps at the edges of what the state once held as
// Unix nanoseconds (1677-09-21 to 2262-04-11, 0 for none) and of what
// RFC 3339 names (years 0 to 9999).
var edgeTimes = []string{
	"0000-01-01T00:00:00Z",
	"0001-01-01T00:00:00.000000001Z",
	"1677-09-21T00:12:43.145224191Z", // a nanosecond before the first Unix nanosecond
	"1969-12-31T23:59:59.999999999Z",
	"1970-01-01T00:00:00Z",
	"1970-01-01T00:30:00Z",
	"2262-04-11T23:47:16.854775807Z", // the last Unix nanosecond
	"2262-04-11T23:47:16.854775808Z",
	"9999-12-31T23:59:59Z",
	"9999-12-31T23:59:59.999999999Z",
}

// edgeEntries returns, for each edge time, a session of a user message
// and a priced API call at that time.
func edgeEntries(t *testing.T) ([]*schema.Entry, []time.Time) {
	t.Helper()
	var out []*schema.Entry
	var times []time.Time
	for i, s := range edgeTimes {
		ts, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		times = append(times, ts)
		id := fmt.Sprintf("edge-%02d", i)
		user := schema.Entry{Format: schema.FormatPi, Host: "h", Path: "/p/" + id + ".jsonl", Line: 1, SessionID: id, EntryID: id + "-u",
			TS: ts, Kind: schema.KindMessage, Role: schema.RoleUser, Text: "at " + s}
		call := user
		call.Line, call.EntryID, call.Role, call.Text, call.Model = 2, id+"-a", schema.RoleAssistant, "", "m"
		call.Usage, call.UsageKey, call.CostUSD = &schema.Usage{Input: 100, Output: int64(i + 1)}, "pi:"+id+"-a", new(0.5)
		out = append(out, &user, &call)
	}
	return out, times
}

// Time at the edges: a session stamped 9999-12-31 showed first_ts
// 1816-03-30 in the API (Unix nanoseconds wrapped), one stamped
// 1970-01-01T00:00:00Z showed 0001-01-01 (0 was "none"), and usage until
// 2262-04-11 or since before 1677-09-21 was empty. The indexer, read back
// from its state and through its API, now agrees with the offline
// aggregation (which is right) over every time a timestamp names.
func TestIndexer_TimeAtTheEdges(t *testing.T) {
	t.Parallel()
	entries, times := edgeEntries(t)
	mem := indextest.MustNew(t, index.Config{Turns: true})
	for _, e := range entries {
		mem.Add(e)
	}
	want := mem.Sessions()
	require.Len(t, want, len(edgeTimes))
	for i, s := range want {
		require.True(t, times[i].Equal(s.FirstTS), "offline first_ts of %s: %v, want %v", s.SessionID, s.FirstTS, times[i])
	}

	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, entries)
	cfg := index.IndexerConfig{JS: js, Dir: t.TempDir(), CommitInterval: 10 * time.Millisecond, MaxFacts: 1}
	ix, stop := indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	require.NoError(t, stop())
	ix, _ = indextest.RunIndexer(t, cfg) // everything read back from the state
	indextest.WaitApplied(t, ix, last)
	got, err := ix.Sessions()
	require.NoError(t, err)
	require.Equal(t, want, got)

	srv := httptest.NewServer(api.Handler(ix, api.Config{}))
	defer srv.Close()
	for i, ts := range times {
		id := fmt.Sprintf("edge-%02d", i)
		var s struct {
			Session index.Session `json:"session"`
			Turns   []index.Turn  `json:"turns"`
		}
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions/"+id, "", &s))
		require.True(t, ts.Equal(s.Session.FirstTS), "%s first_ts %v, want %v", id, s.Session.FirstTS, ts)
		require.True(t, ts.Equal(s.Session.LastTS), "%s last_ts %v, want %v", id, s.Session.LastTS, ts)
		require.Len(t, s.Turns, 1)
		require.True(t, ts.Equal(s.Turns[0].Start), "%s turn start %v, want %v", id, s.Turns[0].Start, ts)
		wantTurns, _, err := mem.Turns(schema.FormatPi, "h", id)
		require.NoError(t, err)
		require.Equal(t, wantTurns, s.Turns)
	}

	usage := func(q url.Values) map[string]int64 {
		t.Helper()
		var page struct {
			Rows []index.UsageRow `json:"rows"`
		}
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/usage?"+q.Encode(), "", &page), q.Encode())
		out := make(map[string]int64)
		for _, r := range page.Rows {
			out[r.Key] = r.Calls
		}
		return out
	}
	days := func(from, to int) map[string]int64 {
		out := make(map[string]int64)
		for _, ts := range times[from:to] {
			out[ts.UTC().Format(time.DateOnly)]++
		}
		return out
	}
	require.Equal(t, days(0, len(times)), usage(url.Values{"group_by": {"day"}}))
	require.Equal(t, days(0, 6), usage(url.Values{"group_by": {"day"}, "until": {"2262-04-10"}}))
	require.Equal(t, days(0, len(times)-2), usage(url.Values{"group_by": {"day"}, "until": {"2262-04-11"}}))
	require.Equal(t, days(0, len(times)), usage(url.Values{"group_by": {"day"}, "since": {"0000-01-01"}}))
	require.Equal(t, days(3, len(times)), usage(url.Values{"group_by": {"day"}, "since": {"1677-09-22"}}))
	require.Equal(t, days(2, 4), usage(url.Values{"group_by": {"day"}, "since": {"1600-01-01"}, "until": {"1969-12-31"}}))
	require.Equal(t, days(4, 6), usage(url.Values{"group_by": {"day"}, "since": {"1970-01-01"}, "until": {"1970-01-01"}}))
	require.Equal(t, map[string]int64{"1970-01-01T00Z": 2}, usage(url.Values{"group_by": {"hour"}, "since": {"1970-01-01T00:00:00Z"}, "until": {"1970-01-01T00:59:59Z"}}))
	require.Equal(t, days(8, 10), usage(url.Values{"group_by": {"day"}, "since": {"9999-12-31"}}))
	for _, q := range []index.UsageQuery{
		{GroupBy: index.ByHour},
		{GroupBy: index.ByDay, Since: times[1], Until: times[8]},
		{GroupBy: index.ByModel, Until: times[4]},
	} {
		w, err := mem.Usage(q)
		require.NoError(t, err)
		g, err := ix.Usage(q)
		require.NoError(t, err)
		require.Equal(t, w, g, "%+v", q)
	}

	// The default listing (the last-activity index) and first_ts order.
	for _, sort := range []string{"last_ts", "first_ts"} {
		var page struct {
			Sessions []index.Session `json:"sessions"`
		}
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/sessions?sort="+sort, "", &page))
		require.Len(t, page.Sessions, len(times), sort)
		require.Equal(t, "edge-09", page.Sessions[0].SessionID, sort)
	}
}
