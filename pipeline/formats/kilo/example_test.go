package kilo_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/kilo"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// A message row as the SQLite source gives it: output counts the
// reasoning OpenCode keeps apart; the recorded cost is used.
func ExampleParser_Parse() {
	p := kilo.New(parse.Config{Path: "/h/.local/share/kilo/kilo.db"})
	row := `{"id":"msg_1","session_id":"ses_a","data":{"id":"msg_1","sessionID":"ses_a","role":"assistant","time":{"created":1767312000000},"modelID":"claude-sonnet-4-5","providerID":"anthropic","cost":0.02,"tokens":{"input":100,"output":50,"reasoning":5,"cache":{"read":10,"write":20}}}}`
	entries, err := p.Parse(nil, jsonl.Line{Number: 1, Bytes: []byte(row)})
	if err != nil {
		panic(err)
	}
	e := entries[0]
	fmt.Println(e.SessionID, e.Model, e.Usage.Input, e.Usage.Output, e.Usage.CacheRead, e.Usage.CacheWrite, *e.CostUSD, e.UsageKey)
	// Output:
	// ses_a claude-sonnet-4-5 100 55 10 20 0.02 kilo:ses_a:msg_1
}
