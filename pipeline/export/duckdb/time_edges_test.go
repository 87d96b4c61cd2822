package duckdb_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// edgeEntries returns, for each time at the edges of what Unix
// nanoseconds name and of what RFC 3339 names, a session of a user
// message and a priced API call at that time, and an entry without one.
func edgeEntries(t *testing.T) []schema.Entry {
	t.Helper()
	var out []schema.Entry
	for i, s := range []string{
		"0000-01-01T00:00:00Z",
		"0001-01-01T00:00:00.000001Z",
		"1677-09-21T00:12:43.145224Z",
		"1969-12-31T23:59:59.999999Z",
		"1970-01-01T00:00:00Z",
		"2262-04-11T23:47:16.854775Z",
		"2262-04-11T23:47:16.854776Z",
		"9999-12-31T23:59:59.999999Z",
	} {
		ts, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		id := fmt.Sprintf("edge-%02d", i)
		user := schema.Entry{Format: schema.FormatPi, Host: "h", Path: "/p/" + id + ".jsonl", Line: 1, SessionID: id, EntryID: id + "-u",
			TS: ts, Kind: schema.KindMessage, Role: schema.RoleUser, Text: "at " + s}
		call := user
		call.Line, call.EntryID, call.Role, call.Text, call.Model = 2, id+"-a", schema.RoleAssistant, "", "m"
		call.Usage, call.UsageKey, call.CostUSD = &schema.Usage{Input: 100, Output: int64(i + 1)}, "pi:"+id+"-a", new(0.5)
		out = append(out, user, call)
	}
	none := schema.Entry{Format: schema.FormatPi, Host: "h", Path: "/p/none.jsonl", Line: 1, SessionID: "none", EntryID: "none-u",
		Kind: schema.KindMessage, Role: schema.RoleUser, Text: "no time"}
	return append(out, none)
}

// Parquet at the edges of time: a 1970-01-01T00:00:00Z ts was written as
// NULL (the zero value of an optional int64); every ts now reads back as
// written, through the writer and through a compaction, and the sessions
// view agrees with the offline aggregation; only an entry without a ts
// has a NULL one.
func TestParquet_TimeAtTheEdges(t *testing.T) {
	entries := edgeEntries(t)
	n := uint64(len(entries))
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	exportTo(t, dir, entries, n+1) // a second copy of each, in other files
	want := goSessions(entries, price.Default())
	byID := make(map[string]*schema.Entry)
	for i := range entries {
		byID[entries[i].EntryID] = &entries[i]
	}
	check := func(rowsWanted int64) {
		t.Helper()
		rows := readBack(t, openDuckDB(t), dir)
		require.Len(t, rows, int(rowsWanted))
		for _, r := range rows {
			e := byID[r.Entry.EntryID]
			require.NotNil(t, e, r.Entry.EntryID)
			require.True(t, e.TS.Equal(r.Entry.TS), "%s: ts %v, want %v", e.EntryID, r.Entry.TS, e.TS)
		}
		requireSameSessions(t, want, viewSessions(t, openViews(t, duckDBInit(dir))))
	}
	check(int64(2 * n))
	var nulls int64
	scalar(t, openDuckDB(t), `SELECT count(*) FROM `+glob(dir)+` WHERE ts IS NULL`, &nulls)
	require.Equal(t, int64(2), nulls, "the entry without a ts, twice")

	// Every dated partition but the last day's is closed (dates compare
	// as text: year 10000 would not be after 9999).
	st := mustCompact(t, parquet.CompactConfig{Dir: dir, ClosedBefore: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)})
	require.Equal(t, int64(n-3), st.Duplicates, "all but the 9999-12-31 entries and the one without a ts")
	check(int64(2*n) - st.Duplicates)
}
