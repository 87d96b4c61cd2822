package hermes_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/hermes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// A sessions row is the session's running totals: one entry whose key is
// the session's.
func ExampleParser_Parse() {
	p := hermes.New(parse.Config{Path: "/h/.hermes/state.db"})
	row := `{"id":"20260519_101500_a1b2c3","model":"claude-sonnet-4-20250514","billing_provider":"anthropic","started_at":1750000000.25,"input_tokens":1200,"output_tokens":300,"cache_read_tokens":50,"cache_write_tokens":20,"reasoning_tokens":10,"actual_cost_usd":0.34}`
	entries, err := p.Parse(nil, jsonl.Line{Number: 1, Bytes: []byte(row)})
	if err != nil {
		panic(err)
	}
	e := entries[0]
	fmt.Println(e.Subtype, e.Provider, e.Usage.Input, e.Usage.Output, *e.CostUSD, e.UsageKey)
	// Output:
	// session_total anthropic 1200 300 0.34 hermes:20260519_101500_a1b2c3
}
