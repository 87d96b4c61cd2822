package codex_test

import (
	"fmt"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/codex"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// A rollout's token_count lines carry cumulative totals, re-emitted
// unchanged; the parser turns them into one usage entry per API call.
func ExampleParser() {
	rollout := `{"timestamp":"2026-02-23T11:40:29Z","type":"session_meta","payload":{"id":"019c8a4c-ed82-79a1-aa28-7738fc5ab61a","cli_version":"0.104.0","model_provider":"openai"}}
{"timestamp":"2026-02-23T11:40:30Z","type":"turn_context","payload":{"turn_id":"t1","model":"gpt-5.3-codex"}}
{"timestamp":"2026-02-23T11:40:31Z","type":"event_msg","payload":{"type":"user_message","message":"fix the tests"}}
{"timestamp":"2026-02-23T11:40:42Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":17203,"cached_input_tokens":3456,"output_tokens":358,"reasoning_output_tokens":193,"total_tokens":17561}}}}
{"timestamp":"2026-02-23T11:40:43Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":17203,"cached_input_tokens":3456,"output_tokens":358,"reasoning_output_tokens":193,"total_tokens":17561}}}}
`
	p := codex.New(parse.Config{Path: "rollout.jsonl"})
	rd := jsonl.NewReader(strings.NewReader(rollout), jsonl.ReaderConfig{})
	var entries []schema.Entry
	for {
		line, err := rd.Next()
		if err != nil {
			break // io.EOF
		}
		entries, err = p.Parse(entries[:0], line)
		if err != nil {
			fmt.Println(err)
		}
		for _, e := range entries {
			fmt.Printf("%s %s %s", e.EntryID, e.Kind, e.Subtype)
			if e.Text != "" {
				fmt.Printf(" %q", e.Text)
			}
			if e.Usage != nil {
				fmt.Printf(" %s input=%d cache_read=%d output=%d", e.Model, e.Usage.Input, e.Usage.CacheRead, e.Usage.Output)
			}
			fmt.Println()
		}
	}
	// Output:
	// L1 session session_meta
	// L2 event turn_context
	// L3 message user_message "fix the tests"
	// L4 event token_count gpt-5.3-codex input=13747 cache_read=3456 output=358
	// L5 event token_count
}
