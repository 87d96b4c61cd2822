package gemini_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/gemini"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

const meta = `{"sessionId":"s1","projectHash":"ph","startTime":"2026-09-01T09:00:00.000Z","lastUpdated":"2026-09-01T09:00:00.000Z"}`

// parseLines parses the metadata line and lines with a parser of path,
// and returns the entries after the metadata's.
func parseLines(t *testing.T, path string, lines ...string) []schema.Entry {
	t.Helper()
	p := gemini.New(parse.Config{Path: path, Text: true})
	return formattest.MustParse(t, p, append([]string{meta}, lines...)...)[1:]
}

// gem returns a gemini message record with id and extra fields.
func gem(id, extra string) string {
	return `{"id":"` + id + `","timestamp":"2026-09-01T09:00:05.000Z","type":"gemini","content":""` + extra + `}`
}

// Gemini CLI writes a message again when its tokens or tool calls arrive
// (pushMessage under the same id): the copies are Meta (one assistant
// message), carry only what is new (each tool call, each final status,
// once) and share the usage key (one call, at its largest).
func TestParse_CopyCountsOnce(t *testing.T) {
	call := func(status string) string {
		return `,"toolCalls":[{"id":"c1","name":"read_file","args":{},"status":"` + status + `"}]`
	}
	tok := `,"tokens":{"input":100,"output":10,"cached":0,"thoughts":0,"tool":0,"total":110}`
	user := `{"id":"u1","timestamp":"2026-09-01T09:00:01.000Z","type":"user","content":[{"text":"hi"}]}`
	es := parseLines(t, "s.jsonl", gem("g1", call("executing")), gem("g1", call("executing")+tok), gem("g1", call("error")+tok), gem("g1", call("error")+tok), user, user)
	require.Len(t, es, 6)
	require.Empty(t, es[3].ToolResults, "the error was counted with the copy before")
	require.False(t, es[4].Meta)
	require.True(t, es[5].Meta, "a copy is no second input")
	require.False(t, es[0].Meta)
	require.True(t, es[1].Meta, "a copy is no second message")
	require.True(t, es[2].Meta, "a copy is no second message")
	require.Len(t, es[0].ToolCalls, 1)
	require.Empty(t, es[1].ToolCalls, "the call was counted with the first copy")
	require.Empty(t, es[2].ToolCalls, "the call was counted with the first copy")
	require.Empty(t, es[0].ToolResults, "not final yet")
	require.Equal(t, []schema.ToolResult{{ToolCallID: "c1", IsError: true}}, es[2].ToolResults)
	require.Nil(t, es[0].Usage)
	require.Equal(t, "gemini-cli:s1:g1", es[1].UsageKey)
	require.Equal(t, es[1].UsageKey, es[2].UsageKey)
	require.NotEqual(t, es[0].EntryID, es[1].EntryID, "entries of a file never share a key")
	require.Equal(t, "g1", es[2].MessageID)
}

// A {"$set":{"messages":[…]}} re-sends the conversation: every message in
// it is an entry (each its own object), Meta, adding nothing already
// counted; a message only the $set brings (a compression's summary turn)
// is no user input.
func TestParse_SetMessages(t *testing.T) {
	user := `{"id":"u1","timestamp":"2026-09-01T09:00:01.000Z","type":"user","content":[{"text":"hi"}]}`
	tok := `,"model":"gemini-2.5-pro","tokens":{"input":100,"output":10,"cached":0,"total":110}`
	set := `{"$set":{"messages":[` + user + `,` + gem("g1", tok) + `,{"id":"u9","timestamp":"2026-09-01T09:00:09.000Z","type":"user","content":[{"text":"<state_snapshot>x</state_snapshot>"}]}]}}`
	es := parseLines(t, "s.jsonl", user, gem("g1", tok), set)
	require.Len(t, es, 5)
	require.False(t, es[0].Meta)
	require.False(t, es[1].Meta)
	for i, e := range es[2:] {
		require.True(t, e.Meta, "message %d of the $set", i)
		require.Equal(t, int64(4), e.Line)
		require.Equal(t, i, e.Object)
	}
	require.Equal(t, es[1].UsageKey, es[3].UsageKey)
	require.Equal(t, schema.RoleUser, es[4].Role)
}

// Gemini's input includes cached, its total adds thoughts and the tool
// prompt: input − cached + tool is input, cached is cache read, output +
// thoughts is output (thoughts are reasoning).
func TestParse_Usage(t *testing.T) {
	for _, tc := range []struct {
		name, tokens string
		want         schema.Usage
	}{
		{"CachedOutOfInput", `{"input":12000,"output":150,"cached":8000,"thoughts":0,"tool":0,"total":12150}`, schema.Usage{Input: 4000, Output: 150, CacheRead: 8000}},
		{"ThoughtsInOutput", `{"input":100,"output":10,"cached":0,"thoughts":40,"tool":0,"total":150}`, schema.Usage{Input: 100, Output: 50, Reasoning: 40}},
		{"ToolPromptIsInput", `{"input":100,"output":10,"cached":60,"thoughts":0,"tool":30,"total":140}`, schema.Usage{Input: 70, Output: 10, CacheRead: 60}},
		// A total that counts cached once more says the input excludes it.
		{"InputExcludingCached", `{"input":40,"output":10,"cached":60,"thoughts":0,"tool":0,"total":110}`, schema.Usage{Input: 40, Output: 10, CacheRead: 60}},
		{"CachedAboveInput", `{"input":10,"output":1,"cached":60,"total":0}`, schema.Usage{Output: 1, CacheRead: 60}},
		{"NoThoughtsNorTool", `{"input":10,"output":1,"cached":0,"total":11}`, schema.Usage{Input: 10, Output: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es := parseLines(t, "s.jsonl", gem("g1", `,"tokens":`+tc.tokens))
			require.NotNil(t, es[0].Usage)
			require.Equal(t, tc.want, *es[0].Usage)
		})
	}
	es := parseLines(t, "s.jsonl", gem("g1", `,"tokens":{"input":0,"output":0,"cached":0,"total":0}`), gem("g2", `,"tokens":null`))
	require.Nil(t, es[0].Usage, "nothing spent")
	require.Nil(t, es[1].Usage)
}

// The <session_context> Gemini CLI injects as the first user message is
// not the user's input, written as a part or as a string.
func TestParse_SessionContextIsMeta(t *testing.T) {
	es := parseLines(t, "s.jsonl",
		`{"id":"u0","timestamp":"2026-09-01T09:00:01.000Z","type":"user","content":[{"text":"\n<session_context>\nThis is the Gemini CLI.\n</session_context>"}]}`,
		`{"id":"u1","timestamp":"2026-09-01T09:00:01.000Z","type":"user","content":"<session_context>x</session_context>"}`,
		`{"id":"u2","timestamp":"2026-09-01T09:00:02.000Z","type":"user","content":[{"text":"what is <session_context>?"}]}`)
	require.True(t, es[0].Meta)
	require.True(t, es[1].Meta)
	require.False(t, es[2].Meta, "the user's own words")
}

// A message without a model is the last model named before it; every
// call's provider is google.
func TestParse_ModelFromEarlierMessage(t *testing.T) {
	tok := `,"tokens":{"input":10,"output":1,"cached":0,"total":11}`
	es := parseLines(t, "s.jsonl", gem("g1", `,"model":"gemini-2.5-flash"`+tok), gem("g2", tok))
	require.Equal(t, "gemini-2.5-flash", es[1].Model)
	require.Equal(t, gemini.Provider, es[1].Provider)
}

// A subagent's file (chats/<parent session>/<session>.jsonl, kind
// "subagent") names its parent by its directory; a main file names none.
func TestParse_SubagentParent(t *testing.T) {
	p := gemini.New(parse.Config{Path: "/h/.gemini/tmp/ph/chats/s1/s2.jsonl"})
	es := formattest.MustParse(t, p, `{"sessionId":"s2","projectHash":"ph","startTime":"2026-09-01T09:00:00.000Z","kind":"subagent"}`, gem("g1", ""))
	require.Equal(t, "s1", es[1].ParentSessionID)
	require.Equal(t, "s2", es[1].SessionID)
	p = gemini.New(parse.Config{Path: "/h/.gemini/tmp/ph/chats/session-2026-09-01T09-00-s1.jsonl"})
	es = formattest.MustParse(t, p, meta, gem("g1", ""))
	require.Empty(t, es[1].ParentSessionID)
}

// Entries never alias the line they were parsed from.
func TestParse_Owned(t *testing.T) {
	data := formattest.ReadFile(t, "testdata/session/input.jsonl")
	lines := formattest.Lines(t, data)
	formattest.RequireOwned(t, gemini.New(parse.Config{Path: "s.jsonl", Text: true, Raw: true}), lines...)
}
