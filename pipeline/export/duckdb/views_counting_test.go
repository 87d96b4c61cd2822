package duckdb_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// TestDuckDBInit_CountingRules builds the Claude Code shapes of the
// counting rules and checks the views count as the aggregator does:
// Claude Code's own notices (model "<synthetic>", as the parser wrote
// them before it made them events) are neither assistant messages nor
// replies that end a turn; only the main transcript's compactions count;
// a background session's replay of its original's chain takes nothing
// from the original, even when the original goes on longer.
func TestDuckDBInit_CountingRules(t *testing.T) {
	t0 := time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var entries []schema.Entry
	add := func(e schema.Entry) {
		e.Format, e.Host = schema.FormatClaudeCode, "h"
		if e.Path == "" {
			e.Path = "/p/" + e.SessionID + ".jsonl"
		}
		e.Line = int64(len(entries) + 1)
		if e.Kind == "" {
			e.Kind = schema.KindMessage
		}
		if e.Usage != nil {
			e.Model, e.MessageID = "claude-opus-4-6", e.EntryID+"-msg"
			e.UsageKey = "claude:" + e.MessageID
		}
		entries = append(entries, e)
	}
	usage := &schema.Usage{Input: 10, Output: 20, CacheWrite: 3685}
	// A notice between two inputs: one turn, one assistant message.
	add(schema.Entry{SessionID: "s", EntryID: "u1", Role: schema.RoleUser, Text: "fix", TS: at(0)})
	add(schema.Entry{SessionID: "s", EntryID: "n1", Role: schema.RoleAssistant, Model: "<synthetic>", MessageID: "n1", TS: at(1)})
	add(schema.Entry{SessionID: "s", EntryID: "u2", Role: schema.RoleUser, Text: "fix, please", TS: at(2)})
	add(schema.Entry{SessionID: "s", EntryID: "a1", Role: schema.RoleAssistant, TS: at(3), Usage: usage})
	// Compactions: the main transcript's counts; a subagent's own, the
	// boundary replayed in a compaction copy and a microcompaction do not.
	add(schema.Entry{SessionID: "s", EntryID: "cb1", Kind: schema.KindCompaction, Role: schema.RoleSystem, TS: at(4)})
	add(schema.Entry{SessionID: "s", EntryID: "mc1", Kind: schema.KindEvent, Role: schema.RoleSystem, Subtype: "microcompact_boundary", TS: at(5)})
	add(schema.Entry{SessionID: "s", EntryID: "cb1", Kind: schema.KindCompaction, Role: schema.RoleSystem, TS: at(4),
		Sidechain: true, AgentID: "acompact-1", Path: "/p/s/subagents/agent-acompact-1.jsonl"})
	add(schema.Entry{SessionID: "s", EntryID: "sb1", Kind: schema.KindCompaction, Role: schema.RoleSystem, TS: at(6),
		Sidechain: true, AgentID: "a1", Path: "/p/s/subagents/agent-a1.jsonl"})
	add(schema.Entry{SessionID: "s", EntryID: "sb2", Kind: schema.KindCompaction, Role: schema.RoleSystem, TS: at(6),
		AgentID: "a1", Path: "/p/s/subagents/agent-a1.jsonl"})
	// A session made of a notice only holds no conversation.
	add(schema.Entry{SessionID: "alone", EntryID: "n2", Role: schema.RoleAssistant, Model: "<synthetic>", MessageID: "n2", TS: at(7)})
	// A background copy replays the original's first exchange; the
	// original goes on longer than the copy.
	for _, sid := range []string{"orig", "bg"} {
		add(schema.Entry{SessionID: sid, EntryID: "ou1", Role: schema.RoleUser, Text: "plan it", TS: at(10), Background: sid == "bg"})
		add(schema.Entry{SessionID: sid, EntryID: "oa1", Role: schema.RoleAssistant, TS: at(11), Usage: usage, Background: sid == "bg"})
	}
	add(schema.Entry{SessionID: "bg", EntryID: "ba2", Role: schema.RoleAssistant, TS: at(12), Usage: usage, Background: true})
	add(schema.Entry{SessionID: "orig", EntryID: "oa2", Role: schema.RoleAssistant, TS: at(20), Usage: usage})

	want := goSessions(entries, price.Default())
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckDBInit(dir))
	requireSameSessions(t, want, viewSessions(t, db))

	got := map[string]sessionRow{}
	for _, r := range viewSessions(t, db) {
		got[r.SessionID] = r
	}
	require.NotContains(t, got, "alone")
	s := got["s"]
	require.Equal(t, [4]int64{1, 2, 1, 1}, [4]int64{s.Turns, s.UserMessages, s.AssistantMessages, s.Compactions},
		"turns, user messages, assistant messages, compactions")
	require.Equal(t, [3]int64{2, 1, 2}, [3]int64{got["orig"].APICalls, got["orig"].UserMessages, got["orig"].AssistantMessages})
	require.Equal(t, [3]int64{1, 0, 1}, [3]int64{got["bg"].APICalls, got["bg"].UserMessages, got["bg"].AssistantMessages})
}

// TestDuckDBInit_ReappendedHistory: a second /compact re-appends earlier
// lines to the same file with their uuids and timestamps. The views read
// each such line as the occurrence it is, at its own line, as the Go
// aggregator does (they read one row per key and file before): each fact
// counts once, and a re-appended block that ends with a user input is
// followed by an input that starts no turn of its own in either.
func TestDuckDBInit_ReappendedHistory(t *testing.T) {
	t0 := time.Date(2026, 6, 3, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var entries []schema.Entry
	add := func(e schema.Entry) {
		e.Format, e.Host, e.SessionID, e.Path = schema.FormatClaudeCode, "h", "s", "/p/s.jsonl"
		e.Line = int64(len(entries) + 1)
		if e.Kind == "" {
			e.Kind = schema.KindMessage
		}
		if e.Role == schema.RoleAssistant {
			e.Model, e.MessageID = "claude-opus-4-6", e.EntryID+"-msg"
			e.Usage, e.UsageKey = &schema.Usage{Input: 10, Output: 20}, "claude:"+e.EntryID+"-msg"
		}
		entries = append(entries, e)
	}
	add(schema.Entry{EntryID: "u1", Role: schema.RoleUser, Text: "one", TS: at(0)})
	add(schema.Entry{EntryID: "a1", Role: schema.RoleAssistant, TS: at(1)})
	add(schema.Entry{EntryID: "u2", Role: schema.RoleUser, Text: "two", TS: at(2)})
	add(schema.Entry{EntryID: "a2", Role: schema.RoleAssistant, TS: at(2)})
	add(schema.Entry{EntryID: "cb", Kind: schema.KindCompaction, Role: schema.RoleSystem, TS: at(3)})
	add(schema.Entry{EntryID: "a1", Role: schema.RoleAssistant, TS: at(1)}) // re-appended
	add(schema.Entry{EntryID: "u2", Role: schema.RoleUser, Text: "two", TS: at(2)})
	add(schema.Entry{EntryID: "u3", Role: schema.RoleUser, Text: "three", TS: at(4)})
	add(schema.Entry{EntryID: "a3", Role: schema.RoleAssistant, TS: at(5)})

	want := goSessions(entries, price.Default())
	require.Len(t, want, 1)
	require.Equal(t, [5]int64{2, 3, 3, 3, 1},
		[5]int64{want[0].Turns, want[0].UserMessages, want[0].APICalls, want[0].AssistantMessages, want[0].Compactions})
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckDBInit(dir))
	requireSameSessions(t, want, viewSessions(t, db))
}

// TestDuckDBInit_OmittedToolCalls: an entry too large for a message
// leaves tool calls out and counts them (bus.FitEntryMsg); the views
// count them as the aggregator does, in sessions whose files hold the
// column, and over a file written before it existed (read as 0).
func TestDuckDBInit_OmittedToolCalls(t *testing.T) {
	t0 := time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)
	entries := []schema.Entry{
		{Format: schema.FormatClaudeCode, Host: "h", Path: "/p/s.jsonl", Line: 1, SessionID: "s", EntryID: "u1",
			Kind: schema.KindMessage, Role: schema.RoleUser, Text: "go", TS: t0},
		{Format: schema.FormatClaudeCode, Host: "h", Path: "/p/s.jsonl", Line: 2, SessionID: "s", EntryID: "a1",
			Kind: schema.KindMessage, Role: schema.RoleAssistant, TS: t0.Add(time.Second), Truncated: true,
			ToolCalls: []schema.ToolCall{{ID: "t1", Name: "Bash"}}, ToolCallsOmitted: 3, ToolResultsOmitted: 2},
		// Only omitted calls: still an entry that counts.
		{Format: schema.FormatClaudeCode, Host: "h", Path: "/p/s.jsonl", Line: 3, SessionID: "s", EntryID: "a2",
			Kind: schema.KindMessage, Role: schema.RoleAssistant, TS: t0.Add(2 * time.Second), Truncated: true, ToolCallsOmitted: 2},
	}
	want := goSessions(entries, price.Default())
	require.Len(t, want, 1)
	require.Equal(t, int64(6), want[0].ToolCalls)
	dir := t.TempDir()
	exportTo(t, dir, entries, 1)
	db := openViews(t, duckDBInit(dir))
	requireSameSessions(t, want, viewSessions(t, db))
}
