package alert_test

import (
	"fmt"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/schema"
)

func Example() {
	rules, err := alert.Parse("rules.yaml", []byte(`
rules:
  - name: big-session
    scope: session
    metric: total_tokens
    above: 1000000
  - name: host-hour
    scope: host
    metric: cost_usd
    above: 20
    window: 1h
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	e, err := alert.New(alert.Config{Rules: rules, Now: func() time.Time { return now }})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range 3 {
		evs := e.Observe(alert.Observation{
			Seq:       uint64(i + 1),
			Time:      now,
			SessionID: "3f2a",
			Host:      "build-01",
			Model:     "claude-opus-4-6",
			Format:    schema.FormatClaudeCode,
			Tokens:    schema.Usage{Input: 1000, Output: 4000, CacheRead: 400_000},
			CostUSD:   8,
		})
		for _, ev := range evs {
			fmt.Println(alert.Subject("sessionpipe", ev.Rule), ev.Text())
		}
	}
	// Output:
	// sessionpipe.alerts.big-session big-session: claude-code session 3f2a total_tokens 1,215,000 > 1,000,000 (host build-01)
	// sessionpipe.alerts.host-hour host-hour: host build-01 cost_usd $24.00 > $20.00 (window 1h) (claude-code session 3f2a)
}

func ExampleParse_invalid() {
	_, err := alert.Parse("rules.yaml", []byte(`rules:
  - name: big-session
    scope: session
    metric: total_tokens
    above: 1000000
    window: 1h
`))
	fmt.Println(err)
	// Output:
	// rules.yaml:6: rule "big-session": alert: invalid window: a session-scope total_tokens is the session's running total; a window means nothing there
}
