package qwen_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/qwen"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// assistant returns an assistant ChatRecord of session s with uuid id and
// the given usageMetadata object.
func assistant(s, id, usage string) string {
	return fmt.Sprintf(`{"uuid":%q,"parentUuid":null,"sessionId":%q,"timestamp":"2026-11-02T09:00:00.000Z","type":"assistant","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"ok"}]},"usageMetadata":%s}`, id, s, usage)
}

// parseLines parses lines with one parser, failing on any line error.
func parseLines(t *testing.T, lines ...string) []schema.Entry {
	t.Helper()
	p := qwen.New(parse.Config{Path: "/h/.qwen/projects/-w/chats/s.jsonl"})
	var all []schema.Entry
	for i, l := range lines {
		var err error
		all, err = p.Parse(all, jsonl.Line{Number: int64(i + 1), Bytes: []byte(l)})
		require.NoError(t, err, l)
	}
	return all
}

// promptTokenCount includes the cached tokens (Gemini's usageMetadata,
// kept by Qwen Code for every provider): input counts without them.
func TestParse_CachedOutOfInput(t *testing.T) {
	e := parseLines(t, assistant("s", "a1", `{"promptTokenCount":12000,"candidatesTokenCount":300,"cachedContentTokenCount":8000,"totalTokenCount":12300}`))[0]
	require.Equal(t, &schema.Usage{Input: 4000, Output: 300, CacheRead: 8000}, e.Usage)
	require.Equal(t, "qwen-code:a1", e.UsageKey)
}

// thoughtsTokenCount is counted beside candidatesTokenCount (the total
// adds both): output is their sum, the thoughts its reasoning part.
func TestParse_ThoughtsBesideCandidates(t *testing.T) {
	e := parseLines(t, assistant("s", "a1", `{"promptTokenCount":1000,"candidatesTokenCount":200,"thoughtsTokenCount":50,"totalTokenCount":1250}`))[0]
	require.Equal(t, &schema.Usage{Input: 1000, Output: 250, Reasoning: 50}, e.Usage)
}

// A total that does not add the thoughts says candidatesTokenCount holds
// them already: they are not counted twice.
func TestParse_ThoughtsInsideCandidates(t *testing.T) {
	e := parseLines(t, assistant("s", "a1", `{"promptTokenCount":1000,"candidatesTokenCount":200,"thoughtsTokenCount":50,"totalTokenCount":1200}`))[0]
	require.Equal(t, &schema.Usage{Input: 1000, Output: 200, Reasoning: 50}, e.Usage)
}

// toolUsePromptTokenCount is input the prompt count leaves out.
func TestParse_ToolUsePromptIsInput(t *testing.T) {
	e := parseLines(t, assistant("s", "a1", `{"promptTokenCount":1000,"candidatesTokenCount":10,"toolUsePromptTokenCount":30,"totalTokenCount":1040}`))[0]
	require.Equal(t, &schema.Usage{Input: 1030, Output: 10}, e.Usage)
}

// A record with only a total counts it as output, as ccusage does.
func TestParse_TotalOnly(t *testing.T) {
	e := parseLines(t, assistant("s", "a1", `{"totalTokenCount":321}`))[0]
	require.Equal(t, &schema.Usage{Output: 321}, e.Usage)
}

// /branch copies every record into the new session with its uuid (and
// names the source in forkedFrom): the usage key is the uuid alone, so a
// call counts once across the two sessions.
func TestParse_BranchCopySharesUsageKey(t *testing.T) {
	u := `{"promptTokenCount":100,"candidatesTokenCount":10,"totalTokenCount":110}`
	a := parseLines(t, assistant("parent", "a1", u))[0]
	b := parseLines(t, assistant("branch", "a1", u))[0]
	require.NotEqual(t, a.SessionID, b.SessionID)
	require.Equal(t, a.UsageKey, b.UsageKey)
	require.Equal(t, a.EntryID, b.EntryID)
}

// A user record the CLI injects (a notification, a goal's prompt) names
// a provenance other than real_user: it is no input of the user's.
func TestParse_InjectedUserIsMeta(t *testing.T) {
	all := parseLines(t,
		`{"uuid":"u1","sessionId":"s","timestamp":"2026-11-02T09:00:00Z","type":"user","provenance":"real_user","message":{"role":"user","parts":[{"text":"hi"}]}}`,
		`{"uuid":"u2","sessionId":"s","timestamp":"2026-11-02T09:00:01Z","type":"user","provenance":"system","subtype":"notification","message":{"role":"user","parts":[{"text":"done"}]}}`,
		`{"uuid":"u3","sessionId":"s","timestamp":"2026-11-02T09:00:02Z","type":"user","message":{"role":"user","parts":[{"text":"older version, no provenance"}]}}`)
	require.False(t, all[0].Meta)
	require.True(t, all[1].Meta)
	require.False(t, all[2].Meta)
}

// A tool result whose toolCallResult has an error (or status "error") is
// an error; one with status success is not.
func TestParse_ToolResultError(t *testing.T) {
	all := parseLines(t,
		`{"uuid":"t1","sessionId":"s","timestamp":"2026-11-02T09:00:00Z","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"x","response":{"output":"ok"}}}]},"toolCallResult":{"callId":"c1","status":"success","error":null}}`,
		`{"uuid":"t2","sessionId":"s","timestamp":"2026-11-02T09:00:01Z","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c2","name":"x","response":{"output":"partial"}}}]},"toolCallResult":{"callId":"c2","status":"error","error":{"message":"boom"}}}`)
	require.Equal(t, schema.RoleTool, all[0].Role)
	require.False(t, all[0].ToolResults[0].IsError)
	require.True(t, all[1].ToolResults[0].IsError)
}

// The ui_telemetry records repeat every API response's token counts:
// they are events, never usage (the assistant record carries the call).
func TestParse_TelemetryIsNotUsage(t *testing.T) {
	e := parseLines(t, `{"uuid":"x1","sessionId":"s","timestamp":"2026-11-02T09:00:00Z","type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_response","input_token_count":100,"output_token_count":10}}}`)[0]
	require.Equal(t, schema.KindEvent, e.Kind)
	require.Nil(t, e.Usage)
}

// A record without sessionId belongs to the session the file's name
// gives (the CLI names the file after the session).
func TestParse_SessionFromFileName(t *testing.T) {
	e := parseLines(t, `{"uuid":"u1","timestamp":"2026-11-02T09:00:00Z","type":"user","message":{"role":"user","parts":[{"text":"hi"}]}}`)[0]
	require.Equal(t, "s", e.SessionID)
}
