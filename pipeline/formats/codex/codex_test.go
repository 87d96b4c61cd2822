package codex_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/codex"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

func TestParser_Format(t *testing.T) {
	assert.Equal(t, schema.FormatCodex, codex.New(parse.Config{}).Format())
}

// Every entry of every golden input satisfies the contract.
func TestParser_EntriesValid(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join("testdata", "*", "input.jsonl"))
	require.NoError(t, err)
	for _, path := range cases {
		name := filepath.Base(filepath.Dir(path))
		entries, _ := parseAll(t, parse.Config{Path: path, Text: true}, mustReadCase(t, name))
		for _, e := range entries {
			require.NoError(t, e.Validate(), "%s line %d", name, e.Line)
			if e.Usage != nil {
				assert.NotEmpty(t, e.UsageKey, "%s line %d", name, e.Line)
			}
		}
	}
}

func TestParser_ToolCallInput(t *testing.T) {
	tests := []struct {
		name      string
		arguments string // JSON text of the arguments field
		want      string // Input, "" for none
	}{
		{name: "Object", arguments: `"{\"cmd\":[\"ls\",\"-l\"]}"`, want: `{"cmd":["ls","-l"]}`},
		{name: "Array", arguments: `"[1,2]"`, want: `[1,2]`},
		{name: "Number", arguments: `"42"`, want: `42`},
		{name: "SpacesTrimmed", arguments: `" {\"a\":1}\n"`, want: `{"a":1}`},
		{name: "UnicodeEscape", arguments: `"{\"s\":\"caf\\u00e9\"}"`, want: `{"s":"caf\u00e9"}`},
		{name: "NotJSON", arguments: `"ls -l"`, want: `"ls -l"`},
		{name: "TwoValues", arguments: `"{} {}"`, want: `"{} {}"`},
		{name: "Truncated", arguments: `"{\"a\":"`, want: `"{\"a\":"`},
		{name: "Empty", arguments: `""`, want: `""`},
		{name: "ObjectNotString", arguments: `{"a":1}`, want: `{"a":1}`},
		{name: "Null", arguments: `null`, want: ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := `{"timestamp":"2025-10-01T10:00:00Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":` +
				tt.arguments + `,"call_id":"c1"}}` + "\n"
			entries := mustParse(t, parse.Config{Text: true}, []byte(line))
			require.Len(t, entries, 1)
			require.Len(t, entries[0].ToolCalls, 1)
			tc := entries[0].ToolCalls[0]
			assert.Equal(t, "c1", tc.ID)
			assert.Equal(t, "shell", tc.Name)
			assert.Equal(t, tt.want, string(tc.Input))
		})
	}
}

// Without Config.Text only the real user input keeps its text.
func TestParser_TextOff(t *testing.T) {
	entries := mustParse(t, parse.Config{}, mustReadCase(t, "tool-calls"))
	for _, e := range entries {
		assert.Empty(t, e.Text, "line %d", e.Line)
		for _, tc := range e.ToolCalls {
			assert.Nil(t, tc.Input, "line %d", e.Line)
			assert.NotEmpty(t, tc.ID)
		}
		for _, tr := range e.ToolResults {
			assert.Empty(t, tr.Content, "line %d", e.Line)
			assert.NotEmpty(t, tr.ToolCallID)
			assert.False(t, tr.IsError, "rollouts have no error flag")
		}
	}
	entries = mustParse(t, parse.Config{}, mustReadCase(t, "user-inputs"))
	var prompts []string
	for _, e := range entries {
		if e.Kind == schema.KindMessage && e.Role == schema.RoleUser && !e.Meta {
			prompts = append(prompts, e.Text)
		}
	}
	assert.Equal(t, []string{"look at this"}, prompts)
}

// Entries own their bytes: reusing the line buffer changes nothing.
func TestParser_NoAlias(t *testing.T) {
	data := mustReadCase(t, "tool-calls")
	formattest.RequireOwned(t, codex.New(parse.Config{Text: true, Raw: true}), formattest.Lines(t, data)...)
}
func TestParser_Raw(t *testing.T) {
	a := `{"timestamp":"2025-10-01T10:00:00Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}`
	b := `{"timestamp":"2025-10-01T10:00:01Z", "type":"x", "payload":{}}`
	entries := mustParse(t, parse.Config{Raw: true}, []byte(a+" "+b+"\n"))
	require.Len(t, entries, 2)
	assert.Equal(t, a, string(entries[0].Raw))
	assert.Equal(t, b, string(entries[1].Raw))
	assert.Equal(t, "L1", entries[0].EntryID)
	assert.Equal(t, "L1.1", entries[1].EntryID)
	assert.Equal(t, 1, entries[1].Object)

	entries = mustParse(t, parse.Config{}, []byte(a+"\n"))
	assert.Nil(t, entries[0].Raw)
}

func TestParser_Errors(t *testing.T) {
	const meta = `{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{"id":"s1"}}`
	tests := []struct {
		name        string
		line        string
		wantErr     error
		wantEntries int
		wantOffset  int64 // within the line
	}{
		{name: "Array", line: `[1]`, wantErr: parse.ErrNotObject},
		{name: "StringAfterObject", line: meta + ` "x"`, wantErr: parse.ErrNotObject, wantEntries: 1, wantOffset: int64(len(meta) + 1)},
		{name: "Truncated", line: `{"timestamp":"2025-10-01T10:00:00Z","type":"ev`, wantErr: jsonl.ErrUnexpectedEnd, wantOffset: 46},
		{name: "Garbage", line: `{"timestamp" 1}`, wantErr: jsonl.ErrSyntax, wantOffset: 13},
		{name: "BadTimestamp", line: `{"timestamp":"noon","type":"event_msg","payload":{"type":"task_started"}}`, wantErr: parse.ErrBadField, wantEntries: 1, wantOffset: 13},
		{name: "BadCounter", line: `{"timestamp":"2025-10-01T10:00:00Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":-5}}}}`, wantErr: parse.ErrImplausibleCount, wantEntries: 1, wantOffset: 131},
		{name: "HugeCounter", line: `{"timestamp":"2025-10-01T10:00:00Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":9223372036854775807}}}}`, wantErr: parse.ErrImplausibleCount, wantEntries: 1, wantOffset: 131},
		{name: "StringCounter", line: `{"timestamp":"2025-10-01T10:00:00Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"output_tokens":"5"}}}}`, wantErr: parse.ErrBadField, wantEntries: 1, wantOffset: 131},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := codex.New(parse.Config{Path: "r.jsonl"})
			line := jsonl.Line{Bytes: []byte(tt.line), Offset: 1000, Number: 7}
			entries, err := p.Parse(nil, line)
			require.ErrorIs(t, err, tt.wantErr)
			var de *schema.DecodeError
			require.True(t, errors.As(err, &de))
			assert.Equal(t, "r.jsonl", de.Path)
			assert.Equal(t, int64(7), de.Line)
			assert.Equal(t, 1000+tt.wantOffset, de.Offset)
			assert.Len(t, entries, tt.wantEntries)
			for _, e := range entries {
				assert.Nil(t, e.Usage)
			}

			// The parser stays usable.
			entries, err = p.Parse(nil, jsonl.Line{Bytes: []byte(meta), Offset: 2000, Number: 8})
			require.NoError(t, err)
			require.Len(t, entries, 1)
		})
	}
}

func TestParser_SessionID(t *testing.T) {
	const line = `{"timestamp":"2025-10-01T10:00:00Z","type":"event_msg","payload":{"type":"task_started"}}`
	tests := []struct {
		name string
		path string
		want string
	}{
		{name: "RolloutName", path: "/h/.codex/sessions/2026/02/23/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl", want: "019c8a4c-ed82-79a1-aa28-7738fc5ab61a"},
		{name: "OtherName", path: "/x/2026-05-12T08-00-00-parent.jsonl", want: "2026-05-12T08-00-00-parent"},
		{name: "RolloutWithoutUUID", path: "rollout-abc.jsonl", want: "rollout-abc"},
		{name: "SubagentRollout", path: "/h/.codex/sessions/2026/10/02/rollout-2026-10-02T09-00-07-019e1a2b-3c4d-7e5f-8a6b-7c8d9e0f1a2b_019e1a2b-5f60-7a71-8b82-93a4b5c6d7e8.jsonl", want: "019e1a2b-5f60-7a71-8b82-93a4b5c6d7e8"},
		{name: "NoPath", path: "", want: "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries := mustParse(t, parse.Config{Path: tt.path}, []byte(line+"\n"))
			require.Len(t, entries, 1)
			assert.Equal(t, tt.want, entries[0].SessionID)
		})
	}

	// The first session_meta names the session; a later one does not.
	data := strings.Join([]string{
		`{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{"id":"first","model_provider":"azure"}}`,
		`{"timestamp":"2025-10-01T10:00:01Z","type":"session_meta","payload":{"id":"second","model_provider":"openai"}}`,
		tokenLine("2025-10-01T10:00:02Z", 10, 0, 1, 0),
	}, "\n") + "\n"
	entries := mustParse(t, parse.Config{}, []byte(data))
	for _, e := range entries {
		assert.Equal(t, "first", e.SessionID)
	}
	assert.Equal(t, "azure", entries[2].Provider)
}
