package copilot_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/copilot"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// A resumed session's second shutdown counts only what its cumulative
// counters added since the first.
func ExampleParser_Parse() {
	p := copilot.New(parse.Config{Path: "/h/.copilot/session-state/s1/events.jsonl"})
	lines := []string{
		`{"type":"session.shutdown","data":{"modelMetrics":{"gpt-5.4":{"usage":{"inputTokens":1000,"outputTokens":50,"cacheReadTokens":400}}}},"id":"a","timestamp":"2026-11-01T10:00:00Z","parentId":null}`,
		`{"type":"session.shutdown","data":{"modelMetrics":{"gpt-5.4":{"usage":{"inputTokens":3000,"outputTokens":80,"cacheReadTokens":1400}}}},"id":"b","timestamp":"2026-11-02T10:00:00Z","parentId":"a"}`,
	}
	for i, l := range lines {
		entries, err := p.Parse(nil, jsonl.Line{Number: int64(i + 1), Bytes: []byte(l)})
		if err != nil {
			panic(err)
		}
		e := entries[0]
		fmt.Println(e.SessionID, e.Subtype, e.Model, e.Usage.Input, e.Usage.CacheRead, e.Usage.Output, e.UsageKey)
	}
	// Output:
	// s1 leg_total gpt-5.4 600 400 50 copilot:s1:a:gpt-5.4
	// s1 leg_total gpt-5.4 1000 1000 30 copilot:s1:b:gpt-5.4
}
