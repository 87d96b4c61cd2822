package index_test

import (
	"fmt"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

// A Claude Code response written over two lines counts once, with its
// largest usage; the same record replayed by a resumed session counts in
// the session that wrote it first.
func ExampleAggregator() {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	entry := func(session, id string, sec int, role schema.Role) schema.Entry {
		return schema.Entry{Format: schema.FormatClaudeCode, Host: "laptop", Path: session + ".jsonl",
			SessionID: session, EntryID: id, TS: t0.Add(time.Duration(sec) * time.Second),
			Kind: schema.KindMessage, Role: role}
	}
	assistant := func(session, id string, sec int, output int64) schema.Entry {
		e := entry(session, id, sec, schema.RoleAssistant)
		e.MessageID, e.Model, e.UsageKey = "msg_1", "claude-sonnet-4-5", "claude:msg_1:req_1"
		e.Usage = &schema.Usage{Input: 10, Output: output}
		return e
	}
	original := []schema.Entry{
		entry("first", "u1", 0, schema.RoleUser),
		assistant("first", "a1", 1, 5),  // streaming: partial usage
		assistant("first", "a2", 2, 90), // the same response, complete
	}
	resumed := append([]schema.Entry(nil), original...)
	for i := range resumed {
		resumed[i].SessionID, resumed[i].Path = "second", "second.jsonl"
	}

	agg := index.NewAggregator(nil) // no price table: calls are unpriced
	for _, file := range [][]schema.Entry{resumed, original} {
		for i := range file {
			agg.Add(&file[i])
		}
	}
	for _, s := range agg.Sessions() {
		fmt.Printf("%s: turns=%d assistant_messages=%d api_calls=%d total_tokens=%d unpriced_calls=%d\n",
			s.SessionID, s.Turns, s.AssistantMessages, s.APICalls, s.TotalTokens, s.UnpricedCalls)
	}
	// Output:
	// first: turns=1 assistant_messages=1 api_calls=1 total_tokens=100 unpriced_calls=1
	// second: turns=0 assistant_messages=0 api_calls=0 total_tokens=0 unpriced_calls=0
}
