package kimi_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/kimi"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

const (
	mainPath = "/h/.kimi/sessions/3f2a/sess-1/wire.jsonl"
	subPath  = "/h/.kimi/sessions/3f2a/sess-1/subagents/a7f3/wire.jsonl"

	status = `{"timestamp": 1778317201.7, "message": {"type": "StatusUpdate", "payload": {"context_tokens": 11100, "token_usage": {"input_other": 2100, "output": 150, "input_cache_read": 9000, "input_cache_creation": 300}, "message_id": "chatcmpl-k1", "plan_mode": false}}}`
)

// parseLines parses lines of the file at path with one parser, failing on
// any line error.
func parseLines(t *testing.T, path string, lines ...string) []schema.Entry {
	t.Helper()
	p := kimi.New(parse.Config{Path: path})
	var all []schema.Entry
	for i, l := range lines {
		var err error
		all, err = p.Parse(all, jsonl.Line{Number: int64(i + 1), Bytes: []byte(l)})
		require.NoError(t, err, l)
	}
	return all
}

// A StatusUpdate's token_usage is disjoint already (input_other excludes
// the cache reads and writes): it is the step's call as written, an
// assistant message of the model ccusage assumes.
func TestParse_StatusUpdateIsTheCall(t *testing.T) {
	e := parseLines(t, mainPath, status)[0]
	require.Equal(t, schema.RoleAssistant, e.Role)
	require.Equal(t, &schema.Usage{Input: 2100, Output: 150, CacheRead: 9000, CacheWrite: 300}, e.Usage)
	require.Equal(t, "chatcmpl-k1", e.MessageID)
	require.Equal(t, kimi.DefaultModel, e.Model)
	require.Equal(t, "kimi-cli:chatcmpl-k1:2100:150:9000:300", e.UsageKey)
	require.Equal(t, time.Date(2026, 5, 9, 9, 0, 1, 700_000_000, time.UTC), e.TS)
}

// A StatusUpdate without token usage (plan mode toggled, MCP status, the
// context after /compact) is an event, not a call.
func TestParse_StatusWithoutUsageIsEvent(t *testing.T) {
	all := parseLines(t, mainPath,
		`{"timestamp": 1778317230, "message": {"type": "StatusUpdate", "payload": {"token_usage": null, "message_id": null, "plan_mode": true}}}`,
		`{"timestamp": 1778317231, "message": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": 0, "output": 0}, "message_id": "x"}}}`)
	for _, e := range all {
		require.Equal(t, schema.KindEvent, e.Kind)
		require.Nil(t, e.Usage)
	}
}

// A subagent's step is written twice: in its own wire.jsonl and, wrapped
// in a SubagentEvent, in its parent's. Both are the parent session's,
// the subagent's (sidechain), under one usage key: the call counts once.
func TestParse_SubagentCopiesShareUsageKey(t *testing.T) {
	own := parseLines(t, subPath, `{"timestamp": 1778317209.35, "message": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": 800, "output": 40, "input_cache_read": 0, "input_cache_creation": 0}, "message_id": "chatcmpl-s1"}}}`)[0]
	fwd := parseLines(t, mainPath, `{"timestamp": 1778317209.4, "message": {"type": "SubagentEvent", "payload": {"parent_tool_call_id": "Agent:1", "agent_id": "a7f3", "subagent_type": "coder", "event": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": 800, "output": 40, "input_cache_read": 0, "input_cache_creation": 0}, "message_id": "chatcmpl-s1"}}}}}`)[0]
	for _, e := range []schema.Entry{own, fwd} {
		require.Equal(t, "sess-1", e.SessionID)
		require.Equal(t, "a7f3", e.AgentID)
		require.True(t, e.Sidechain)
		require.Equal(t, &schema.Usage{Input: 800, Output: 40}, e.Usage)
	}
	require.Equal(t, own.UsageKey, fwd.UsageKey)
	require.Equal(t, "coder", fwd.AgentType)
}

// A subagent's other events forwarded to the parent carry nothing that
// counts (its own file has them): its prompt is no input of the parent's,
// its tool calls are not counted twice.
func TestParse_ForwardedEventsCountNothing(t *testing.T) {
	all := parseLines(t, mainPath,
		`{"timestamp": 1778317203.2, "message": {"type": "SubagentEvent", "payload": {"agent_id": "a7f3", "event": {"type": "TurnBegin", "payload": {"user_input": "Write tests"}}}}}`,
		`{"timestamp": 1778317204, "message": {"type": "SubagentEvent", "payload": {"agent_id": "a7f3", "event": {"type": "ToolCall", "payload": {"type": "function", "id": "W:0", "function": {"name": "WriteFile", "arguments": "{}"}}}}}}`)
	for _, e := range all {
		require.Equal(t, schema.KindEvent, e.Kind)
		require.Empty(t, e.ToolCalls)
		require.True(t, e.Sidechain)
	}
}

// A fork (/fork, kimi vis) copies the source's wire lines byte for byte
// into a new session: the copy's call has the source's key, its entries
// the source's ids and timestamps, so they count once.
func TestParse_ForkCopySharesKeys(t *testing.T) {
	head := `{"type": "metadata", "protocol_version": "1.3"}`
	a := parseLines(t, mainPath, head, status)[1]
	b := parseLines(t, "/h/.kimi/sessions/3f2a/sess-2/wire.jsonl", head, status)[1]
	require.Equal(t, "sess-2", b.SessionID)
	require.Equal(t, [3]string{a.UsageKey, a.EntryID, a.TS.String()}, [3]string{b.UsageKey, b.EntryID, b.TS.String()})
}

// The usage key holds the counters: an OpenAI-compatible server may give
// two responses one id, and they are two calls.
func TestParse_ReusedResponseIDTwoCalls(t *testing.T) {
	all := parseLines(t, mainPath,
		`{"timestamp": 1778317201, "message": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": 10, "output": 1}, "message_id": "chatcmpl-1"}}}`,
		`{"timestamp": 1778317202, "message": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": 20, "output": 2}, "message_id": "chatcmpl-1"}}}`)
	require.NotEqual(t, all[0].UsageKey, all[1].UsageKey)
}

// A step without a message id is known by its timestamp and counters.
func TestParse_NoMessageIDKeyByTimestamp(t *testing.T) {
	e := parseLines(t, mainPath, `{"timestamp": 1778317201.5, "message": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": 10, "output": 1}, "message_id": null}}}`)[0]
	require.Equal(t, "kimi-cli:@1778317201.5:10:1:0:0", e.UsageKey)
}

// TurnBegin and SteerInput are the user's input (a string, or content
// parts whose text parts are the text); a compaction's begin is a
// compaction.
func TestParse_InputAndCompaction(t *testing.T) {
	p := kimi.New(parse.Config{Path: mainPath, Text: true})
	var all []schema.Entry
	for i, l := range []string{
		`{"timestamp": 1778317200, "message": {"type": "TurnBegin", "payload": {"user_input": [{"type": "text", "text": "Run"}, {"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "it"}]}}}`,
		`{"timestamp": 1778317201, "message": {"type": "SteerInput", "payload": {"user_input": "also lint"}}}`,
		`{"timestamp": 1778317202, "message": {"type": "CompactionBegin", "payload": {}}}`,
	} {
		var err error
		all, err = p.Parse(all, jsonl.Line{Number: int64(i + 1), Bytes: []byte(l)})
		require.NoError(t, err)
	}
	require.Equal(t, [2]string{"Run\nit", "also lint"}, [2]string{all[0].Text, all[1].Text})
	require.Equal(t, schema.RoleUser, all[1].Role)
	require.Equal(t, schema.KindCompaction, all[2].Kind)
}

// The session is the directory wire.jsonl is in; a subagent's is the
// session above subagents/<agent>.
func TestNew_SessionFromPath(t *testing.T) {
	line := `{"timestamp": 1778317200, "message": {"type": "TurnEnd", "payload": {}}}`
	require.Equal(t, [2]string{"sess-1", ""}, func() [2]string { e := parseLines(t, mainPath, line)[0]; return [2]string{e.SessionID, e.AgentID} }())
	require.Equal(t, [2]string{"sess-1", "a7f3"}, func() [2]string { e := parseLines(t, subPath, line)[0]; return [2]string{e.SessionID, e.AgentID} }())
}
