package duckdb_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// A Kimi CLI session and its subagent's log give the views the Go
// aggregator's session: the subagent's call, in its own log and
// forwarded to the parent's, counts once; its prompt is no input; the
// forwarded copy adds no tool call.
func TestDuckDBInit_Kimi(t *testing.T) {
	home := t.TempDir()
	session := filepath.Join(home, "sessions", "3f2a9c", "sess-1")
	for from, to := range map[string]string{
		"../../formats/kimi/testdata/turns/input.jsonl":    filepath.Join(session, "wire.jsonl"),
		"../../formats/kimi/testdata/subagent/input.jsonl": filepath.Join(session, "subagents", "a7f3c2", "wire.jsonl"),
	} {
		data, err := os.ReadFile(from)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
		require.NoError(t, os.WriteFile(to, data, 0o644))
	}
	entries := offlineEntries(t, home)
	want := goSessions(entries, price.Default())
	require.Len(t, want, 1)
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckDBInit(dir))
	got := viewSessions(t, db)
	requireSameSessions(t, want, got)
	require.Len(t, got, 1)
	s := got[0]
	require.Equal(t, [7]int64{5, 4, 2, 2, 4, 1, 1}, [7]int64{s.APICalls, s.AssistantMessages, s.UserMessages, s.Turns, s.ToolCalls, s.ToolErrors, s.Compactions})
	require.Equal(t, [4]int64{5_100, 370, 32_500, 2_000}, [4]int64{s.Input, s.Output, s.CacheRead, s.CacheWrite})
}
