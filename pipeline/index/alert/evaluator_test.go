package alert

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

func TestEvaluator_SessionFiresOncePerSession(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, `
  - name: big-session
    scope: session
    metric: total_tokens
    above: 1000
`)
	u := schema.Usage{Input: 100, Output: 200, CacheRead: 150, CacheWrite: 50} // 500
	require.Empty(t, e.Observe(obs("s1", "h1", at(9, 58), u, 0)))
	require.Empty(t, e.Observe(obs("s1", "h1", at(9, 59), u, 0)), "1000 is not above 1000")

	evs := e.Observe(obs("s1", "h1", at(9, 59), schema.Usage{Output: 1}, 0))
	require.Len(t, evs, 1)
	ev := evs[0]
	require.Equal(t, "big-session", ev.Rule)
	require.Equal(t, KindThreshold, ev.Kind)
	require.Equal(t, ScopeSession, ev.Scope)
	require.Equal(t, MetricTotalTokens, ev.Metric)
	require.Equal(t, "claude-code/h1/s1", ev.Key, "a session is keyed by format, host and id")
	require.Equal(t, "s1", ev.SessionID)
	require.Equal(t, "h1", ev.Host)
	require.Equal(t, schema.FormatClaudeCode, ev.Format)
	require.Equal(t, 1001.0, ev.Value)
	require.Equal(t, 1000.0, ev.Threshold)
	require.Equal(t, at(9, 59), ev.Time)
	require.Equal(t, at(10, 0), ev.FiredAt)
	require.Empty(t, ev.Window)
	require.Len(t, ev.ID, 32)
	require.Equal(t, "sessionpipe.alerts.big-session", Subject("sessionpipe", ev.Rule))

	// Never again for s1, whatever it adds, even after a long time, and
	// even when a correction brings it back below.
	require.Empty(t, e.Observe(obs("s1", "h1", at(10, 0), u, 0)))
	clk.Add(48 * time.Hour)
	e.Advance()
	require.Empty(t, e.Observe(obs("s1", "h1", clk.Now(), schema.Usage{Input: -1500}, 0)))
	require.Empty(t, e.Observe(obs("s1", "h1", clk.Now(), u, 0)))

	// Another session has its own total.
	require.Empty(t, e.Observe(obs("s2", "h1", clk.Now(), u, 0)))
	evs = e.Observe(obs("s2", "h1", clk.Now(), u, 0))
	require.Empty(t, evs, "s2 at 1000")
	evs = e.Observe(obs("s2", "h1", clk.Now(), u, 0))
	require.Equal(t, []string{"big-session"}, ruleNames(evs))
	require.Equal(t, "claude-code/h1/s2", evs[0].Key)
	require.Equal(t, uint64(2), e.Stats().Fired)

	// The same id on another host, or of another agent, is another
	// session with its own total: it fires on its own.
	for _, o := range []Observation{obs("s2", "h2", clk.Now(), u, 0), obs("s2", "h1", clk.Now(), u, 0)} {
		if o.Host == "h1" {
			o.Format = schema.FormatCodex
		}
		require.Empty(t, e.Observe(o), "%s/%s: at 500, not the other session's 1,500", o.Format, o.Host)
		require.Empty(t, e.Observe(o))
		evs = e.Observe(o)
		require.Len(t, evs, 1, "%s/%s", o.Format, o.Host)
		require.Equal(t, SessionKey(o.Format, o.Host, "s2"), evs[0].Key)
		require.Equal(t, o.Format, evs[0].Format)
	}
}

// A session key names format, host and id, whatever the host holds.
func TestSessionKey_RoundTrip(t *testing.T) {
	for _, tt := range []struct {
		format     schema.Format
		host, id   string
		wantString string
	}{
		{schema.FormatCodex, "vm", "session-alpha", "codex/vm/session-alpha"},
		{schema.FormatFluux, "a/b", "c", "fluux/a%2Fb/c"},
		{schema.FormatFluux, "a", "b/c", "fluux/a/b/c"},
		{schema.FormatM4dtimes, "50%", "12345", "m4dtimes/50%25/12345"},
		{schema.FormatPi, "", "x", "pi//x"},
	} {
		k := SessionKey(tt.format, tt.host, tt.id)
		require.Equal(t, tt.wantString, k)
		f, h, id, err := ParseSessionKey(k)
		require.NoError(t, err)
		require.Equal(t, []string{string(tt.format), tt.host, tt.id}, []string{string(f), h, id})
	}
	for _, bad := range []string{"", "codex", "codex/vm", "/vm/x", "fluux/a%2/x"} {
		_, _, _, err := ParseSessionKey(bad)
		require.Error(t, err, bad)
	}
}

func TestEvaluator_SessionMetrics(t *testing.T) {
	u := schema.Usage{Input: 10, Output: 20, CacheRead: 300, CacheWrite: 4000}
	tests := []struct {
		metric Metric
		want   float64
	}{
		{MetricTotalTokens, 4330},
		{MetricInputTokens, 10},
		{MetricOutputTokens, 20},
		{MetricCacheReadTokens, 300},
		{MetricCacheWriteTokens, 4000},
		{MetricCostUSD, 0.25},
	}
	for _, tt := range tests {
		t.Run(string(tt.metric), func(t *testing.T) {
			clk := newClock(at(12, 0))
			e := mustEvaluator(t, clk, fmt.Sprintf("  - {name: r, scope: session, metric: %s, above: %v}\n", tt.metric, tt.want*2-tt.want/10))
			require.Empty(t, e.Observe(obs("s", "h", at(12, 0), u, 0.25)))
			evs := e.Observe(obs("s", "h", at(12, 0), u, 0.25))
			require.Len(t, evs, 1, "Observe twice: %s = %v, want above %v", tt.metric, 2*tt.want, tt.want*2-tt.want/10)
			require.InDelta(t, 2*tt.want, evs[0].Value, 1e-9)
		})
	}
}

func TestEvaluator_SessionTokensPerMinute(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, `
  - name: session-burn
    scope: session
    metric: tokens_per_minute
    above: 10000
`) // window: 5m by default
	require.Empty(t, e.Observe(obs("s", "h", at(10, 0), tokens(20000, 0), 0)))
	clk.Add(2 * time.Minute)
	require.Empty(t, e.Observe(obs("s", "h", clk.Now(), tokens(20000, 0), 0)), "40,000 in 5m = 8,000/min")
	clk.Add(2 * time.Minute)
	evs := e.Observe(obs("s", "h", clk.Now(), tokens(20000, 0), 0))
	require.Len(t, evs, 1)
	require.Equal(t, 12000.0, evs[0].Value)
	require.Equal(t, "5m0s", evs[0].Window)

	// Once per session, even after the rate fell and rose again.
	clk.Add(time.Hour)
	e.Advance()
	require.Empty(t, e.Observe(obs("s", "h", clk.Now(), tokens(100000, 0), 0)))
}

func TestEvaluator_SlidingWindowRearms(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, `
  - name: host-hour
    scope: host
    metric: total_tokens
    above: 1000
    window: 1h
`)
	require.Empty(t, e.Observe(obs("s1", "h1", at(10, 0), tokens(600, 0), 0)))
	clk.Set(at(10, 30))
	evs := e.Observe(obs("s2", "h1", at(10, 30), tokens(600, 0), 0))
	require.Len(t, evs, 1)
	require.Equal(t, "h1", evs[0].Key)
	require.Equal(t, "s2", evs[0].SessionID, "the session that pushed it over")
	require.Equal(t, 1200.0, evs[0].Value)
	require.Equal(t, "1h", evs[0].Window)

	// Still above: no second event.
	clk.Set(at(10, 40))
	require.Empty(t, e.Observe(obs("s2", "h1", at(10, 40), tokens(600, 0), 0)))
	// At 11:00 the 10:00 call is still in the window (precision: one
	// minute); at 11:01 it has left: 1200 is still above.
	clk.Set(at(11, 1))
	e.Advance()
	require.Equal(t, uint64(0), e.Stats().Rearmed)
	// At 11:31 the 10:30 call left too: 600 < 1000 re-arms.
	clk.Set(at(11, 31))
	e.Advance()
	require.Equal(t, uint64(1), e.Stats().Rearmed)
	evs = e.Observe(obs("s3", "h1", at(11, 31), tokens(500, 0), 0))
	require.Len(t, evs, 1, "re-armed: fires again")
	require.Equal(t, 1100.0, evs[0].Value)

	// Another host is another key.
	require.Empty(t, e.Observe(obs("s4", "h2", at(11, 31), tokens(900, 0), 0)))
}

func TestEvaluator_RearmObservedWithoutAdvance(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, "  - {name: r, scope: host, metric: output_tokens, above: 100, window: 10m}\n")
	require.Len(t, e.Observe(obs("s", "h", at(10, 0), tokens(0, 150), 0)), 1)
	clk.Set(at(10, 20))
	// The window slid past the first call: this observation sees 50, re-arms,
	// and the next one over fires.
	require.Empty(t, e.Observe(obs("s", "h", at(10, 20), tokens(0, 50), 0)))
	require.Len(t, e.Observe(obs("s", "h", at(10, 20), tokens(0, 60), 0)), 1)
}

func TestEvaluator_Hysteresis(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, "  - {name: r, scope: fleet, metric: cost_usd, above: 10, rearm_below: 5, window: 1h}\n")
	require.Len(t, e.Observe(obs("s", "h", at(10, 0), schema.Usage{}, 11)), 1)
	clk.Set(at(10, 10))
	require.Empty(t, e.Observe(obs("s", "h", at(10, 10), schema.Usage{}, -4)), "correction: 7 is not below 5")
	require.Empty(t, e.Observe(obs("s", "h", at(10, 10), schema.Usage{}, 4)), "11 again: not re-armed, no event")
	require.Empty(t, e.Observe(obs("s", "h", at(10, 10), schema.Usage{}, -7)), "4 < 5: re-armed")
	evs := e.Observe(obs("s", "h", at(10, 10), schema.Usage{}, 7))
	require.Len(t, evs, 1)
	require.Equal(t, FleetKey, evs[0].Key)
}

func TestEvaluator_Scopes(t *testing.T) {
	tests := []struct {
		scope   string
		key     string
		mutate  func(*Observation)
		withKey bool
	}{
		{"host", "build-01", func(o *Observation) { o.Host = "build-01" }, true},
		{"project", "/src/app", func(o *Observation) {}, true},
		{"model", "gpt-5", func(o *Observation) { o.Model = "gpt-5" }, true},
		{"format", "codex", func(o *Observation) { o.Format = schema.FormatCodex }, true},
		{"fleet", "*", func(o *Observation) {}, true},
		{"label:team", "infra", func(o *Observation) { o.Labels = map[string]string{"team": "infra", "env": "ci"} }, true},
		{"label:team", "", func(o *Observation) { o.Labels = map[string]string{"env": "ci"} }, false},
		{"model", "", func(o *Observation) { o.Model = "" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.scope+"="+tt.key, func(t *testing.T) {
			clk := newClock(at(10, 0))
			e := mustEvaluator(t, clk, fmt.Sprintf("  - {name: r, scope: '%s', metric: total_tokens, above: 10, window: 1h}\n", tt.scope))
			o := obs("s", "h", at(10, 0), tokens(11, 0), 0)
			tt.mutate(&o)
			evs := e.Observe(o)
			if !tt.withKey {
				require.Empty(t, evs)
				require.Equal(t, uint64(1), e.Stats().NoKey)
				return
			}
			require.Len(t, evs, 1)
			require.Equal(t, tt.key, evs[0].Key)
			require.Equal(t, Scope(tt.scope), evs[0].Scope)
		})
	}
}

func TestEvaluator_TokensPerMinuteWindowed(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, "  - {name: burn, scope: model, metric: tokens_per_minute, above: 1000, window: 10m}\n")
	for i := range 9 {
		clk.Set(at(10, i))
		require.Empty(t, e.Observe(obs("s", "h", clk.Now(), tokens(1000, 0), 0)), "minute %d", i)
	}
	clk.Set(at(10, 9))
	evs := e.Observe(obs("s", "h", clk.Now(), tokens(1001, 0), 0))
	require.Len(t, evs, 1)
	require.InDelta(t, 1000.1, evs[0].Value, 1e-9)
	// Ten minutes without data: the rate is 0, re-armed and forgotten.
	clk.Set(at(10, 30))
	e.Advance()
	require.Equal(t, Stats{Observations: 10, Fired: 1, Rearmed: 1, Expired: 1}, e.Stats())
}

func TestEvaluator_CalendarDay(t *testing.T) {
	clk := newClock(at(22, 0))
	e := mustEvaluator(t, clk, "  - {name: daily, scope: host, metric: cost_usd, above: 100, window: day}\n")
	require.Empty(t, e.Observe(obs("s", "h", at(1, 0), schema.Usage{}, 60)), "late but in today")
	require.Empty(t, e.Observe(obs("s", "h", day0.Add(-time.Hour), schema.Usage{}, 60)), "yesterday: not today's spend")
	require.Equal(t, uint64(1), e.Stats().Late)
	evs := e.Observe(obs("s", "h", at(22, 0), schema.Usage{}, 50))
	require.Len(t, evs, 1)
	require.Equal(t, 110.0, evs[0].Value)
	require.Equal(t, "day", evs[0].Window)

	// The next day starts from zero: re-armed at midnight, fires again
	// when the new day passes 100.
	clk.Set(at(24, 5))
	e.Advance()
	require.Equal(t, uint64(1), e.Stats().Rearmed)
	require.Equal(t, 0, e.Stats().Keys, "an empty period is forgotten")
	require.Empty(t, e.Observe(obs("s", "h", at(24, 5), schema.Usage{}, 99)))
	require.Len(t, e.Observe(obs("s", "h", at(24, 5), schema.Usage{}, 2)), 1)
}

func TestEvaluator_CalendarTimezoneWeekMonth(t *testing.T) {
	// 23:30 UTC on Monday 23 November is 18:30 in New York: still Monday
	// there; 05:30 UTC on Tuesday is 00:30 Tuesday there.
	clk := newClock(at(23, 30))
	e := mustEvaluator(t, clk, `
  - {name: ny-day, scope: fleet, metric: cost_usd, above: 10, window: day, timezone: America/New_York}
  - {name: week, scope: fleet, metric: cost_usd, above: 10, window: week}
  - {name: month, scope: fleet, metric: cost_usd, above: 10, window: month}
`)
	require.Empty(t, e.Observe(obs("s", "h", at(23, 30), schema.Usage{}, 6)))
	clk.Set(at(24+5, 30))
	evs := e.Observe(obs("s", "h", at(24+5, 30), schema.Usage{}, 6))
	require.Equal(t, []string{"week", "month"}, ruleNames(evs), "New York's Tuesday started at 05:00 UTC")

	// Next Monday: a new week, the same month.
	clk.Set(at(7*24+1, 0))
	e.Advance()
	evs = e.Observe(obs("s", "h", clk.Now(), schema.Usage{}, 11))
	require.Equal(t, []string{"ny-day", "week"}, ruleNames(evs))
	// 1 December: a new month.
	clk.Set(time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC))
	e.Advance()
	evs = e.Observe(obs("s", "h", clk.Now(), schema.Usage{}, 11))
	require.Equal(t, []string{"ny-day", "month"}, ruleNames(evs))
}

// TestEvaluator_ProjectedWorkedExample is the worked example of the
// package documentation.
func TestEvaluator_ProjectedWorkedExample(t *testing.T) {
	clk := newClock(at(0, 0))
	e := mustEvaluator(t, clk, `
  - name: daily-budget
    scope: fleet
    metric: projected_cost_usd
    above: 200
    window: day
`)
	// A $1 call every 15 minutes from midnight: $4/h, projected at about
	// $97 all morning.
	call := func(ts time.Time, cost float64) []Event {
		clk.Set(ts)
		return e.Observe(obs("s", "h", ts, schema.Usage{}, cost))
	}
	for m := 0; m < 12*60; m += 15 {
		require.Empty(t, call(at(0, m), 1), "%v", at(0, m))
	}
	// From noon a $4 call every 15 minutes. 12:00: spent $52, $7 in the
	// last hour: 52 + 7 × 12 = 136. 12:15: 56 + 10 × 11.75 = 173.50.
	require.Empty(t, call(at(12, 0), 4))
	require.Empty(t, call(at(12, 15), 4))
	// 12:30: spent $60, $13 in the last hour (the 11:30 call has left it):
	// 60 + 13 × 11.5 = 209.50 > 200.
	evs := call(at(12, 30), 4)
	require.Len(t, evs, 1)
	ev := evs[0]
	require.InDelta(t, 209.5, ev.Value, 1e-9)
	require.InDelta(t, 60, *ev.SpentUSD, 1e-9)
	require.InDelta(t, 13, *ev.BurnUSDPerHour, 1e-9)
	require.Equal(t, day0, *ev.PeriodStart)
	require.Equal(t, day0.Add(24*time.Hour), *ev.PeriodEnd)
	require.Equal(t, "daily-budget: fleet projected_cost_usd $209.50 > $200.00 (window day): spent $60.00, burning $13.00/h until 2026-11-24T00:00:00Z (host h, claude-code session s)", ev.Text())
	require.Empty(t, call(at(12, 45), 4), "fired: once until re-armed")

	// Then nothing: at 13:46 the last hour is empty and the projection is
	// the $64 spent: re-armed.
	clk.Set(at(13, 46))
	e.Advance()
	require.Equal(t, uint64(1), e.Stats().Rearmed)
	// A new burst fires again: 64 + 40 + 40 × 10.2 = 512.
	require.Len(t, call(at(13, 48), 40), 1)
}

func TestEvaluator_ProjectedDurationPeriod(t *testing.T) {
	clk := newClock(at(6, 15))
	e := mustEvaluator(t, clk, "  - {name: six-hours, scope: host, metric: projected_cost_usd, above: 50, window: 6h, rate_window: 30m}\n")
	// The period is 06:00-12:00; $10 in the last 30 minutes is $20/h:
	// 10 + 20 × 5.75 = 125.
	evs := e.Observe(obs("s", "h", at(6, 15), schema.Usage{}, 10))
	require.Len(t, evs, 1)
	require.InDelta(t, 125, evs[0].Value, 1e-9)
	require.Equal(t, at(12, 0), *evs[0].PeriodEnd)
}

func TestEvaluator_UnpricedModel(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, "  - {name: unpriced, metric: unpriced_model}\n")
	o := obs("s", "h", at(10, 0), tokens(10, 10), 0)
	require.Empty(t, e.Observe(o), "priced")
	o.Unpriced, o.Model = true, "mystery-1"
	evs := e.Observe(o)
	require.Len(t, evs, 1)
	require.Equal(t, KindUnpriced, evs[0].Kind)
	require.Equal(t, "mystery-1", evs[0].Key)
	require.Equal(t, "unpriced: model mystery-1 has no price: its calls are counted as unpriced, not in cost_usd (host h, claude-code session s)", evs[0].Text())
	require.Empty(t, e.Observe(o), "once per model")
	o.Model = "mystery-2"
	require.Len(t, e.Observe(o), 1)

	// Idle for IdleTTL: forgotten, and fires again as a reminder.
	clk.Add(DefaultIdleTTL + time.Minute)
	e.Advance()
	require.Equal(t, 0, e.Stats().Keys)
	o.Time = clk.Now()
	require.Len(t, e.Observe(o), 1)
}

func TestEvaluator_ReplayedObservationsSkipped(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, "  - {name: r, scope: session, metric: total_tokens, above: 100}\n")
	batch := []Observation{
		obs("a", "h", at(10, 0), tokens(60, 0), 0),
		obs("a", "h", at(10, 0), tokens(-60, 0), 0), // the call moves to b
		obs("b", "h", at(10, 0), tokens(60, 0), 0),
	}
	batch[0].Seq = 7
	batch[1].Seq, batch[1].Part = 8, 0
	batch[2].Seq, batch[2].Part = 8, 1
	for _, o := range batch {
		require.Empty(t, e.Observe(o))
	}
	for _, o := range batch { // the last batch again, after a crash
		require.Empty(t, e.Observe(o))
	}
	require.Equal(t, uint64(3), e.Stats().Replayed)
	seq, part := e.Applied()
	require.Equal(t, uint64(8), seq)
	require.Equal(t, 1, part)
	next := obs("b", "h", at(10, 0), tokens(41, 0), 0)
	next.Seq = 9
	evs := e.Observe(next)
	require.Len(t, evs, 1)
	require.Equal(t, 101.0, evs[0].Value, "b holds 60+41; a's replay was not counted twice")
}

func TestEvaluator_LateAndFutureTimestamps(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, "  - {name: r, scope: host, metric: total_tokens, above: 100, window: 1h}\n")
	require.Empty(t, e.Observe(obs("s", "h", at(9, 30), tokens(60, 0), 0)))
	require.Empty(t, e.Observe(obs("s", "h", at(8, 0), tokens(500, 0), 0)), "before the key's window (9:30 back 1h)")
	require.Equal(t, uint64(1), e.Stats().Late)
	evs := e.Observe(obs("s", "h", at(12, 0), tokens(41, 0), 0))
	require.Len(t, evs, 1, "from the future: counted at the clock's now")
	require.Equal(t, at(10, 0), evs[0].Time)
	clk.Set(at(10, 31))
	e.Advance()
	require.Equal(t, uint64(1), e.Stats().Rearmed, "the 9:30 call left the window at 10:31")
}

// TestEvaluator_CatchUpAfterOutage: observations place and move windows
// by their own timestamps, so a burst that happened while the indexer was
// down fires when the backlog is applied, as it would have live.
func TestEvaluator_CatchUpAfterOutage(t *testing.T) {
	const rules = "  - {name: r, scope: host, metric: total_tokens, above: 100, window: 10m}\n"
	clk := newClock(at(9, 0))
	live := mustEvaluator(t, clk, rules)
	backlog := []Observation{
		obs("s", "h", at(9, 0), tokens(60, 0), 0),
		obs("s", "h", at(9, 30), tokens(60, 0), 0), // 9:00 has left the window
		obs("s", "h", at(9, 35), tokens(60, 0), 0), // 120 in 9:26-9:35
	}
	var want []Event
	for _, o := range backlog {
		clk.Set(o.Time)
		want = append(want, live.Observe(o)...)
	}
	require.Len(t, want, 1)

	clk.Set(at(12, 0)) // three hours later
	late := mustEvaluator(t, clk, rules)
	var got []Event
	for _, o := range backlog {
		got = append(got, late.Observe(o)...)
	}
	require.Len(t, got, 1)
	require.Equal(t, want[0].ID, got[0].ID)
	require.Equal(t, want[0].Value, got[0].Value)
	require.Equal(t, at(9, 35), got[0].Time)
	require.Equal(t, at(12, 0), got[0].FiredAt)
	// Caught up: Advance slides the window to the clock.
	late.Advance()
	require.Equal(t, Stats{Observations: 3, Fired: 1, Rearmed: 1, Expired: 1}, late.Stats())
}

func TestEvaluator_MaxLagSuppresses(t *testing.T) {
	clk := newClock(at(10, 0))
	e, err := New(Config{Rules: mustRules(t, "  - {name: r, scope: session, metric: total_tokens, above: 100}\n"),
		Now: clk.Now, MaxLag: time.Hour})
	require.NoError(t, err)
	require.Empty(t, e.Observe(obs("old", "h", at(8, 0), tokens(500, 0), 0)))
	require.Equal(t, uint64(1), e.Stats().Suppressed)
	require.Empty(t, e.Observe(obs("old", "h", at(10, 0), tokens(500, 0), 0)), "fired, though kept back")
	require.Len(t, e.Observe(obs("new", "h", at(9, 30), tokens(500, 0), 0)), 1)

	// With OnSuppressed, the firing kept back is handed over with its
	// reason; it is still not returned.
	var kept []Event
	e, err = New(Config{Rules: mustRules(t, "  - {name: r, scope: session, metric: total_tokens, above: 100}\n"),
		Now: clk.Now, MaxLag: time.Hour, OnSuppressed: func(ev Event) { kept = append(kept, ev) }})
	require.NoError(t, err)
	require.Empty(t, e.Observe(obs("old", "h", at(8, 0), tokens(500, 0), 0)))
	require.Len(t, kept, 1)
	require.Equal(t, "r", kept[0].Rule)
	require.Equal(t, "caused by an entry of "+at(8, 0).UTC().Format(time.RFC3339)+", 2h0m0s before the clock: older than the max lag 1h0m0s (history, not sent)", kept[0].Suppressed)
	require.Equal(t, Stats{Observations: 1, Suppressed: 1, Keys: 1}, e.Stats())
}

func TestEvaluator_InvalidConfig(t *testing.T) {
	_, err := New(Config{Rules: []Rule{{Name: "a b", Scope: ScopeFleet, Metric: MetricCostUSD, Above: 1}}})
	require.ErrorIs(t, err, ErrInvalidName)
	_, err = New(Config{Rules: []Rule{{Name: "a", Scope: ScopeSession, Metric: MetricCostUSD}, {Name: "a", Scope: ScopeSession, Metric: MetricCostUSD}}})
	require.ErrorIs(t, err, ErrDuplicateName)
	_, err = New(Config{MaxKeys: -1})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "max_keys", ce.Field)
	require.ErrorIs(t, err, ErrInvalidConfig)
}

func TestEvaluator_NaNIgnored(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, "  - {name: r, scope: fleet, metric: cost_usd, above: 1, window: 1h}\n")
	var nan float64
	nan = nan / nan
	require.Empty(t, e.Observe(obs("s", "h", at(10, 0), schema.Usage{}, nan)))
	require.Equal(t, uint64(1), e.Stats().Invalid)
	require.Len(t, e.Observe(obs("s", "h", at(10, 0), schema.Usage{}, 2)), 1)
	_, err := e.Snapshot()
	require.NoError(t, err)
}

func TestEvent_JSON(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, "  - {name: big-session, description: past a million, scope: session, metric: total_tokens, above: 1000000}\n")
	o := obs("s1", "build-01", at(9, 59), tokens(1_204_332, 0), 0)
	o.Seq = 42
	evs := e.Observe(o)
	require.Len(t, evs, 1)
	data, err := json.Marshal(evs[0])
	require.NoError(t, err)
	require.JSONEq(t, `{"id":"`+evs[0].ID+`","rule":"big-session","description":"past a million","kind":"threshold",
		"scope":"session","metric":"total_tokens","key":"claude-code/build-01/s1","value":1204332,"threshold":1000000,
		"time":"2026-11-23T09:59:00Z","fired_at":"2026-11-23T10:00:00Z","host":"build-01","format":"claude-code","session_id":"s1",
		"model":"claude-opus-4-6","seq":42}`, string(data))
	require.Equal(t, "big-session: claude-code session s1 total_tokens 1,204,332 > 1,000,000 (host build-01): past a million", evs[0].Text())
	require.Equal(t, eventID("big-session", "claude-code/build-01/s1", 42, 0, at(9, 59)), evs[0].ID, "the id depends on the observation only")

	body, err := evs[0].WebhookBody()
	require.NoError(t, err)
	require.JSONEq(t, `{"text":":rotating_light: big-session: claude-code session s1 total_tokens 1,204,332 > 1,000,000 (host build-01): past a million",
		"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*big-session*: claude-code session s1 total_tokens 1,204,332 > 1,000,000 (host build-01): past a million"}},
		{"type":"context","elements":[{"type":"mrkdwn","text":"rule `+"`big-session`"+` · scope session · 2026-11-23T09:59:00Z · id `+evs[0].ID+`"}]}]}`, string(body))
}
