package kimi_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/kimi"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// A step's StatusUpdate is its call; the session is the directory the
// wire log is in.
func ExampleParser_Parse() {
	p := kimi.New(parse.Config{Path: "/h/.kimi/sessions/3f2a/sess-1/wire.jsonl"})
	line := `{"timestamp": 1778317201.7, "message": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": 2100, "output": 150, "input_cache_read": 9000, "input_cache_creation": 0}, "message_id": "chatcmpl-k1"}}}`
	entries, err := p.Parse(nil, jsonl.Line{Number: 2, Bytes: []byte(line)})
	if err != nil {
		panic(err)
	}
	e := entries[0]
	fmt.Println(e.SessionID, e.Role, e.Model, e.Usage.Input, e.Usage.CacheRead, e.Usage.Output, e.UsageKey)
	// Output:
	// sess-1 assistant kimi-for-coding 2100 9000 150 kimi-cli:chatcmpl-k1:2100:150:9000:0
}
