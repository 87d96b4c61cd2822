package grok_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/grok"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// A completed turn counts per model, input without the cache reads it
// includes, with Grok's own cost (10^10 ticks to the dollar).
func ExampleParser_Parse() {
	p := grok.New(parse.Config{Path: "/h/.grok/sessions/%2Fhome%2Fu%2Fproj/0199-s1/updates.jsonl"})
	line := `{"timestamp":1785000010,"method":"_x.ai/session_notification","params":{"sessionId":"0199-s1","_meta":{"eventId":"0199-s1-9"},"update":{"sessionUpdate":"turn_completed","prompt_id":"p1","usage":{"inputTokens":21000,"outputTokens":900,"cachedReadTokens":16000,"costUsdTicks":98000000,"modelUsage":{"grok-4.5-build":{"inputTokens":21000,"outputTokens":900,"cachedReadTokens":16000,"costUsdTicks":98000000}}}}}}`
	entries, err := p.Parse(nil, jsonl.Line{Number: 1, Bytes: []byte(line)})
	if err != nil {
		panic(err)
	}
	e := entries[0]
	fmt.Println(e.SessionID, e.CWD, e.Subtype, e.Model, e.Usage.Input, e.Usage.CacheRead, e.Usage.Output, *e.CostUSD)
	fmt.Println(e.UsageKey)
	// Output:
	// 0199-s1 /home/u/proj turn_total grok-4.5-build 5000 16000 900 0.0098
	// grok-build:0199-s1:0199-s1-9:grok-4.5-build
}
