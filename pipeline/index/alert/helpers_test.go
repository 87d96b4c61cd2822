package alert

import (
	"os"
	"testing"
	"time"
	_ "time/tzdata" // the time zone tests do not depend on the system's zoneinfo

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

// testClock is a clock the test moves by hand.
type testClock struct{ t time.Time }

func (c *testClock) Now() time.Time      { return c.t }
func (c *testClock) Add(d time.Duration) { c.t = c.t.Add(d) }
func (c *testClock) Set(t time.Time)     { c.t = t }
func newClock(t time.Time) *testClock    { return &testClock{t: t} }
func at(h, m int) time.Time {
	return day0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}
func tokens(in, out int64) schema.Usage { return schema.Usage{Input: in, Output: out} }
func mustRules(tb testing.TB, src string) []Rule {
	tb.Helper()
	rules, err := Parse("rules.yaml", []byte("rules:\n"+src))
	require.NoError(tb, err)
	return rules
}

// day0 is a Monday, midnight UTC.
var day0 = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

// mustEvaluator returns an evaluator of the rules in src (the list items
// of a rules file) on clk.
func mustEvaluator(tb testing.TB, clk *testClock, src string) *Evaluator {
	tb.Helper()
	e, err := New(Config{Rules: mustRules(tb, src), Now: clk.Now})
	require.NoError(tb, err)
	return e
}

// obs is an observation of one API call in session sid on host h.
func obs(sid, host string, ts time.Time, u schema.Usage, cost float64) Observation {
	return Observation{Time: ts, SessionID: sid, Host: host, Project: "/src/app", Model: "claude-opus-4-6",
		Format: schema.FormatClaudeCode, Tokens: u, CostUSD: cost}
}

// ruleNames returns the rule of each event.
func ruleNames(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Rule)
	}
	return out
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }
