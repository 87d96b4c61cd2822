package alert

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

const restartRules = `
  - {name: big-session, scope: session, metric: total_tokens, above: 1000}
  - {name: host-hour, scope: host, metric: total_tokens, above: 1000, window: 1h}
  - {name: daily, scope: fleet, metric: cost_usd, above: 10, window: day}
  - {name: budget, scope: fleet, metric: projected_cost_usd, above: 500, window: day}
  - {name: unpriced, metric: unpriced_model}
`

// TestEvaluator_RestartNoRefireNoneLost runs one stream of observations
// through an evaluator that never stops and through one that is
// snapshotted, dropped and restored at every point of the stream, the last
// batch replayed each time: both give the same events, once each.
func TestEvaluator_RestartNoRefireNoneLost(t *testing.T) {
	var stream []Observation
	for i := range 40 {
		o := obs([]string{"s1", "s2", "s3"}[i%3], []string{"h1", "h2", "h1"}[i%3], at(10, i), tokens(90, 10), 0.7)
		o.Seq = uint64(i + 1)
		if i%7 == 3 {
			o.Unpriced, o.Model = true, "mystery"
		}
		stream = append(stream, o)
	}
	clkA := newClock(at(10, 0))
	straight := mustEvaluator(t, clkA, restartRules)
	var want []string
	for _, o := range stream {
		clkA.Set(o.Time)
		for _, ev := range straight.Observe(o) {
			want = append(want, ev.ID)
		}
	}
	require.Len(t, want, 7, "3 sessions, 2 hosts, the day, the budget, one unpriced model")

	for cut := 1; cut < len(stream); cut++ {
		clk := newClock(at(10, 0))
		e := mustEvaluator(t, clk, restartRules)
		var got []string
		for _, o := range stream[:cut] {
			clk.Set(o.Time)
			for _, ev := range e.Observe(o) {
				got = append(got, ev.ID)
			}
		}
		snap, err := e.Snapshot()
		require.NoError(t, err)

		restarted := mustEvaluator(t, clk, restartRules)
		evs, err := restarted.Restore(snap)
		require.NoError(t, err)
		require.Empty(t, evs)
		// The indexer resumes after the snapshot; replay the last batch
		// (up to 3 observations) anyway.
		for _, o := range stream[max(0, cut-3):] {
			clk.Set(o.Time)
			for _, ev := range restarted.Observe(o) {
				got = append(got, ev.ID)
			}
		}
		require.Equal(t, want, got, "restart after %d observations", cut)
		again, err := restarted.Snapshot()
		require.NoError(t, err)
		final, err := straight.Snapshot()
		require.NoError(t, err)
		require.JSONEq(t, string(final), string(again), "restart after %d observations: same final state", cut)
	}
}

func TestEvaluator_RestoreKeepsWindows(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, restartRules)
	require.Empty(t, e.Observe(obs("s1", "h1", at(10, 0), tokens(600, 0), 0)))
	clk.Set(at(10, 30))
	require.Empty(t, e.Observe(obs("s2", "h1", at(10, 30), tokens(300, 0), 0)))
	snap, err := e.Snapshot()
	require.NoError(t, err)

	// Restored later: the 10:00 call is still in the window at 10:45,
	// gone at 11:01.
	clk.Set(at(10, 45))
	r := mustEvaluator(t, clk, restartRules)
	_, err = r.Restore(snap)
	require.NoError(t, err)
	require.Equal(t, []string{"host-hour"}, ruleNames(r.Observe(obs("s3", "h1", at(10, 45), tokens(101, 0), 0))))

	clk.Set(at(11, 1))
	r = mustEvaluator(t, clk, restartRules)
	_, err = r.Restore(snap)
	require.NoError(t, err)
	require.Empty(t, r.Observe(obs("s3", "h1", at(11, 1), tokens(101, 0), 0)), "300+101")
}

func TestEvaluator_RestoreChangedRules(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, restartRules)
	require.Len(t, e.Observe(obs("s1", "h1", at(10, 0), tokens(1500, 0), 0)), 2)
	require.Empty(t, e.Observe(obs("s2", "h2", at(10, 0), tokens(800, 0), 0)))
	snap, err := e.Snapshot()
	require.NoError(t, err)

	// While it was down the file changed: big-session's threshold fell
	// below s2's total, host-hour became a 2h window (a new shape: it
	// starts empty), daily was removed.
	r := mustEvaluator(t, clk, `
  - {name: big-session, scope: session, metric: total_tokens, above: 700}
  - {name: host-hour, scope: host, metric: total_tokens, above: 1000, window: 2h}
`)
	evs, err := r.Restore(snap)
	require.NoError(t, err)
	require.Len(t, evs, 1, "s2 is above the new threshold; s1 fired before")
	require.Equal(t, "claude-code/h2/s2", evs[0].Key)
	require.Equal(t, "s2", evs[0].SessionID, "a session key read back names the session")
	require.Equal(t, "h2", evs[0].Host)
	require.Equal(t, 800.0, evs[0].Value)
	require.Equal(t, 1, len(r.rules[0].keys)+len(r.rules[1].keys)-1, "host-hour starts empty")
	require.Empty(t, r.rules[1].keys)
}

func TestEvaluator_RestoreErrors(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, restartRules)
	require.Len(t, e.Observe(obs("s1", "h1", at(10, 0), tokens(1500, 0), 0)), 2)
	before, err := e.Snapshot()
	require.NoError(t, err)

	_, err = e.Restore([]byte(`{"version":2,"rules":[]}`))
	require.ErrorIs(t, err, ErrSnapshotVersion)
	_, err = e.Restore([]byte(`{"version":1,"rules":[{"name":"x","keys":[{"k":"a","off":[70],"val":[1]}]}]}`))
	require.ErrorIs(t, err, ErrSnapshot)
	_, err = e.Restore([]byte(`not json`))
	require.ErrorIs(t, err, ErrSnapshot)

	after, err := e.Snapshot()
	require.NoError(t, err)
	require.Equal(t, before, after, "a failed restore leaves the state as it was")
}

func TestSnapshot_Encoding(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, "  - {name: r, scope: host, metric: total_tokens, above: 1000, window: 1h}\n")
	o := obs("s1", "h1", at(9, 58), tokens(600, 0), 0)
	o.Seq = 5
	e.Observe(o)
	o.Time, o.Seq, o.Tokens = at(10, 0), 6, tokens(500, 0)
	require.Len(t, e.Observe(o), 1)
	data, err := e.Snapshot()
	require.NoError(t, err)
	head := at(10, 0).UnixNano() / int64(time.Minute)
	var got map[string]any
	require.NoError(t, json.Unmarshal(data, &got))
	want := map[string]any{
		"version": 1.0, "seq": 6.0, "part": 0.0,
		"rules": []any{map[string]any{
			"name": "r", "shape": "host|total_tokens|/3600000000000|0|", "above": 1000.0, "rearm_below": 1000.0,
			"keys": []any{map[string]any{
				"k": "h1", "fired": true, "seen": float64(at(10, 0).UnixNano()), "at": float64(at(10, 0).UnixNano()), "head": float64(head),
				"off": []any{0.0, 2.0}, "val": []any{500.0, 600.0},
			}},
		}},
	}
	require.Equal(t, want, got)
}

func TestEvaluator_Reload(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, `
  - {name: big-session, scope: session, metric: total_tokens, above: 1000}
  - {name: host-hour, scope: host, metric: total_tokens, above: 1000, window: 1h}
  - {name: gone, scope: fleet, metric: cost_usd, above: 100, window: 1h}
`)
	require.Len(t, e.Observe(obs("s1", "h1", at(10, 0), tokens(1200, 0), 5)), 2)
	require.Empty(t, e.Observe(obs("s2", "h2", at(10, 0), tokens(700, 0), 5)))

	evs, err := e.Reload(mustRules(t, `
  - {name: big-session, scope: session, metric: total_tokens, above: 600}
  - {name: host-hour, scope: host, metric: total_tokens, above: 1500, window: 1h}
  - {name: gone, scope: fleet, metric: cost_usd, above: 100, window: 2h}
  - {name: added, scope: session, metric: cost_usd, above: 1}
`))
	require.NoError(t, err)
	// big-session kept its state: s1 fired already, s2 (700) is now above.
	require.Equal(t, []string{"big-session"}, ruleNames(evs))
	require.Equal(t, "claude-code/h2/s2", evs[0].Key)
	require.Equal(t, "s2", evs[0].SessionID, "a session key read back names the session")
	require.Equal(t, "h2", evs[0].Host)
	require.Equal(t, at(10, 0), evs[0].Time)
	// host-hour: h1 (1200) is below 1500: re-armed, fires again past 1500.
	require.Equal(t, uint64(1), e.Stats().Rearmed)
	evs = e.Observe(obs("s3", "h1", at(10, 0), tokens(400, 0), 0))
	require.Equal(t, []string{"host-hour"}, ruleNames(evs))
	// gone changed shape: empty. added is new: s1's earlier cost is not
	// in it.
	require.Empty(t, e.Observe(obs("s1", "h9", at(10, 0), schema.Usage{}, 0.5)))
	require.Equal(t, []string{"added"}, ruleNames(e.Observe(obs("s1", "h9", at(10, 0), schema.Usage{}, 0.6))))

	// Removing a rule drops its state; adding it back starts empty.
	_, err = e.Reload(mustRules(t, "  - {name: big-session, scope: session, metric: total_tokens, above: 600}\n"))
	require.NoError(t, err)
	require.Equal(t, 3, e.Stats().Keys) // s1, s2, s3 of big-session
	_, err = e.Reload(mustRules(t, "  - {name: big-session, scope: session, metric: total_tokens, above: 600}\n  - {name: host-hour, scope: host, metric: total_tokens, above: 1000, window: 1h}\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"big-session", "host-hour"}, ruleNames(e.Observe(obs("s4", "h1", at(10, 0), tokens(1001, 0), 0))), "host-hour fires for h1 again: it starts empty")
}

func TestEvaluator_ReloadFileInvalidKeepsRules(t *testing.T) {
	clk := newClock(at(10, 0))
	e := mustEvaluator(t, clk, "  - {name: big-session, scope: session, metric: total_tokens, above: 1000}\n")
	require.Len(t, e.Observe(obs("s1", "h1", at(10, 0), tokens(1200, 0), 0)), 1)

	path := t.TempDir() + "/rules.yaml"
	require.NoError(t, writeFile(path, "rules:\n  - name: big-session\n    scope: session\n    metric: total_tokens\n    above: -1\n"))
	evs, err := e.ReloadFile(path)
	require.Nil(t, evs)
	require.ErrorIs(t, err, ErrInvalidValue)
	require.Equal(t, path+`:5: rule "big-session": alert: invalid value: above -1: want a number >= 0`, err.Error())
	require.Len(t, e.Rules(), 1)
	require.Equal(t, 1000.0, e.Rules()[0].Above)
	require.Empty(t, e.Observe(obs("s1", "h1", at(10, 0), tokens(1200, 0), 0)), "state kept: no refire")

	require.NoError(t, writeFile(path, "rules:\n  - {name: big-session, scope: session, metric: total_tokens, above: 2000}\n"))
	evs, err = e.ReloadFile(path)
	require.NoError(t, err)
	require.Empty(t, evs)
	require.Equal(t, 2000.0, e.Rules()[0].Above)
}

// A snapshot that is not JSON is an ErrSnapshot that keeps the decoder's
// error as its cause.
func TestEvaluator_RestoreKeepsCause(t *testing.T) {
	e := mustEvaluator(t, newClock(at(10, 0)), restartRules)
	_, err := e.Restore([]byte("{"))
	require.ErrorIs(t, err, ErrSnapshot)
	var se *json.SyntaxError
	require.ErrorAs(t, err, &se, "the cause is kept: %v", err)
}
