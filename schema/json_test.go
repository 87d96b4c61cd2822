package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func fullEntry() Entry {
	cost := 0.0245
	return Entry{
		Format: FormatClaudeCode, Host: "laptop", Labels: map[string]string{"team": "infra", "cost_centre": "42", "a.b-c": "x \"y\" é"}, Path: "/p/s.jsonl", Offset: 1234, Line: 7, Object: 1,
		SessionID: "s1", EntryID: "u1", ParentID: "u0", ParentSessionID: "p1",
		TS:   time.Date(2026, 2, 11, 20, 36, 47, 925000000, time.UTC),
		Kind: KindMessage, Role: RoleAssistant, Subtype: "api_error", Text: "héllo \"world\"\n<tag> & 😀",
		Meta: true, Copy: true, Truncated: true, Model: "claude-opus-4-6", Provider: "anthropic", MessageID: "msg_1", RequestID: "req_1",
		Usage:    &Usage{Input: 3, Output: 441, CacheRead: 17842, CacheWrite: 8037, CacheWrite5m: 37, CacheWrite1h: 8000, Reasoning: 12, Speed: "fast"},
		UsageKey: "claude:msg_1:req_1", CostUSD: &cost, StopReason: "end_turn",
		ToolCalls:   []ToolCall{{ID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command":"ls -la"}`)}},
		ToolResults: []ToolResult{{ToolCallID: "toolu_1", IsError: true, Content: "exit 1"}},
		Attachments: []Attachment{{Filename: "a.png", MimeType: "image/png", Size: "1024"}, {MimeType: "application/pdf"}},
		Reaction:    &Reaction{MessageID: "m9", Emojis: []string{"👍", "🎉"}},
		Sender:      "alice@example.com", CWD: "/home/a", GitBranch: "main", AgentVersion: "2.1.39",
		Sidechain: true, Background: true, AgentID: "a881341", AgentType: "general-purpose", Slug: "modular-petting-thompson",
		Command: "/compact", CommandArgs: "keep tests", Title: "Refactor",
		Origin: &Origin{Provider: "telegram", Surface: "dm", ChatType: "direct", From: "bob"},
		Raw:    json.RawMessage(`{"type":"assistant"}`),
	}
}

func TestEntry_RoundTrip(t *testing.T) {
	tests := []struct {
		name string
		e    Entry
	}{
		{"Full", fullEntry()},
		{"Minimal", Entry{Format: FormatCodex, SessionID: "s", EntryID: "L1", Kind: KindEvent}},
		{"ZeroUsage", Entry{Format: FormatPi, SessionID: "s", EntryID: "e", Kind: KindMessage, Usage: &Usage{}}},
		{"EmptyEmojis", Entry{Format: FormatFluux, SessionID: "s", EntryID: "e", Kind: KindMessage, Reaction: &Reaction{MessageID: "x", Emojis: []string{}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.e.AppendJSON(nil)
			require.True(t, json.Valid(data), "%s", data)
			var got Entry
			require.NoError(t, UnmarshalEntry(data, &got))
			require.Equal(t, tc.e, got)
			// encoding/json reads the same thing.
			var std Entry
			require.NoError(t, json.Unmarshal(data, (*entryAlias)(&std)))
			require.Equal(t, tc.e, std)
			// Stable: re-encoding gives the same bytes.
			require.Equal(t, string(data), string(got.AppendJSON(nil)))
		})
	}
}

type entryAlias Entry

func TestEntry_CanonicalJSON(t *testing.T) {
	e := Entry{Format: FormatPi, Host: "h", Offset: 10, Line: 2, SessionID: "s", EntryID: "e1",
		TS: time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600)), Kind: KindMessage, Role: RoleUser, Text: "<b>"}
	require.Equal(t,
		`{"format":"pi","host":"h","offset":10,"line":2,"session_id":"s","entry_id":"e1","ts":"2026-01-02T02:04:05.0000006Z","kind":"message","role":"user","text":"<b>"}`,
		string(e.AppendJSON(nil)))
	// encoding/json uses MarshalJSON (and HTML-escapes unless told not to).
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(e))
	require.Equal(t, string(e.AppendJSON(nil))+"\n", buf.String())
}

// Labels are written with their keys in byte order, whatever the map's
// iteration order, and left out when empty; they are not part of the key.
func TestEntry_Labels(t *testing.T) {
	e := Entry{Format: FormatPi, Host: "h", SessionID: "s", EntryID: "e1", Kind: KindMessage,
		Labels: map[string]string{"zone": "eu", "team": "infra", "cost_centre": "42"}}
	want := `{"format":"pi","host":"h","labels":{"cost_centre":"42","team":"infra","zone":"eu"},"offset":0,"line":0,"session_id":"s","entry_id":"e1","kind":"message"}`
	for range 20 {
		require.Equal(t, want, string(e.AppendJSON(nil)))
	}
	var got Entry
	require.NoError(t, UnmarshalEntry([]byte(want), &got))
	require.Equal(t, e, got)
	key := e.Key()
	e.Labels = map[string]string{}
	require.NotContains(t, string(e.AppendJSON(nil)), "labels")
	require.Equal(t, key, e.Key(), "labels are host metadata, not part of the key")
}

func TestParseLabels(t *testing.T) {
	m := map[string]string{}
	require.NoError(t, ParseLabels(m, " team=infra, cost_centre=42,,zone=eu-west.1 "))
	require.Equal(t, map[string]string{"team": "infra", "cost_centre": "42", "zone": "eu-west.1"}, m)
	require.NoError(t, ValidateLabels(m))
	for _, bad := range []string{"team", "=x", "team=", "Team=x", "te am=x", "team=a\x01b", "k=" + strings.Repeat("v", MaxLabelValueBytes+1),
		strings.Repeat("k", MaxLabelKeyBytes+1) + "=v", "team=a,team=b", "k=\xff"} {
		err := ParseLabels(map[string]string{}, bad)
		require.ErrorIs(t, err, ErrInvalidLabel, "%q", bad)
	}
	many := map[string]string{}
	for i := range MaxLabels {
		many[fmt.Sprint("k", i)] = "v"
	}
	require.NoError(t, ValidateLabels(many))
	require.ErrorIs(t, ParseLabels(many, "one=more"), ErrInvalidLabel)
	many["one"] = "more"
	require.ErrorIs(t, ValidateLabels(many), ErrInvalidLabel)
	require.ErrorContains(t, ValidateLabels(map[string]string{"b": "", "a": ""}), "a: empty value", "the first bad label in key order")
}

func TestEntry_InvalidUTF8Text(t *testing.T) {
	e := Entry{Format: FormatPi, SessionID: "s", EntryID: "e", Kind: KindMessage, Text: "a\xffb"}
	data := e.AppendJSON(nil)
	require.True(t, json.Valid(data))
	var got Entry
	require.NoError(t, UnmarshalEntry(data, &got))
	require.Equal(t, "a\ufffdb", got.Text)
}

func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{0, 1, 0.1, 0.024485299999999998, 1e-7, 1.5e-9, 123456789, 1e21, -2.5} {
		want, err := json.Marshal(f)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendFloat(nil, f)), "%v", f)
	}
	require.Equal(t, "0", string(appendFloat(nil, math.NaN())))
}

func TestEntry_Key(t *testing.T) {
	e := fullEntry()
	e.AgentID, e.Sidechain = "", false // a main-transcript line
	require.Equal(t, "claude-code:laptop:s1:u1", e.Key())
	require.Equal(t, e.Key(), string(e.AppendKey(nil)))

	// A compaction file's replay of the same record is a record of its
	// own: the stream must not drop it as a duplicate of the main line.
	replay := e
	replay.AgentID, replay.Sidechain = "acompact-fffbd0", true
	require.Equal(t, "claude-code:laptop:s1:u1:acompact-fffbd0", replay.Key())
	require.NotEqual(t, e.Key(), replay.Key())
	require.Equal(t, replay.Key(), string(replay.AppendKey(nil)))
}

func TestEntry_Validate(t *testing.T) {
	e := fullEntry()
	require.NoError(t, e.Validate())
	for _, mut := range []func(*Entry){
		func(e *Entry) { e.Format = "nope" },
		func(e *Entry) { e.Kind = "nope" },
		func(e *Entry) { e.Role = "nope" },
		func(e *Entry) { e.SessionID = "" },
		func(e *Entry) { e.EntryID = "" },
	} {
		bad := fullEntry()
		mut(&bad)
		require.ErrorIs(t, bad.Validate(), ErrInvalidEntry)
	}
}

func TestDecodeError(t *testing.T) {
	err := &DecodeError{Path: "a/b.jsonl", Line: 3, Offset: 120, Err: ErrInvalidEntry}
	require.Equal(t, "a/b.jsonl:3: offset 120: schema: invalid entry", err.Error())
	require.ErrorIs(t, err, ErrInvalidEntry)
	require.Equal(t, "offset 5", (&DecodeError{Offset: 5}).Error())
}

func BenchmarkEntry_AppendJSON(b *testing.B) {
	e := fullEntry()
	buf := e.AppendJSON(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = e.AppendJSON(buf[:0])
	}
}

func ExampleEntry_AppendJSON() {
	e := Entry{Format: FormatClaudeCode, SessionID: "s1", EntryID: "u1", Kind: KindMessage, Role: RoleUser, Text: "hi"}
	fmt.Println(string(e.AppendJSON(nil)))
	// Output:
	// {"format":"claude-code","offset":0,"line":0,"session_id":"s1","entry_id":"u1","kind":"message","role":"user","text":"hi"}
}
