package claude_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/claude"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// mustParse parses one line (line number n) and requires no error.
func mustParse(tb testing.TB, p *claude.Parser, n int64, line string) []schema.Entry {
	tb.Helper()
	got, err := p.Parse(nil, jsonl.Line{Bytes: []byte(line), Number: n})
	require.NoError(tb, err)
	return got
}

// mustOne parses one line that must yield exactly one entry.
func mustOne(tb testing.TB, p *claude.Parser, n int64, line string) schema.Entry {
	tb.Helper()
	got := mustParse(tb, p, n, line)
	require.Len(tb, got, 1)
	require.NoError(tb, got[0].Validate())
	return got[0]
}

const (
	promptLine = `{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hello there"}}`
	metaLine   = `{"type":"user","uuid":"u2","sessionId":"s1","isMeta":true,"message":{"role":"user","content":"injected context"}}`
	toolLine   = `{"type":"user","uuid":"u3","sessionId":"s1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"out","is_error":true}]}}`
	replyLine  = `{"type":"assistant","uuid":"a1","sessionId":"s1","requestId":"r1","message":{"id":"m1","model":"claude-opus-4-6","role":"assistant","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":1,"output_tokens":2}}}`
)

func TestParser_TextOff(t *testing.T) {
	p := claude.New(parse.Config{Path: "s1.jsonl"})

	prompt := mustOne(t, p, 1, promptLine)
	assert.Equal(t, "hello there", prompt.Text, "real user input keeps its text")
	assert.False(t, prompt.Meta)

	meta := mustOne(t, p, 2, metaLine)
	assert.True(t, meta.Meta)
	assert.Empty(t, meta.Text, "injected text only with Config.Text")

	tool := mustOne(t, p, 3, toolLine)
	assert.Equal(t, schema.RoleTool, tool.Role)
	require.Len(t, tool.ToolResults, 1)
	assert.Equal(t, schema.ToolResult{ToolCallID: "t1", IsError: true}, tool.ToolResults[0])

	reply := mustOne(t, p, 4, replyLine)
	assert.Empty(t, reply.Text)
	require.Len(t, reply.ToolCalls, 1)
	assert.Equal(t, schema.ToolCall{ID: "t1", Name: "Bash"}, reply.ToolCalls[0])
	assert.Equal(t, "claude:m1:r1", reply.UsageKey)
	assert.Equal(t, &schema.Usage{Input: 1, Output: 2}, reply.Usage)
}

func TestParser_SidechainPromptIsNotRealInput(t *testing.T) {
	p := claude.New(parse.Config{})
	e := mustOne(t, p, 1, `{"type":"user","uuid":"u1","sessionId":"s1","isSidechain":true,"agentId":"a1","message":{"role":"user","content":"subagent task"}}`)
	assert.True(t, e.Sidechain)
	assert.False(t, e.Meta)
	assert.Empty(t, e.Text, "a sidechain prompt is not a real user input")
	assert.Equal(t, "a1", e.AgentID)
}

func TestParser_NoAlias(t *testing.T) {
	for _, text := range []bool{false, true} {
		p := claude.New(parse.Config{Text: text, Raw: true})
		got := formattest.RequireOwned(t, p, jsonl.Line{Bytes: []byte(promptLine + replyLine + toolLine), Number: 1})
		require.Len(t, got, 3, "text=%v", text)
	}
}
func TestParser_Raw(t *testing.T) {
	p := claude.New(parse.Config{Raw: true})
	got := mustParse(t, p, 1, promptLine+" "+metaLine)
	require.Len(t, got, 2)
	assert.JSONEq(t, promptLine, string(got[0].Raw))
	assert.JSONEq(t, metaLine, string(got[1].Raw))
	assert.Equal(t, 1, got[1].Object)
}

func TestParser_SessionFallback(t *testing.T) {
	tests := []struct {
		name, path, want string
	}{
		{"SessionFile", "/p/-w/0d8c.jsonl", "0d8c"},
		{"SubagentFile", "/p/-w/0d8c/subagents/agent-a1.jsonl", "0d8c"},
		{"WorkflowAgent", "/p/-w/0d8c/subagents/workflows/wf1/agent-a2.jsonl", "0d8c"},
		{"FlatAgent", "/p/-w/agent-a3.jsonl", "agent-a3"},
		{"Stream", "", "-"},
	}
	const summary = `{"type":"summary","summary":"s","leafUuid":"l1"}`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := claude.New(parse.Config{Path: tt.path})
			assert.Equal(t, tt.want, mustOne(t, p, 1, summary).SessionID)
			mustOne(t, p, 2, promptLine)
			assert.Equal(t, "s1", mustOne(t, p, 3, summary).SessionID, "the last session id seen wins")
		})
	}
}

func TestParser_AgentFromPath(t *testing.T) {
	tests := []struct {
		name, path, line, want string
	}{
		{"Flat", "/p/-w/agent-test-hash-123.jsonl", promptLine, "test-hash-123"},
		{"Nested", "/p/-w/s1/subagents/agent-acompact-fffbd0.jsonl", promptLine, "acompact-fffbd0"},
		{"LineWins", "/p/-w/s1/subagents/agent-x.jsonl", `{"type":"user","uuid":"u","sessionId":"s","agentId":"y","message":{"role":"user","content":"c"}}`, "y"},
		{"NotAgent", "/p/-w/s1.jsonl", promptLine, ""},
		{"NotJSONL", "/p/-w/agent-x.json", promptLine, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := claude.New(parse.Config{Path: tt.path})
			p.SetAgentType("Explore")
			e := mustOne(t, p, 1, tt.line)
			assert.Equal(t, tt.want, e.AgentID)
			assert.Equal(t, "Explore", e.AgentType)
		})
	}
}

func TestReadAgentMeta(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(corpusDir, "claude-code-log/minimal_showcase/55550000-0000-4000-8000-000000000001/subagents/agent-showcol1.meta.json")
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent-showcol1.meta.json"), data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent-bad.meta.json"), []byte(`["not", "an object"]`), 0o644))

	meta, found, err := claude.ReadAgentMeta(filepath.Join(dir, "agent-showcol1.jsonl"))
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, claude.AgentMeta{
		AgentID:     "showcol1",
		AgentType:   "general-purpose",
		Description: "Survey the web module",
		ToolUseID:   "toolu_sc_showcol1",
	}, meta)

	_, found, err = claude.ReadAgentMeta(filepath.Join(dir, "agent-none.jsonl"))
	require.NoError(t, err)
	assert.False(t, found, "no sidecar")

	_, found, err = claude.ReadAgentMeta(filepath.Join(dir, "0d8c.jsonl"))
	require.NoError(t, err)
	assert.False(t, found, "not a subagent file")

	_, found, err = claude.ReadAgentMeta(filepath.Join(dir, "agent-bad.jsonl"))
	require.ErrorIs(t, err, claude.ErrBadAgentMeta)
	assert.False(t, found)
}

func TestParser_Errors(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		entries int
		want    error
		off     int64 // offset of the error within the line
	}{
		{"NotObject", `[1]`, 0, parse.ErrNotObject, 0},
		{"SecondNotObject", promptLine + ` "x"`, 1, parse.ErrNotObject, int64(len(promptLine)) + 1},
		{"Syntax", `{"type":"user",`, 0, jsonl.ErrUnexpectedEnd, 15},
		{"TrailingGarbage", promptLine + `}`, 1, parse.ErrNotObject, int64(len(promptLine))},
		{"BadUUID", `{"type":"user","uuid":true}`, 0, parse.ErrBadField, 22},
		{"BadTimestamp", `{"type":"user","timestamp":"noon","message":{}}`, 0, parse.ErrBadField, 27},
		// A bad token counter keeps its entry, without usage.
		{"NegativeTokens", `{"type":"assistant","message":{"usage":{"output_tokens":-1}}}`, 1, parse.ErrImplausibleCount, 56},
		{"HugeTokens", `{"type":"assistant","message":{"usage":{"input_tokens":9223372036854775807}}}`, 1, parse.ErrImplausibleCount, 55},
		{"StringTokens", `{"type":"assistant","message":{"usage":{"input_tokens":"7"}}}`, 1, parse.ErrBadField, 55},
		{"BadTokensThenSecondObject", `{"type":"assistant","message":{"usage":{"output_tokens":-1}}}` + promptLine, 2, parse.ErrImplausibleCount, 56},
		{"MissingMessage", `{"type":"assistant","uuid":"a"}`, 0, parse.ErrMissingField, 0},
		{"BadContent", `{"type":"user","message":{"content":5}}`, 0, parse.ErrBadField, 36},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := claude.New(parse.Config{Path: "f.jsonl"})
			got, err := p.Parse(nil, jsonl.Line{Bytes: []byte(tt.line), Number: 7, Offset: 1000})
			assert.Len(t, got, tt.entries)
			require.ErrorIs(t, err, tt.want)
			var de *schema.DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, "f.jsonl", de.Path)
			assert.Equal(t, int64(7), de.Line)
			assert.Equal(t, 1000+tt.off, de.Offset)

			// The parser stays usable.
			mustOne(t, p, 8, promptLine)
		})
	}
}

func TestParser_UsageOnlyWhereCounted(t *testing.T) {
	tests := []struct {
		name, line, key string
	}{
		{"Synthetic", `{"type":"assistant","uuid":"a","sessionId":"s","message":{"id":"m","model":"<synthetic>","usage":{"input_tokens":0,"output_tokens":0}}}`, ""},
		{"AgentProgress", `{"type":"progress","uuid":"p","sessionId":"s","data":{"type":"agent_progress","message":{"type":"assistant","message":{"id":"m","usage":{"input_tokens":5,"output_tokens":5}},"requestId":"r"}}}`, ""},
		{"NoUsage", `{"type":"assistant","uuid":"a","sessionId":"s","message":{"id":"m","content":[]}}`, ""},
		{"NoMessageID", `{"type":"assistant","uuid":"a9","sessionId":"s","message":{"usage":{"input_tokens":5}}}`, "claude:uuid:a9"},
		{"NoRequestID", `{"type":"assistant","uuid":"a","sessionId":"s","message":{"id":"m","usage":{"input_tokens":5}}}`, "claude:m"},
		{"Both", `{"type":"assistant","uuid":"a","sessionId":"s","requestId":"r","message":{"id":"m","usage":{"input_tokens":5}}}`, "claude:m:r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustOne(t, claude.New(parse.Config{}), 1, tt.line)
			assert.Equal(t, tt.key, e.UsageKey)
			assert.Equal(t, tt.key != "", e.Usage != nil, "Usage set exactly when UsageKey is")
		})
	}
}

// TestParser_Corpus checks contract invariants on every line of the shared
// corpus: valid entries, stable ids, JSON round trip, usage only with a key.
func TestParser_Corpus(t *testing.T) {
	files, _ := loadCorpus(t)
	for _, f := range files {
		first := parseAll(t, f, true)
		again := parseAll(t, f, true)
		require.Len(t, again, len(first))
		for i := range first {
			e := &first[i]
			require.NoError(t, e.Validate(), "%s:%d", f.path, e.Line)
			assert.Equal(t, e.EntryID, again[i].EntryID, "stable entry id")
			assert.Equal(t, e.UsageKey != "", e.Usage != nil, "%s:%d usage without key", f.path, e.Line)
			if e.Kind == schema.KindEvent && e.Subtype == "progress:agent_progress" {
				assert.Nil(t, e.Usage)
			}
			enc := e.AppendJSON(nil)
			var dec schema.Entry
			require.NoError(t, schema.UnmarshalEntry(enc, &dec), "%s", enc)
			assert.Equal(t, string(enc), string(dec.AppendJSON(nil)))
		}
		// Text off changes text only.
		lean := parseAll(t, f, false)
		require.Len(t, lean, len(first))
		for i := range lean {
			a, b := lean[i], first[i]
			assert.Equal(t, b.Kind, a.Kind)
			assert.Equal(t, b.Role, a.Role)
			assert.Equal(t, b.Meta, a.Meta)
			assert.Equal(t, b.UsageKey, a.UsageKey)
			assert.Equal(t, len(b.ToolCalls), len(a.ToolCalls))
			if a.Kind == schema.KindMessage && a.Role == schema.RoleUser && !a.Meta && !a.Sidechain {
				assert.Equal(t, b.Text, a.Text, "%s:%d real input keeps its text", f.path, a.Line)
			}
		}
	}
}

func parseAll(tb testing.TB, f corpusFile, text bool) []schema.Entry {
	tb.Helper()
	p := claude.New(parse.Config{Path: f.path, Text: text})
	var out []schema.Entry
	for _, l := range f.lines {
		var err error
		out, err = p.Parse(out, l)
		require.NoError(tb, err, "%s:%d", f.path, l.Number)
	}
	return out
}

func TestParser_TwoObjectsDistinctIDs(t *testing.T) {
	p := claude.New(parse.Config{})
	const q = `{"type":"queue-operation","operation":"enqueue","sessionId":"s","content":"x"}`
	got := mustParse(t, p, 1, q+q)
	require.Len(t, got, 2)
	assert.NotEqual(t, got[0].EntryID, got[1].EntryID)
	assert.Equal(t, 1, got[1].Object)

	// Re-reading the file from the start gives the same ids.
	p2 := claude.New(parse.Config{})
	again := mustParse(t, p2, 1, q+q)
	assert.Equal(t, got[0].EntryID, again[0].EntryID)
	assert.Equal(t, got[1].EntryID, again[1].EntryID)
}

func TestParser_ErrorsAreNotJoined(t *testing.T) {
	// A DecodeError wraps exactly one cause.
	p := claude.New(parse.Config{})
	_, err := p.Parse(nil, jsonl.Line{Bytes: []byte(`{"type":"user","uuid":1,"sessionId":2}`), Number: 1})
	var de *schema.DecodeError
	require.ErrorAs(t, err, &de)
	assert.True(t, errors.Is(err, parse.ErrBadField))
	assert.True(t, bytes.Contains([]byte(err.Error()), []byte("uuid")), "the first bad field is named: %v", err)
}

// TestParser_CacheWrite checks the cache-write rule: the larger of
// cache_creation_input_tokens and its breakdown's sum, the breakdown kept
// as written (what exceeds it is of unknown tier).
func TestParser_CacheWrite(t *testing.T) {
	tests := []struct {
		name, usage string
		want        schema.Usage
	}{
		{"TotalOnly", `"cache_creation_input_tokens":3685`, schema.Usage{CacheWrite: 3685}},
		{"BreakdownOfZeros", `"cache_creation_input_tokens":3685,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0}`,
			schema.Usage{CacheWrite: 3685}},
		{"PartBreakdown", `"cache_creation_input_tokens":5000,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":1000}`,
			schema.Usage{CacheWrite: 5000, CacheWrite1h: 1000}},
		{"Equal", `"cache_creation_input_tokens":8037,"cache_creation":{"ephemeral_5m_input_tokens":37,"ephemeral_1h_input_tokens":8000}`,
			schema.Usage{CacheWrite: 8037, CacheWrite5m: 37, CacheWrite1h: 8000}},
		{"BreakdownOverTotal", `"cache_creation_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":700,"ephemeral_1h_input_tokens":100}`,
			schema.Usage{CacheWrite: 800, CacheWrite5m: 700, CacheWrite1h: 100}},
		{"BreakdownOnly", `"cache_creation":{"ephemeral_5m_input_tokens":70}`, schema.Usage{CacheWrite: 70, CacheWrite5m: 70}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := `{"type":"assistant","uuid":"a","sessionId":"s","requestId":"r","message":{"id":"m","model":"MiniMax-M2.1","usage":{"input_tokens":1,` + tt.usage + `}}}`
			e := mustOne(t, claude.New(parse.Config{}), 1, line)
			require.NotNil(t, e.Usage)
			tt.want.Input = 1
			assert.Equal(t, tt.want, *e.Usage)
		})
	}
}

// TestParser_SyntheticIsAnEvent: Claude Code's own notices (model
// "<synthetic>") are events, never assistant messages or API calls.
func TestParser_SyntheticIsAnEvent(t *testing.T) {
	for _, line := range []string{
		`{"type":"assistant","uuid":"a","sessionId":"s","message":{"id":"x","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"No response requested."}],"usage":{"input_tokens":0,"output_tokens":0}}}`,
		`{"type":"assistant","uuid":"b","sessionId":"s","isApiErrorMessage":true,"message":{"id":"y","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"Invalid API key · Please run /login"}]}}`,
	} {
		e := mustOne(t, claude.New(parse.Config{Text: true}), 1, line)
		assert.Equal(t, schema.KindEvent, e.Kind)
		assert.Equal(t, schema.RoleAssistant, e.Role)
		assert.Contains(t, []string{"synthetic", "api_error"}, e.Subtype)
		assert.Equal(t, claude.SyntheticModel, e.Model)
		assert.Empty(t, e.Provider)
		assert.Nil(t, e.Usage)
		assert.Empty(t, e.UsageKey)
		assert.NotEmpty(t, e.Text, "the notice keeps its text")
	}
}
