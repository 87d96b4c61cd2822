package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/ccusage"
)

// The Copilot CLI fixtures of pipeline/formats/copilot (generated: no
// public session log with usage is licensed for copying).
const copilotCases = "../../pipeline/formats/copilot/testdata"

// A session resumed once: per model, the second shutdown counts what its
// cumulative counters added since the first. The totals are the hand
// computed ones (input without the cache: 20000−15000−3000 + 800 for the
// first leg, (1700−500)−800 + (9000−6000) for the second), and ccusage
// 20.0.24, which also counts per-model differences between shutdowns,
// gives the same tokens and cost.
func TestSessions_CopilotSameAsCcusage(t *testing.T) {
	files := []string{copilotCases + "/legs/input.jsonl"}
	got := ours(t, files...)
	require.Len(t, got, 1)
	s := got[0]
	require.Equal(t, "copilot", string(s.Format))
	require.Equal(t, "0b1c2d3e-0000-4000-8000-000000000001", s.SessionID)
	require.Equal(t, totals{Input: 6200, Output: 397, CacheRead: 21500, CacheWrite: 3000, CostUSD: s.CostUSD}, fromSessions(got))
	require.Equal(t, int64(4), s.APICalls, "one per model and leg with usage")
	require.Equal(t, int64(3), s.AssistantMessages, "the assistant.message events, not the legs")
	require.Equal(t, int64(2), s.UserMessages)
	require.Equal(t, int64(0), s.UnpricedCalls)

	theirs := fromCcusage(ccusage.Totals(t, ccusage.Copilot, ccusage.Layout(t, ccusage.Copilot, files)))
	requireSame(t, theirs, fromSessions(got), "copilot legs")
}

// After a reset (the second shutdown's counters lower than the first's:
// a compaction) the second leg's counters are its own and count whole.
// ccusage takes the difference counter by counter, clamped at zero, so it
// counts only what exceeds the first leg: of the second leg's input 30000
// (40000 less 10000 cache reads), cache reads 10000 and output 700, it
// counts input 10000, cache reads 0 and output 200.
func TestSessions_CcusageClampsCopilotReset(t *testing.T) {
	files := []string{copilotCases + "/reset/input.jsonl"}
	got := ours(t, files...)
	require.Len(t, got, 1)
	require.Equal(t, int64(1), got[0].Compactions)
	mine := fromSessions(got)
	require.Equal(t, totals{Input: 50000, Output: 1200, CacheRead: 40000, CostUSD: mine.CostUSD}, mine)

	theirs := fromCcusage(ccusage.Totals(t, ccusage.Copilot, ccusage.Layout(t, ccusage.Copilot, files)))
	diff := mine.minus(theirs)
	require.Equal(t, totals{Input: 20000, Output: 500, CacheRead: 10000, CostUSD: diff.CostUSD}, diff)
}
