package opencode_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
)

// A message row as OpenCode writes it when its step finished: the
// reasoning is added to the output, the input already excludes the cache,
// the cost is OpenCode's own.
func ExampleParser_Row() {
	p := opencode.New(parse.Config{Path: "/h/.local/share/opencode/opencode.db"})
	e, err := p.Row(&opencode.Row{
		ID: "msg_1", SessionID: "ses_1", TimeCreated: 1767312000000, TimeUpdated: 1767312004000,
		Data: []byte(`{"role":"assistant","time":{"created":1767312000000},"modelID":"gpt-5","providerID":"openai","cost":0.004,"tokens":{"input":900,"output":40,"reasoning":60,"cache":{"read":3000,"write":0}}}`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(e.SessionID, e.Role, e.Model, e.Usage.Input, e.Usage.Output, e.Usage.Reasoning, e.Usage.CacheRead, *e.CostUSD, e.UsageKey)
	// Output:
	// ses_1 assistant gpt-5 900 100 60 3000 0.004 opencode:ses_1:msg_1
}
