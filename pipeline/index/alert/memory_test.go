package alert

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestEvaluator_IdleKeysExpire(t *testing.T) {
	clk := newClock(at(0, 0))
	e := mustEvaluator(t, clk, `
  - {name: big-session, scope: session, metric: total_tokens, above: 1000}
  - {name: project-hour, scope: project, metric: total_tokens, above: 1000, window: 1h}
  - {name: budget, scope: label:team, metric: projected_cost_usd, above: 1000, window: day}
  - {name: unpriced, metric: unpriced_model}
`)
	const n = 20000
	for i := range n {
		clk.Set(at(0, 0).Add(time.Duration(i) * time.Second))
		o := obs(fmt.Sprintf("s%d", i), "h", clk.Now(), tokens(10, 0), 0.01)
		o.Project = fmt.Sprintf("/src/p%d", i)
		o.Labels = map[string]string{"team": fmt.Sprintf("t%d", i%100)}
		o.Model, o.Unpriced = fmt.Sprintf("m%d", i%50), true
		e.Observe(o)
	}
	require.Equal(t, n+n+100+50, e.Stats().Keys)
	require.Equal(t, uint64(50), e.Stats().Fired, "the unpriced models, once each")

	// An hour after the last call the project windows are empty.
	clk.Add(time.Hour + time.Minute)
	e.Advance()
	require.Equal(t, n+100+50, e.Stats().Keys)
	// The next day, the budget periods and their burn windows are empty.
	clk.Set(at(24, 1).Add(time.Hour))
	e.Advance()
	require.Equal(t, n+50, e.Stats().Keys)
	// After IdleTTL the sessions and the unpriced models are forgotten.
	clk.Add(DefaultIdleTTL)
	e.Advance()
	require.Equal(t, 0, e.Stats().Keys)
	require.Equal(t, uint64(2*n+150), e.Stats().Expired)
}

func TestEvaluator_MaxKeys(t *testing.T) {
	clk := newClock(at(0, 0))
	e, err := New(Config{Rules: mustRules(t, "  - {name: big-session, scope: session, metric: total_tokens, above: 1000}\n"),
		Now: clk.Now, MaxKeys: 1000})
	require.NoError(t, err)
	for i := range 10000 {
		clk.Set(at(0, 0).Add(time.Duration(i) * time.Second))
		require.Empty(t, e.Observe(obs(fmt.Sprintf("s%d", i), "h", clk.Now(), tokens(10, 0), 0)))
		require.LessOrEqual(t, e.Stats().Keys, 1000)
	}
	st := e.Stats()
	require.Equal(t, uint64(10000-st.Keys), st.Evicted)
	// The most recent sessions are kept: the last one still adds up.
	evs := e.Observe(obs("s9999", "h", clk.Now(), tokens(991, 0), 0))
	require.Len(t, evs, 1)
	require.Equal(t, 1001.0, evs[0].Value)
}
