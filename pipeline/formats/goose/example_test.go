package goose_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/goose"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
)

// A session row: its accumulated counters are the session's usage; what
// the total holds beyond input and output is reasoning, counted as output.
func ExampleParser_Row() {
	in, out, total := int64(100), int64(50), int64(180)
	p := goose.New(parse.Config{Path: "/h/.local/share/goose/sessions/sessions.db"})
	e, ok, err := p.Row(&goose.Row{ID: "20260501_1", CreatedAt: "2026-05-01 01:02:03",
		ModelConfig: `{"model_name":"claude-sonnet-4-20250514"}`, AccInput: &in, AccOutput: &out, AccTotal: &total})
	if err != nil || !ok {
		panic(err)
	}
	fmt.Println(e.SessionID, e.Subtype, e.Model, e.Usage.Input, e.Usage.Output, e.Usage.Reasoning, e.UsageKey, e.TS)
	// Output:
	// 20260501_1 session_total claude-sonnet-4-20250514 100 80 30 goose:20260501_1 2026-05-01 01:02:03 +0000 UTC
}
