package duckdb_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// The Copilot CLI's per-leg usage entries (meta assistant messages with
// usage) give the views the Go aggregator's sessions: a leg is an API
// call, not an assistant message; a compaction counts.
func TestDuckDBInit_Copilot(t *testing.T) {
	entries := offlineEntries(t, "../../formats/copilot/testdata/legs/input.jsonl", "../../formats/copilot/testdata/reset/input.jsonl")
	want := goSessions(entries, price.Default())
	require.Len(t, want, 2)
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckDBInit(dir))
	got := viewSessions(t, db)
	requireSameSessions(t, want, got)
	for _, s := range got {
		switch s.SessionID {
		case "0b1c2d3e-0000-4000-8000-000000000001":
			require.Equal(t, [3]int64{4, 3, 2}, [3]int64{s.APICalls, s.AssistantMessages, s.UserMessages})
		case "0b1c2d3e-0000-4000-8000-000000000002":
			require.Equal(t, [3]int64{2, 2, 1}, [3]int64{s.APICalls, s.AssistantMessages, s.Compactions})
		}
	}
}
