package duckdb_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// Qwen Code's session gives the views the Go aggregator's session: four
// calls, the injected notification no input, the telemetry no call, the
// compression a compaction, a tool error.
func TestDuckDBInit_Qwen(t *testing.T) {
	entries := offlineEntries(t, "../../formats/qwen/testdata/session/input.jsonl")
	want := goSessions(entries, price.Default())
	require.Len(t, want, 1)
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckDBInit(dir))
	got := viewSessions(t, db)
	requireSameSessions(t, want, got)
	require.Len(t, got, 1)
	s := got[0]
	require.Equal(t, [6]int64{4, 4, 2, 2, 1, 1}, [6]int64{s.APICalls, s.AssistantMessages, s.UserMessages, s.Turns, s.Compactions, s.ToolErrors})
	require.Equal(t, [3]int64{7_400, 690, 32_500}, [3]int64{s.Input, s.Output, s.CacheRead})
}
