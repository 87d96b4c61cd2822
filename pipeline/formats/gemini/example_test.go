package gemini_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/gemini"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// A model message with its tokens: input includes cached, thoughts are
// reasoning, so the disjoint usage is input 4000, cache read 8000,
// output 350 (reasoning 200).
func ExampleParser_Parse() {
	p := gemini.New(parse.Config{Path: "session-2026-09-01T09-00-5b0e8c52.jsonl"})
	var out []string
	for i, l := range []string{
		`{"sessionId":"5b0e8c52","projectHash":"3a7b","startTime":"2026-09-01T09:00:00.000Z","lastUpdated":"2026-09-01T09:00:00.000Z"}`,
		`{"id":"m1","timestamp":"2026-09-01T09:00:05.000Z","type":"gemini","content":"Done.","model":"gemini-2.5-pro","tokens":{"input":12000,"output":150,"cached":8000,"thoughts":200,"tool":0,"total":12350}}`,
	} {
		entries, err := p.Parse(nil, jsonl.Line{Number: int64(i + 1), Bytes: []byte(l)})
		if err != nil {
			panic(err)
		}
		for _, e := range entries {
			if e.Usage != nil {
				out = append(out, fmt.Sprint(e.SessionID, " ", e.Role, " ", e.Model, " ", *e.Usage, " ", e.UsageKey))
			}
		}
	}
	fmt.Println(out[0])
	// Output: 5b0e8c52 assistant gemini-2.5-pro {4000 350 8000 0 0 0 200 } gemini-cli:5b0e8c52:m1
}
