package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/ccusage"
)

// The Grok Build CLI fixtures of pipeline/formats/grok (generated: no
// public session log with usage is licensed for copying).
const grokCases = "../../pipeline/formats/grok/testdata"

// Three prompts: a turn with one model written twice (counted once), a
// turn with two models (one reply, two calls), a cancelled turn without
// usage, a turn without event id or modelUsage. The totals are the hand
// computed ones: input without the cache, (21000−16000) + (45000−38000−
// 2000) + (5000−2000) + 1000; output 900+1000+200+10; cache reads
// 16000+38000+2000; cache writes 2000. The cost is Grok's own (98000000 +
// 220000000 + 30000000 ticks = $0.0348) for the turns that record it, and
// the table's for the turn without (grok-4.5, the prompt's model).
//
// ccusage 20.0.24 gives the same tokens and recorded cost; it names the
// model of a turn without modelUsage "unknown" and leaves it unpriced, so
// its cost is lower by that turn's table price.
func TestSessions_GrokSameAsCcusage(t *testing.T) {
	files := []string{grokCases + "/turns/input.jsonl"}
	got := ours(t, files...)
	require.Len(t, got, 1)
	s := got[0]
	require.Equal(t, "grok-build", string(s.Format))
	require.Equal(t, "019f8870-0000-7000-8000-000000000001", s.SessionID)
	mine := fromSessions(got)
	require.Equal(t, totals{Input: 14000, Output: 2110, CacheRead: 56000, CacheWrite: 2000, CostUSD: mine.CostUSD}, mine)
	require.Equal(t, int64(4), s.APICalls, "one per model and turn with usage; the turn written twice once")
	require.Equal(t, int64(3), s.AssistantMessages, "one per completed turn with usage, whatever its models")
	require.Equal(t, int64(3), s.UserMessages, "a prompt's second chunk is not an input")
	require.Equal(t, int64(3), s.Turns)
	require.Equal(t, int64(2), s.ToolCalls)
	require.Equal(t, int64(1), s.ToolErrors)
	require.Equal(t, int64(0), s.UnpricedCalls)
	require.Equal(t, 0.0348, s.PriceSources["recorded"].CostUSD, "Grok's own cost, as recorded")
	require.Equal(t, int64(3), s.PriceSources["recorded"].Calls)

	theirs := fromCcusage(ccusage.Totals(t, ccusage.Grok, ccusage.Layout(t, ccusage.Grok, files)))
	diff := mine.minus(theirs)
	require.Equal(t, totals{CostUSD: diff.CostUSD}, diff, "the same tokens")
	require.InDelta(t, 0.0348, theirs.CostUSD, 1e-9, "ccusage uses the recorded cost too")
	require.InDelta(t, s.CostUSD-0.0348, diff.CostUSD, 1e-9, "the difference is the table price of the turn ccusage leaves unpriced")
	require.Greater(t, diff.CostUSD, 0.0)
}

// A Grok home as the CLI lays it out: the session is the directory's
// name, the project the URL-encoded directory above it. A sibling .jsonl
// of the session directory holding some of the same updates (the same
// event ids, the same session) adds nothing: each turn counts once.
func TestSessions_GrokHomeLayout(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "%2Fw%2Fproj", "0199aa00-1111-7222-8333-444455556666")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	data, err := os.ReadFile(grokCases + "/turns/input.jsonl")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "updates.jsonl"), data, 0o644))
	lines := bytes.SplitAfter(data, []byte("\n"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), bytes.Join(lines[8:15], nil), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"info":{"id":"0199aa00-1111-7222-8333-444455556666","cwd":"/w/proj"}}`), 0o644))

	got := ours(t, home)
	require.Len(t, got, 1)
	s := got[0]
	require.Equal(t, "0199aa00-1111-7222-8333-444455556666", s.SessionID)
	require.Equal(t, "/w/proj", s.CWD)
	require.Equal(t, totals{Input: 14000, Output: 2110, CacheRead: 56000, CacheWrite: 2000, CostUSD: s.CostUSD}, fromSessions(got))
	require.Equal(t, [4]int64{4, 3, 3, 2}, [4]int64{s.APICalls, s.AssistantMessages, s.UserMessages, s.ToolCalls})
}
