package index

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var stampTimes = []string{
	"0000-01-01T00:00:00Z",
	"0001-01-01T00:00:00.000000001Z",
	"1677-09-21T00:12:43.145224191Z",
	"1677-09-21T00:12:43.145224192Z",
	"1969-12-31T23:00:00Z",
	"1969-12-31T23:59:59.999999999Z",
	"1970-01-01T00:00:00Z",
	"1970-01-01T00:59:59.999999999Z",
	"1970-01-01T01:00:00Z",
	"2026-03-01T10:00:00.123456789Z",
	"2262-04-11T23:47:16.854775807Z",
	"2262-04-11T23:47:16.854775808Z",
	"9999-12-31T23:59:59.999999999Z",
}

func parseStampTimes(t *testing.T) []time.Time {
	t.Helper()
	out := make([]time.Time, len(stampTimes))
	for i, s := range stampTimes {
		var err error
		out[i], err = time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
	}
	return out
}

// Stamps name every time in order, keep fact keys (nano is UnixNano,
// wrapped as ever), and read what states written before hold.
func TestStamp(t *testing.T) {
	t.Parallel()
	times := parseStampTimes(t)
	require.False(t, stampOf(time.Time{}).known())
	require.Equal(t, time.Time{}, stamp{}.time())
	for i, ts := range times {
		s := stampOf(ts)
		require.True(t, s.known(), stampTimes[i])
		require.Equal(t, ts, s.time(), stampTimes[i])
		require.Equal(t, ts.UnixNano(), s.nano(), "%s: fact keys are hashed as before", stampTimes[i])
		if i > 0 {
			require.Equal(t, 1, s.compare(stampOf(times[i-1])), stampTimes[i])
			require.Greater(t, hourOf(s), hourOf(stampOf(times[i-1]))-1, "%s: hour codes in time order", stampTimes[i])
		}
		require.NotZero(t, hourOf(s), "%s: only no timestamp has hour 0", stampTimes[i])
		require.Equal(t, ts.Truncate(time.Hour), hourStart(hourOf(s)), stampTimes[i])

		// Record version 3 round-trips it; a time in a version 2 record
		// (Unix nanoseconds) reads as it was written.
		e := encoder{}
		e.time(ts)
		d := decoder{b: e.b, v: recordVersion}
		require.Equal(t, ts, d.time())
		require.NoError(t, d.end())
		if ts.After(time.Unix(0, 0)) && !ts.After(maxNanoTime) {
			d = decoder{b: binary.AppendVarint(nil, ts.UnixNano()), v: 2}
			require.Equal(t, ts, d.time())
		}

		// Ledger keys: the 34 bytes of before where Unix nanoseconds
		// name the time, 38 elsewhere; both read back.
		k := ledgerKey{ts: s, kind: kindUsage, fact: factKey{1, 2}}
		b := ledgerStoreKey(7, k)
		if ts.After(time.Unix(0, 0)) && !ts.After(maxNanoTime) {
			require.Len(t, b, 34, stampTimes[i])
		} else {
			require.Len(t, b, 38, stampTimes[i])
		}
		got, ok := parseLedgerKey(b)
		require.True(t, ok)
		require.Equal(t, k, got, stampTimes[i])
	}
	d := decoder{b: binary.AppendVarint(nil, 0), v: 2}
	require.False(t, d.stamp().known(), "0 was none")
	got, ok := parseLedgerKey(ledgerStoreKey(7, ledgerKey{kind: kindEntry}))
	require.True(t, ok)
	require.False(t, got.ts.known())

	// Rollup hours of the stored cells are those of before from
	// 1970-01-01T01:00 on.
	ts := times[9]
	require.Equal(t, ts.UnixNano()/int64(time.Hour), hourOf(stampOf(ts)))
}
