package report

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func call(ts string, model string, output int64, costUSD float64) Call {
	c := Call{Format: schema.FormatClaudeCode, Host: "h", SessionID: "s", Model: model,
		Tokens: schema.Usage{Input: 10, Output: output}, CostNanos: nanos(costUSD)}
	if ts != "" {
		c.TS = at(ts)
	}
	return c
}

// A call taken back (a better occurrence arrived) leaves the collector;
// the occurrence that replaced it is what Calls returns.
func TestCollector_TakenBackCallsLeave(t *testing.T) {
	var c Collector
	first := index.UsageChange{Sign: 1, TS: at("2026-01-09T23:59:00Z"), SessionID: "s", Format: schema.FormatClaudeCode, Model: "m",
		Tokens: schema.Usage{Input: 1, Output: 2}, CostUSD: 0.5}
	c.Add(first)
	back := first
	back.Sign = -1
	c.Add(back)
	better := first
	better.TS, better.Tokens.Output = at("2026-01-10T00:01:00Z"), 9
	c.Add(better)
	calls := c.Calls()
	require.Len(t, calls, 1)
	require.Equal(t, at("2026-01-10T00:01:00Z"), calls[0].TS)
	require.Equal(t, int64(9), calls[0].Tokens.Output)
	require.Equal(t, int64(500_000_000), calls[0].CostNanos)

	// Two identical calls (same time, tokens, session) are two calls.
	c.Add(better)
	require.Len(t, c.Calls(), 2)
}

// Days start at midnight in the report's time zone, also on the days a
// clock changes (Europe/Berlin: 2026-03-29 has 23 hours); weeks start on
// the day asked; costs add up in nano-dollars.
func TestCalendar_TimeZonesWeeksMonths(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	calls := []Call{
		call("2026-03-28T22:59:00Z", "a", 1, 0.1), // 23:59 CET on the 28th
		call("2026-03-28T23:00:00Z", "a", 2, 0.2), // 00:00 CET on the 29th
		call("2026-03-29T21:59:00Z", "b", 3, 0.3), // 23:59 CEST on the 29th
		call("2026-03-29T22:00:00Z", "b", 4, 0.4), // 00:00 CEST on the 30th
		call("", "b", 5, 0.5),
	}
	rows, total, undated := Calendar(calls, Options{Period: Day, Location: berlin})
	require.Equal(t, []string{"2026-03-28", "2026-03-29", "2026-03-30"}, periods(rows))
	require.Equal(t, []int64{1, 2, 1}, callCounts(rows))
	require.Equal(t, int64(5), total.Calls)
	require.Equal(t, int64(1), undated.Calls)
	require.InDelta(t, 1.5, total.CostUSD, 1e-12)
	require.Equal(t, []string{"a", "b"}, rows[1].Models)

	rows, _, _ = Calendar(calls, Options{Period: Week, Location: berlin, WeekStart: time.Monday})
	require.Equal(t, []string{"2026-03-23", "2026-03-30"}, periods(rows)) // Sunday the 29th is in the week of Monday the 23rd
	rows, _, _ = Calendar(calls, Options{Period: Week, Location: berlin, WeekStart: time.Sunday})
	require.Equal(t, []string{"2026-03-22", "2026-03-29"}, periods(rows))
	rows, _, _ = Calendar(calls, Options{Period: Month, Location: time.UTC, By: ByModel})
	require.Equal(t, []Row{rows[0], rows[1]}, rows)
	require.Equal(t, "a", rows[0].Group)
	require.Equal(t, "b", rows[1].Group)
	require.Equal(t, int64(2), rows[1].Calls, "the undated call is in no row")
}

func periods(rows []Row) (ps []string) {
	for _, r := range rows {
		ps = append(ps, r.Period)
	}
	return ps
}

func callCounts(rows []Row) (n []int64) {
	for _, r := range rows {
		n = append(n, r.Calls)
	}
	return n
}

// Blocks by hand: a block starts at its first call's hour and lasts five
// hours; a call past its end starts the next one (no gap when the
// previous call is less than five hours before); a silence of more than
// five hours is a gap from the last call + 5 h to the next call; the
// block still running at now is active, with its burn rate and
// projection.
func TestBlocks_ByHand(t *testing.T) {
	calls := []Call{
		call("2026-01-09T10:20:00Z", "m", 100, 1),
		call("2026-01-09T14:50:00Z", "m", 100, 1), // within 10:00–15:00
		call("2026-01-09T15:10:00Z", "m", 100, 1), // past 15:00: next block at 15:00, no gap (20 min after the last)
		call("2026-01-10T09:00:00Z", "m", 100, 1), // 17 h 50 min later: gap 20:10 → 09:00
		call("2026-01-10T10:00:00Z", "m", 200, 2),
	}
	now := at("2026-01-10T11:00:00Z")
	blocks := Blocks(calls, 0, now)
	require.Len(t, blocks, 4)
	b := blocks[0]
	require.Equal(t, at("2026-01-09T10:00:00Z"), b.Start)
	require.Equal(t, at("2026-01-09T15:00:00Z"), b.End)
	require.Equal(t, at("2026-01-09T14:50:00Z"), *b.ActualEnd)
	require.Equal(t, int64(2), b.Calls)
	require.False(t, b.Active)
	require.Nil(t, b.BurnRate)
	require.Equal(t, at("2026-01-09T15:00:00Z"), blocks[1].Start)
	require.Equal(t, int64(1), blocks[1].Calls)
	gap := blocks[2]
	require.True(t, gap.Gap)
	require.Equal(t, "gap-2026-01-09T20:10:00Z", gap.ID)
	require.Equal(t, at("2026-01-10T09:00:00Z"), gap.End)
	require.Zero(t, gap.Calls)
	require.Empty(t, gap.Models)
	act := blocks[3]
	require.True(t, act.Active)
	require.Equal(t, at("2026-01-10T14:00:00Z"), act.End)
	require.Equal(t, int64(2), act.Calls)
	// 2 calls, 320 tokens and $3 over the 60 minutes from the first to the
	// last call: 5.33 tokens and $0.05 a minute; 180 minutes left.
	require.InDelta(t, 320.0/60, act.BurnRate.TokensPerMinute, 1e-9)
	require.InDelta(t, 3.0, act.BurnRate.CostPerHour, 1e-9)
	require.Equal(t, int64(180), act.Projection.RemainingMinutes)
	require.Equal(t, int64(320+960), act.Projection.TotalTokens)
	require.InDelta(t, 12.0, act.Projection.CostUSD, 1e-9)

	// Later, the same block is over.
	require.False(t, Blocks(calls, 0, at("2026-01-10T14:00:01Z"))[3].Active)
}

func TestParseBy(t *testing.T) {
	for _, ok := range []string{"", "agent", "model", "project", "host", "label:team"} {
		_, err := ParseBy(ok)
		require.NoError(t, err, ok)
	}
	for _, bad := range []string{"format", "label:", "label:bad key", "day"} {
		_, err := ParseBy(bad)
		require.Error(t, err, bad)
	}
	c := call("2026-01-09T10:20:00Z", "m", 1, 0)
	c.Labels = map[string]string{"team": "infra"}
	require.Equal(t, "infra", By("label:team").key(&c))
	require.Equal(t, "claude-code", ByAgent.key(&c))
}
