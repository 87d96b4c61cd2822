package claude_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/claude"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// A transcript is read line by line; each line gives its entries. The two
// assistant lines belong to one API response (same message.id and
// requestId): they share a usage key, and the aggregator keeps the larger
// usage.
func ExampleParser() {
	transcript := `{"type":"file-history-snapshot","messageId":"u1","snapshot":{"messageId":"u1","trackedFileBackups":{},"timestamp":"2026-02-10T21:11:56.906Z"},"isSnapshotUpdate":false}
{"type":"user","uuid":"u1","sessionId":"55604662","timestamp":"2026-02-10T21:11:56.846Z","message":{"role":"user","content":"why does the server not start?"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"55604662","requestId":"req_1","message":{"id":"msg_1","model":"claude-opus-4-6","content":[{"type":"text","text":"Let me look."}],"usage":{"input_tokens":3,"cache_read_input_tokens":11515,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":13835},"output_tokens":13}}}
{"type":"assistant","uuid":"a2","parentUuid":"a1","sessionId":"55604662","requestId":"req_1","message":{"id":"msg_1","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"mix phx.server"}}],"usage":{"input_tokens":3,"cache_read_input_tokens":11515,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":13835},"output_tokens":231}}}
`
	p := claude.New(parse.Config{Path: "55604662.jsonl"})
	rd := jsonl.NewReader(strings.NewReader(transcript), jsonl.ReaderConfig{})
	var entries []schema.Entry
	for {
		line, err := rd.Next()
		if err == io.EOF {
			break
		}
		if entries, err = p.Parse(entries[:0], line); err != nil {
			fmt.Println("error:", err)
		}
		for _, e := range entries {
			fmt.Printf("%d %s %s", e.Line, e.EntryID, e.Kind)
			if e.Role != "" {
				fmt.Printf("/%s", e.Role)
			}
			switch {
			case e.Subtype != "":
				fmt.Printf(" %s", e.Subtype)
			case e.Usage != nil:
				fmt.Printf(" %s total=%d", e.UsageKey, e.Usage.Total())
			case e.Text != "":
				fmt.Printf(" %q", e.Text)
			}
			fmt.Println()
		}
	}
	// Output:
	// 1 h2aa6727f3de84c10 event file-history-snapshot
	// 2 u1 message/user "why does the server not start?"
	// 3 a1 message/assistant claude:msg_1:req_1 total=25366
	// 4 a2 message/assistant claude:msg_1:req_1 total=25584
}

// A subagent transcript may have a sidecar naming its agent type; the
// parser copies it into every entry.
func ExampleReadAgentMeta() {
	path := "../../../testdata/corpus/claude-code/claude-code-log/minimal_showcase/55550000-0000-4000-8000-000000000001/subagents/agent-showcol1.jsonl"
	meta, found, err := claude.ReadAgentMeta(path)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	p := claude.New(parse.Config{Path: path})
	if found {
		p.SetAgentType(meta.AgentType)
	}
	fmt.Println(meta.AgentID, meta.AgentType, meta.ToolUseID)
	// Output:
	// showcol1 general-purpose toolu_sc_showcol1
}
