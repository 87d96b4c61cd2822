package amp_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/amp"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
)

// A thread with a usage ledger: the event is the call, on the reply it
// names, with the reply's cache counters.
func ExampleParse() {
	doc := []byte(`{"id":"T-1","created":1790154000000,"messages":[` +
		`{"role":"user","messageId":0,"content":[{"type":"text","text":"hi"}],"meta":{"sentAt":1790154001000}},` +
		`{"role":"assistant","messageId":1,"content":[{"type":"text","text":"hello"}],"state":{"type":"complete"},` +
		`"usage":{"model":"claude-haiku-4-5","cacheReadInputTokens":900,"timestamp":"2026-09-23T09:00:02Z"}}],` +
		`"usageLedger":{"events":[{"id":"e1","timestamp":"2026-09-23T09:00:02Z","model":"claude-haiku-4-5","tokens":{"input":10,"output":20},"toMessageId":1}]}}`)
	fields, err := parse.Fields(doc)
	if err != nil {
		panic(err)
	}
	entries, errs := amp.Parse(nil, parse.Config{Path: "T-1.json"}, doc, fields)
	for _, e := range entries {
		if e.Usage != nil {
			fmt.Println(e.SessionID, e.EntryID, e.Role, e.Model, e.Usage.Input, e.Usage.Output, e.Usage.CacheRead, e.UsageKey)
		}
	}
	fmt.Println(len(entries), "entries,", len(errs), "errors")
	// Output:
	// T-1 1 assistant claude-haiku-4-5 10 20 900 amp:T-1:ledger:e1
	// 3 entries, 0 errors
}
