package trajectory_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/trajectory"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// A run's model.completed, in a trajectory whose transcript is gone,
// counts as one run total.
func ExampleParser_Parse() {
	p := trajectory.New(parse.Config{Path: "/nowhere/s1.trajectory.jsonl"})
	line := jsonl.Line{Number: 1, Bytes: []byte(`{"traceSchema":"openclaw-trajectory","schemaVersion":1,"type":"model.completed","ts":"2026-09-04T10:00:09Z","seq":3,"sessionId":"s1","runId":"r1","modelId":"claude-sonnet-4-5","data":{"usage":{"input":100,"output":200,"cacheRead":600,"cacheWrite":100,"total":1000}}}`)}
	entries, err := p.Parse(nil, line)
	if err != nil {
		panic(err)
	}
	e := entries[0]
	fmt.Println(e.Format, e.SessionID, e.Kind, e.Role, e.Subtype, e.Model, e.Usage.Total())
	// Output: openclaw-trajectory s1 message assistant run_total claude-sonnet-4-5 1000
}
