package m4dtimes_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/m4dtimes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

func TestParser_Golden(t *testing.T) {
	golden.Run(t, "testdata", m4dtimes.New)
}

const (
	header     = `{"type":"session","version":1,"id":"a1b2c3d4","timestamp":"2026-02-24T23:14:59.123456789Z","userId":7756297856}`
	userLine   = `{"type":"message","id":"e5f6a7b8","parentId":"a1b2c3d4","timestamp":"2026-02-24T23:15:01Z","message":{"role":"user","content":[{"type":"text","text":"Cosa ho oggi?"}]}}`
	toolUse    = `{"type":"message","id":"f0e1d2c3","parentId":"e5f6a7b8","timestamp":"2026-02-24T23:15:03Z","message":{"role":"assistant","content":[{"type":"tool_use","tool_call":{"id":"toolu_01","name":"execute_sql","arguments":{"query":"SELECT 1"}}}],"usage":{"input_tokens":3264,"output_tokens":110}}}`
	toolResult = `{"type":"message","id":"b4a5c6d7","parentId":"f0e1d2c3","timestamp":"2026-02-24T23:15:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_result":{"tool_call_id":"toolu_01","content":"1","is_error":true}}]}}`
	reply      = `{"type":"message","id":"c8d9e0f1","parentId":"b4a5c6d7","timestamp":"2026-02-24T23:15:05Z","message":{"role":"assistant","content":[{"type":"text","text":"Hai 3 stanze."}],"usage":{"input_tokens":3410,"output_tokens":85}}}`
)

func TestParser_Turn(t *testing.T) {
	got := formattest.MustParse(t, m4dtimes.New(parse.Config{}), header, userLine, toolUse, toolResult, reply)
	require.Len(t, got, 5)
	for i := range got {
		assert.Equal(t, "a1b2c3d4", got[i].SessionID, "entry %d", i)
		assert.NoError(t, got[i].Validate())
		assert.Empty(t, got[i].Model, "the SDK records no model")
	}
	tests := []struct {
		name       string
		e          schema.Entry
		kind       schema.Kind
		role       schema.Role
		text       string
		sender     string
		usage      *schema.Usage
		usageKey   string
		toolCalls  []schema.ToolCall
		toolResult []schema.ToolResult
	}{
		{name: "Header", e: got[0], kind: schema.KindSession, sender: "7756297856"},
		{name: "UserPrompt", e: got[1], kind: schema.KindMessage, role: schema.RoleUser, text: "Cosa ho oggi?", sender: "7756297856"},
		{
			name: "ToolUse", e: got[2], kind: schema.KindMessage, role: schema.RoleAssistant,
			usage: &schema.Usage{Input: 3264, Output: 110}, usageKey: "m4dtimes:a1b2c3d4:f0e1d2c3",
			toolCalls: []schema.ToolCall{{ID: "toolu_01", Name: "execute_sql"}},
		},
		{
			name: "ToolResult", e: got[3], kind: schema.KindMessage, role: schema.RoleTool,
			toolResult: []schema.ToolResult{{ToolCallID: "toolu_01", IsError: true}},
		},
		{
			name: "Reply", e: got[4], kind: schema.KindMessage, role: schema.RoleAssistant,
			usage: &schema.Usage{Input: 3410, Output: 85}, usageKey: "m4dtimes:a1b2c3d4:c8d9e0f1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.kind, tt.e.Kind)
			assert.Equal(t, tt.role, tt.e.Role)
			assert.Equal(t, tt.text, tt.e.Text, "without cfg.Text only user input has text")
			assert.Equal(t, tt.sender, tt.e.Sender)
			assert.Equal(t, tt.usage, tt.e.Usage)
			assert.Equal(t, tt.usageKey, tt.e.UsageKey)
			assert.Equal(t, tt.toolCalls, tt.e.ToolCalls, "no input without cfg.Text")
			assert.Equal(t, tt.toolResult, tt.e.ToolResults, "no content without cfg.Text")
			if tt.role == schema.RoleAssistant {
				assert.Equal(t, m4dtimes.Provider, tt.e.Provider)
			}
		})
	}
}

func TestParser_TextOn(t *testing.T) {
	got := formattest.MustParse(t, m4dtimes.New(parse.Config{Text: true, Raw: true}), header, toolUse, toolResult, reply)
	assert.JSONEq(t, `{"query":"SELECT 1"}`, string(got[1].ToolCalls[0].Input))
	assert.Equal(t, "1", got[2].ToolResults[0].Content)
	assert.Equal(t, "Hai 3 stanze.", got[3].Text)
	assert.Equal(t, reply, string(got[3].Raw))
}

func TestParser_HeaderlessSession(t *testing.T) {
	tests := []struct {
		name, path, session, sender string
	}{
		{"UserIDStem", "/srv/bot/sessions/7756297856.jsonl", "7756297856", "7756297856"},
		{"NegativeStem", "sessions/-1001234567890.jsonl", "-1001234567890", "-1001234567890"},
		{"OtherStem", "sessions/alice.jsonl", "alice", ""},
		{"LeadingZeros", "sessions/007.jsonl", "007", "7"},
		{"Stream", "", "-", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := formattest.MustParse(t, m4dtimes.New(parse.Config{Path: tt.path}), userLine, reply)
			assert.Equal(t, tt.session, got[0].SessionID)
			assert.Equal(t, tt.sender, got[0].Sender)
			assert.Equal(t, "m4dtimes:"+tt.session+":c8d9e0f1", got[1].UsageKey)
		})
	}
}

func TestParser_RestartKeepsSession(t *testing.T) {
	// After a restart the SDK writes no header and drops the parentId.
	restarted := `{"type":"message","id":"99999999","timestamp":"2026-02-25T08:00:00Z","message":{"role":"user","content":[{"type":"text","text":"again"}]}}`
	got := formattest.MustParse(t, m4dtimes.New(parse.Config{Path: "sessions/7756297856.jsonl"}), header, userLine, reply, restarted)
	assert.Equal(t, "a1b2c3d4", got[3].SessionID)
	assert.Empty(t, got[3].ParentID)
	assert.Equal(t, "7756297856", got[3].Sender)
}

func TestParser_UsageKeyStable(t *testing.T) {
	// The same file read twice gives the same keys; distinct calls differ.
	a := formattest.MustParse(t, m4dtimes.New(parse.Config{Path: "x/7.jsonl"}), header, userLine, toolUse, toolResult, reply)
	b := formattest.MustParse(t, m4dtimes.New(parse.Config{Path: "y/7.jsonl"}), header, userLine, toolUse, toolResult, reply)
	assert.Equal(t, a[2].UsageKey, b[2].UsageKey)
	assert.Equal(t, a[4].UsageKey, b[4].UsageKey)
	assert.NotEqual(t, a[2].UsageKey, a[4].UsageKey)
}

func TestParser_NoAlias(t *testing.T) {
	got := formattest.RequireOwned(t, m4dtimes.New(parse.Config{Text: true, Raw: true}), jsonl.Line{Bytes: []byte(toolUse), Number: 1})
	require.Len(t, got, 1)
}
func TestParser_Errors(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		sentinel error
		at       string // the error is located at the first occurrence of this text
		entries  int
	}{
		{"NotObject", `[1]`, parse.ErrNotObject, `[1]`, 0},
		{"SecondNotObject", header + ` true`, parse.ErrNotObject, `true`, 1},
		{"Truncated", `{"type":"message","message":{"role":"us`, jsonl.ErrUnexpectedEnd, ``, 0},
		{"BadTimestamp", `{"type":"message","timestamp":"noon","message":{"role":"user","content":[]}}`, parse.ErrBadField, `"noon"`, 0},
		{"SecondMissingMessage", header + ` {"type":"message"}`, parse.ErrMissingField, `{"type":"message"}`, 1},
		{"MissingMessage", `{"type":"message","id":"00000001"}`, parse.ErrMissingField, `{`, 0},
		{"MissingRole", `{"type":"message","message":{"content":[]}}`, parse.ErrMissingField, `{"content"`, 0},
		{"ToolUseWithoutCall", `{"type":"message","message":{"role":"assistant","content":[{"type":"tool_use"}]}}`, parse.ErrMissingField, `{"type":"tool_use"}`, 0},
		// A bad token counter keeps its entry, without usage.
		{"TokensString", `{"type":"message","message":{"role":"assistant","usage":{"input_tokens":"1"}}}`, parse.ErrBadField, `"1"`, 1},
		{"TokensNegative", `{"type":"message","message":{"role":"assistant","usage":{"input_tokens":-1}}}`, parse.ErrImplausibleCount, `-1`, 1},
		{"TokensHuge", `{"type":"message","message":{"role":"assistant","usage":{"output_tokens":9223372036854775807}}}`, parse.ErrImplausibleCount, `9223`, 1},
		{"UserIDFloat", `{"type":"session","id":"00000001","userId":1.5}`, parse.ErrBadField, `1.5`, 0},
		{"UserIDOverflow", `{"type":"session","id":"00000001","userId":9223372036854775808}`, parse.ErrBadField, `9223`, 0},
		{"ContentString", `{"type":"message","message":{"role":"user","content":"hi"}}`, parse.ErrBadField, `"hi"`, 0},
		{"SyntaxInArguments", `{"type":"message","message":{"role":"assistant","content":[{"type":"tool_use","tool_call":{"arguments":{"a":tru}}}]}}`, jsonl.ErrSyntax, `tru}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := m4dtimes.New(parse.Config{Path: "sessions/7.jsonl"})
			got, err := p.Parse(nil, jsonl.Line{Bytes: []byte(tt.line), Offset: 1000, Number: 3})
			require.Error(t, err)
			assert.Len(t, got, tt.entries)
			var de *schema.DecodeError
			require.ErrorAs(t, err, &de)
			assert.True(t, errors.Is(err, tt.sentinel), "Parse(%q) = %v, want %v", tt.line, err, tt.sentinel)
			assert.Equal(t, "sessions/7.jsonl", de.Path)
			assert.Equal(t, int64(3), de.Line)
			want := int64(len(tt.line)) // truncated input: located at its end
			if tt.at != "" {
				want = int64(strings.Index(tt.line, tt.at))
			}
			if errors.Is(err, jsonl.ErrSyntax) {
				assert.GreaterOrEqual(t, de.Offset, 1000+want, "syntax errors point into the bad value")
			} else {
				assert.Equal(t, 1000+want, de.Offset)
			}

			// The parser stays usable.
			got, err = p.Parse(got[:0], jsonl.Line{Bytes: []byte(userLine), Number: 4})
			require.NoError(t, err)
			assert.Len(t, got, 1)
		})
	}
}

func TestParser_Format(t *testing.T) {
	assert.Equal(t, schema.FormatM4dtimes, m4dtimes.New(parse.Config{}).Format())
}
