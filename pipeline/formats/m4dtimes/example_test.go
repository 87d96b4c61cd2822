package m4dtimes_test

import (
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/m4dtimes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

func Example() {
	lines := []string{
		`{"type":"session","version":1,"id":"a1b2c3d4","timestamp":"2026-02-24T23:14:59Z","userId":7756297856}`,
		`{"type":"message","id":"e5f6a7b8","parentId":"a1b2c3d4","timestamp":"2026-02-24T23:15:01Z","message":{"role":"user","content":[{"type":"text","text":"Cosa ho oggi?"}]}}`,
		`{"type":"message","id":"f0e1d2c3","parentId":"e5f6a7b8","timestamp":"2026-02-24T23:15:03Z","message":{"role":"assistant","content":[{"type":"tool_use","tool_call":{"id":"toolu_01","name":"execute_sql","arguments":{"query":"SELECT 1"}}}],"usage":{"input_tokens":3264,"output_tokens":110}}}`,
		`{"type":"message","id":"b4a5c6d7","parentId":"f0e1d2c3","timestamp":"2026-02-24T23:15:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_result":{"tool_call_id":"toolu_01","content":"1","is_error":false}}]}}`,
	}
	p := m4dtimes.New(parse.Config{Path: "sessions/7756297856.jsonl"})
	for i, l := range lines {
		entries, err := p.Parse(nil, jsonl.Line{Bytes: []byte(l), Number: int64(i + 1)})
		if err != nil {
			fmt.Println(err)
			continue
		}
		for _, e := range entries {
			fmt.Printf("%s %s kind=%s role=%s text=%q tools=%d results=%d usage_key=%q\n",
				e.SessionID, e.EntryID, e.Kind, e.Role, e.Text, len(e.ToolCalls), len(e.ToolResults), e.UsageKey)
		}
	}
	// Output:
	// a1b2c3d4 a1b2c3d4 kind=session role= text="" tools=0 results=0 usage_key=""
	// a1b2c3d4 e5f6a7b8 kind=message role=user text="Cosa ho oggi?" tools=0 results=0 usage_key=""
	// a1b2c3d4 f0e1d2c3 kind=message role=assistant text="" tools=1 results=0 usage_key="m4dtimes:a1b2c3d4:f0e1d2c3"
	// a1b2c3d4 b4a5c6d7 kind=message role=tool text="" tools=0 results=1 usage_key=""
}
