package indexcmd

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
)

// requireNoControls fails if out holds a control character other than
// the newlines that end its lines.
func requireNoControls(t *testing.T, out string) {
	t.Helper()
	for i, r := range out {
		if r != '\n' && (r < 0x20 || r >= 0x7f && r < 0xa0 || r == 0xfffd) {
			require.Failf(t, "control character printed", "%q at %d in:\n%s", r, i, out)
		}
	}
}

// Session ids, formats, models, usage keys and alert fields come from
// transcripts: the tables print their control characters escaped.
func TestTables_EscapeControlCharacters(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteSessionsTable(&b, []index.Session{{
		SessionID: "s\x1b]0;owned\a\r\x00", Format: "pi\x1b[2J", Models: []string{"m\u009b1\xff"},
		LastTS: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC),
	}}, true))
	requireNoControls(t, b.String())
	require.Contains(t, b.String(), `s\x1b]0;owned\a\r\x00`)
	require.Contains(t, b.String(), `pi\x1b[2J`)
	require.Contains(t, b.String(), `m\u009b1\xff`)

	b.Reset()
	require.NoError(t, WriteUsageTable(&b, "model", []index.UsageRow{{Key: "k\x1b[31m\r"}}))
	requireNoControls(t, b.String())
	require.Contains(t, b.String(), `k\x1b[31m\r`)

	b.Reset()
	require.NoError(t, WriteAlertsTable(&b, []alert.Event{{Rule: "r\x1b", Key: "k\r", Host: "h\x00", Scope: "session", Metric: "cost_usd"}}))
	requireNoControls(t, b.String())
	require.Contains(t, b.String(), `r\x1b`)
	require.Contains(t, b.String(), `k\r`)
	require.Contains(t, b.String(), `h\x00`)
}

// Cutting a long id or model list keeps whole characters.
func TestShort_CutsCharacters(t *testing.T) {
	require.Equal(t, "ééééééééééééé…", short("éééééééééééééé"))
	require.Equal(t, "éééééééééééé", short("éééééééééééé"))
	long := ""
	for range 41 {
		long += "é"
	}
	require.Equal(t, long[:39*2]+"…", models([]string{long}))
}

// The sessions table fits 120 columns by default, sorted by the last
// activity it shows, ids cut with a note on how to see them whole; -wide
// prints every column and whole ids; the host column only appears for
// sessions of several hosts.
func TestSessionsTable_FitsAndSorts(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 11, d, 9, 0, 0, 0, time.UTC) }
	all := []index.Session{
		{SessionID: "2638daee-0588-4a5b-9c1d-0123456789ab", Format: "claude-code", Host: "build-01", LastTS: day(24), Turns: 3, APICalls: 12,
			TotalTokens: 1_234_567_890, CostUSD: 1234.5678, Models: []string{"claude-opus-4-5-20251101", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"}},
		{SessionID: "0f1e2d3c-4b5a-6978-8a9b-cdef01234567", Format: "openclaw-trajectory", Host: "build-01", LastTS: day(20), CostUSD: 0.0019},
	}
	var b bytes.Buffer
	require.NoError(t, WriteSessionsTable(&b, all, false))
	out := b.String()
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		require.LessOrEqual(t, utf8.RuneCountInString(l), 120, "%q", l)
	}
	require.NotContains(t, out, "HOST", "one host: no column")
	require.Less(t, strings.Index(out, "0f1e2d3c"), strings.Index(out, "2638daee"), "sorted by last activity")
	require.Contains(t, out, "0.0019")
	require.Contains(t, out, "-wide prints them whole")

	all[1].Host = "laptop"
	b.Reset()
	require.NoError(t, WriteSessionsTable(&b, all, false))
	require.Contains(t, b.String(), "HOST")
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		require.LessOrEqual(t, utf8.RuneCountInString(l), 120, "%q", l)
	}

	b.Reset()
	require.NoError(t, WriteSessionsTable(&b, all, true))
	require.Contains(t, b.String(), "2638daee-0588-4a5b-9c1d-0123456789ab")
	require.Contains(t, b.String(), "claude-haiku-4-5-20251001")
	require.Contains(t, b.String(), "CACHE WRITE")
	require.NotContains(t, b.String(), "-wide prints")
}
