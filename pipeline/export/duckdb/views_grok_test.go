package duckdb_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// The Grok Build CLI's per-turn, per-model usage entries (the first of a
// turn a reply, the others meta, a turn written twice under one event id)
// give the views the Go aggregator's sessions: a model of a turn is an API
// call, a turn one assistant message, the recorded cost as recorded.
func TestDuckDBInit_Grok(t *testing.T) {
	entries := offlineEntries(t, "../../formats/grok/testdata/turns/input.jsonl")
	want := goSessions(entries, price.Default())
	require.Len(t, want, 1)
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckDBInit(dir))
	got := viewSessions(t, db)
	requireSameSessions(t, want, got)
	require.Len(t, got, 1)
	s := got[0]
	require.Equal(t, [4]int64{4, 3, 3, 3}, [4]int64{s.APICalls, s.AssistantMessages, s.UserMessages, s.Turns})
	require.Equal(t, [4]int64{14000, 2110, 56000, 2000}, [4]int64{s.Input, s.Output, s.CacheRead, s.CacheWrite})
}
