package grok_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/grok"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

const path = "/h/.grok/sessions/%2Fhome%2Fu%2Fproj/0199-s1/updates.jsonl"

// turn returns a turn_completed line of event ev with usage (a JSON
// object's fields).
func turn(ev, usage string) string {
	return fmt.Sprintf(`{"timestamp":1785000010,"method":"_x.ai/session_notification","params":{"sessionId":"0199-s1","_meta":{"eventId":%q},"update":{"sessionUpdate":"turn_completed","prompt_id":"p1","stop_reason":"end_turn","usage":{%s}}}}`, ev, usage)
}

// user returns a user_message_chunk line of event ev for prompt idx.
func user(ev string, idx int, text string) string {
	return fmt.Sprintf(`{"timestamp":1785000000,"params":{"sessionId":"0199-s1","_meta":{"eventId":%q},"update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":%q},"_meta":{"modelId":"grok-4.5","promptIndex":%d}}}}`, ev, text, idx)
}

// usages returns the entries with usage, keyed by entry id.
func usages(entries []schema.Entry) map[string]schema.Usage {
	got := map[string]schema.Usage{}
	for _, e := range entries {
		if e.Usage != nil {
			got[e.EntryID] = *e.Usage
		}
	}
	return got
}

// Grok's inputTokens includes the cache reads and writes, outputTokens
// the reasoning: input counts without the cache (ccusage: 10000 − 8000 −
// 1000 = 1000), output as written.
func TestParse_DisjointInput(t *testing.T) {
	es := formattest.MustParse(t, grok.New(parse.Config{Path: path}),
		turn("e1", `"inputTokens":10000,"outputTokens":500,"cachedReadTokens":8000,"cacheCreationTokens":1000,"reasoningTokens":200`))
	require.Equal(t, map[string]schema.Usage{"e1": {Input: 1000, Output: 500, CacheRead: 8000, CacheWrite: 1000, Reasoning: 200}}, usages(es))
}

// A cache read larger than the input Grok reports is clamped to it (as
// ccusage does): the tokens never go negative nor exceed what was sent.
func TestParse_CacheClampedToInput(t *testing.T) {
	es := formattest.MustParse(t, grok.New(parse.Config{Path: path}),
		turn("e1", `"inputTokens":100,"outputTokens":5,"cachedReadTokens":900,"cacheCreationTokens":50`))
	require.Equal(t, map[string]schema.Usage{"e1": {Input: 0, Output: 5, CacheRead: 100}}, usages(es))
}

// modelUsage splits a turn by model: one entry per model, each with its
// own recorded cost; the first is the turn's reply, the others meta, so a
// turn is one assistant message however many models it used.
func TestParse_ModelUsageOneEntryPerModel(t *testing.T) {
	es := formattest.MustParse(t, grok.New(parse.Config{Path: path}),
		turn("e1", `"inputTokens":300,"outputTokens":30,"costUsdTicks":300000000,"modelUsage":{"grok-a":{"inputTokens":100,"outputTokens":10,"costUsdTicks":100000000},"grok-b":{"inputTokens":200,"outputTokens":20,"cachedReadTokens":50,"costUsdTicks":200000000}}`))
	require.Len(t, es, 2)
	require.Equal(t, map[string]schema.Usage{"e1:grok-a": {Input: 100, Output: 10}, "e1:grok-b": {Input: 150, Output: 20, CacheRead: 50}}, usages(es))
	for i, want := range []struct {
		model, key string
		meta       bool
		cost       float64
	}{{"grok-a", "grok-build:0199-s1:e1:grok-a", false, 0.01}, {"grok-b", "grok-build:0199-s1:e1:grok-b", true, 0.02}} {
		e := es[i]
		require.Equal(t, want.model, e.Model)
		require.Equal(t, want.key, e.UsageKey)
		require.Equal(t, want.meta, e.Meta)
		require.Equal(t, schema.RoleAssistant, e.Role)
		require.Equal(t, grok.SubtypeTurnTotal, e.Subtype)
		require.Equal(t, "xai", e.Provider)
		require.NotNil(t, e.CostUSD)
		require.InDelta(t, want.cost, *e.CostUSD, 1e-12)
	}
}

// costUsdTicks is Grok's own cost, 10^10 ticks to the dollar, used as
// recorded; a turn without it has no recorded cost (priced from the
// table).
func TestParse_RecordedCostInTicks(t *testing.T) {
	es := formattest.MustParse(t, grok.New(parse.Config{Path: path}),
		turn("e1", `"inputTokens":500000,"outputTokens":10000,"cachedReadTokens":400000,"costUsdTicks":43898600000`),
		turn("e2", `"inputTokens":10,"outputTokens":1`))
	require.NotNil(t, es[0].CostUSD)
	require.InDelta(t, 4.38986, *es[0].CostUSD, 1e-12)
	require.Nil(t, es[1].CostUSD)
}

// A turn_completed written again (the same event id) is the same record:
// the same entry id and usage key, so it counts once.
func TestParse_ResentTurnSameKey(t *testing.T) {
	l := turn("e1", `"inputTokens":100,"outputTokens":5,"modelUsage":{"grok-4.5-build":{"inputTokens":100,"outputTokens":5}}`)
	es := formattest.MustParse(t, grok.New(parse.Config{Path: path}), l, l)
	require.Len(t, es, 2)
	require.Equal(t, es[0].EntryID, es[1].EntryID)
	require.Equal(t, es[0].UsageKey, es[1].UsageKey)
	require.Equal(t, "grok-build:0199-s1:e1:grok-4.5-build", es[0].UsageKey)
}

// Without an event id, the content names the record: a line written twice
// is one record, two different turns are two.
func TestParse_NoEventIDContentID(t *testing.T) {
	a := `{"timestamp":1785000010,"params":{"update":{"sessionUpdate":"turn_completed","usage":{"inputTokens":100,"outputTokens":5}}}}`
	b := `{"timestamp":1785000020,"params":{"update":{"sessionUpdate":"turn_completed","usage":{"inputTokens":100,"outputTokens":5}}}}`
	es := formattest.MustParse(t, grok.New(parse.Config{Path: path}), a, a, b)
	require.Equal(t, es[0].UsageKey, es[1].UsageKey)
	require.NotEqual(t, es[0].UsageKey, es[2].UsageKey)
	require.NotEmpty(t, es[0].UsageKey)
}

// The chunks of one prompt (the same promptIndex) are one user input;
// the next prompt is another.
func TestParse_PromptChunksOneInput(t *testing.T) {
	es := formattest.MustParse(t, grok.New(parse.Config{Path: path}),
		user("u1", 0, "List the files"), user("u2", 0, " and count them."), user("u3", 1, "Now test."))
	var real []string
	for _, e := range es {
		require.Equal(t, schema.RoleUser, e.Role)
		if !e.Meta {
			real = append(real, e.EntryID)
		}
	}
	require.Equal(t, []string{"u1", "u3"}, real)
}

// A prompt's chunks may have other updates between them and still be one
// input; the same index after a completed turn (a resumed session
// counting again) is a new input.
func TestParse_PromptChunksAcrossUpdates(t *testing.T) {
	note := `{"timestamp":1785000001,"method":"_x.ai/queue/changed","params":{"queue":[]}}`
	done := turn("t1", `"inputTokens":10,"outputTokens":1`)
	es := formattest.MustParse(t, grok.New(parse.Config{Path: path}),
		user("u1", 0, "a"), note, user("u2", 0, "b"), done, user("u3", 0, "c"))
	var real []string
	for _, e := range es {
		if e.Role == schema.RoleUser && !e.Meta {
			real = append(real, e.EntryID)
		}
	}
	require.Equal(t, []string{"u1", "u3"}, real)
}

// A tool call is listed once per call id and its result once: a final
// status re-sent with the call's output is an event.
func TestParse_ToolCallAndResultOnce(t *testing.T) {
	call := `{"timestamp":1785000003,"params":{"_meta":{"eventId":"%s"},"update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"read_file"}}}`
	upd := `{"timestamp":1785000004,"params":{"_meta":{"eventId":"%s"},"update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"%s"}}}`
	es := formattest.MustParse(t, grok.New(parse.Config{Path: path}),
		fmt.Sprintf(call, "t1"), fmt.Sprintf(call, "t2"),
		fmt.Sprintf(upd, "t3", "in_progress"), fmt.Sprintf(upd, "t4", "failed"), fmt.Sprintf(upd, "t5", "failed"))
	calls, results, errs := 0, 0, 0
	for _, e := range es {
		calls += len(e.ToolCalls)
		results += len(e.ToolResults)
		for _, r := range e.ToolResults {
			if r.IsError {
				errs++
			}
		}
	}
	require.Equal(t, []int{1, 1, 1}, []int{calls, results, errs})
	require.Equal(t, schema.RoleTool, es[3].Role)
	require.Equal(t, schema.KindEvent, es[4].Kind)
}

// Grok's layout names the session by its directory and the project by
// the directory above it (URL-encoded), as ccusage does; another name
// takes params.sessionId.
func TestParse_SessionAndCWDFromPath(t *testing.T) {
	l := user("u1", 0, "hi")
	es := formattest.MustParse(t, grok.New(parse.Config{Path: path}), l)
	require.Equal(t, "0199-s1", es[0].SessionID)
	require.Equal(t, "/home/u/proj", es[0].CWD)
	es = formattest.MustParse(t, grok.New(parse.Config{Path: "/h/.grok/sessions/%2Fw/0199-s2/events.jsonl"}), l)
	require.Equal(t, "0199-s2", es[0].SessionID, "a sibling in a session directory: the directory's session")
	require.Equal(t, "/w", es[0].CWD)
	es = formattest.MustParse(t, grok.New(parse.Config{Path: "/tmp/copy.jsonl"}), l)
	require.Equal(t, "0199-s1", es[0].SessionID)
	require.Empty(t, es[0].CWD)
	es = formattest.MustParse(t, grok.New(parse.Config{Path: "/tmp/copy.jsonl"}), `{"timestamp":1,"params":{"update":{"sessionUpdate":"plan"}}}`)
	require.Equal(t, "copy", es[0].SessionID)
}

// The timestamp is Unix seconds (ccusage reads it so); a number from
// 10^11 up is milliseconds, and without one agentTimestampMs is used.
func TestParse_TimestampSeconds(t *testing.T) {
	p := grok.New(parse.Config{Path: path})
	es := formattest.MustParse(t, p,
		`{"timestamp":1785000010,"params":{"update":{"sessionUpdate":"plan"}}}`,
		`{"timestamp":1785000010500,"params":{"update":{"sessionUpdate":"plan"}}}`,
		`{"params":{"_meta":{"agentTimestampMs":1785000099000},"update":{"sessionUpdate":"plan"}}}`)
	require.Equal(t, time.Unix(1785000010, 0).UTC(), es[0].TS)
	require.Equal(t, time.UnixMilli(1785000010500).UTC(), es[1].TS)
	require.Equal(t, time.Unix(1785000099, 0).UTC(), es[2].TS)
}

// Entries never alias the line they came from.
func TestParse_EntriesOwnTheirBytes(t *testing.T) {
	lines := []string{user("u1", 0, "hi"), turn("e1", `"inputTokens":100,"outputTokens":5,"modelUsage":{"grok-4.5-build":{"inputTokens":100,"outputTokens":5}}`),
		`{"timestamp":1785000003,"params":{"_meta":{"eventId":"t1"},"update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"read_file","rawInput":{"path":"a"}}}}`}
	var ls []jsonl.Line
	for i, l := range lines {
		ls = append(ls, jsonl.Line{Number: int64(i + 1), Bytes: []byte(l)})
	}
	formattest.RequireOwned(t, grok.New(parse.Config{Path: path, Text: true, Raw: true}), ls...)
}
