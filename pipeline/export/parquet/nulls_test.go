package parquet_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// optionalColumns are the expressions of every optional column that an
// entry's empty string, nil map or absent list element leaves NULL, with
// the entry field that fills it.
var optionalColumns = []struct {
	expr string
	set  func(e *schema.Entry)
}{
	{"path", func(e *schema.Entry) { e.Path = "/p" }},
	{"parent_id", func(e *schema.Entry) { e.ParentID = "pid" }},
	{"parent_session_id", func(e *schema.Entry) { e.ParentSessionID = "psid" }},
	{"role", func(e *schema.Entry) { e.Role = schema.RoleAssistant }},
	{"subtype", func(e *schema.Entry) { e.Subtype = "st" }},
	{"text", func(e *schema.Entry) { e.Text = "text" }},
	{"model", func(e *schema.Entry) { e.Model = "m" }},
	{"provider", func(e *schema.Entry) { e.Provider = "pr" }},
	{"message_id", func(e *schema.Entry) { e.MessageID = "mid" }},
	{"request_id", func(e *schema.Entry) { e.RequestID = "rid" }},
	{"usage_key", func(e *schema.Entry) { e.UsageKey = "uk" }},
	{"stop_reason", func(e *schema.Entry) { e.StopReason = "end_turn" }},
	{"sender", func(e *schema.Entry) { e.Sender = "bob" }},
	{"cwd", func(e *schema.Entry) { e.CWD = "/c" }},
	{"git_branch", func(e *schema.Entry) { e.GitBranch = "main" }},
	{"agent_version", func(e *schema.Entry) { e.AgentVersion = "1" }},
	{"agent_id", func(e *schema.Entry) { e.AgentID = "a" }},
	{"agent_type", func(e *schema.Entry) { e.AgentType = "t" }},
	{"slug", func(e *schema.Entry) { e.Slug = "s" }},
	{"command", func(e *schema.Entry) { e.Command = "/c" }},
	{"command_args", func(e *schema.Entry) { e.CommandArgs = "x" }},
	{"title", func(e *schema.Entry) { e.Title = "ti" }},
	{"raw", func(e *schema.Entry) { e.Raw = json.RawMessage(`{}`) }},
	{"labels", func(e *schema.Entry) { e.Labels = map[string]string{"team": "infra"} }},
	{"usage.speed", func(e *schema.Entry) { e.Usage.Speed = "fast" }},
	{"origin.provider", func(e *schema.Entry) { e.Origin.Provider = "telegram" }},
	{"origin.surface", func(e *schema.Entry) { e.Origin.Surface = "dm" }},
	{"origin.chat_type", func(e *schema.Entry) { e.Origin.ChatType = "direct" }},
	{"origin.from", func(e *schema.Entry) { e.Origin.From = "x" }},
	{"origin.label", func(e *schema.Entry) { e.Origin.Label = "l" }},
	{"tool_calls[1].input", func(e *schema.Entry) { e.ToolCalls[0].Input = json.RawMessage(`{"a":1}`) }},
	{"tool_results[1].content", func(e *schema.Entry) { e.ToolResults[0].Content = "out" }},
	{"attachments[1].filename", func(e *schema.Entry) { e.Attachments[0].Filename = "a.png" }},
	{"attachments[1].mime_type", func(e *schema.Entry) { e.Attachments[0].MimeType = "image/png" }},
	{"attachments[1].size", func(e *schema.Entry) { e.Attachments[0].Size = "1KB" }},
}

// TestWriter_EmptyIsNullWhateverItsNeighbours: an empty optional value is
// NULL in every column, whatever the values around it in the file. The
// Parquet writer finds the NULLs of a column 64 rows at a time, and
// parquet-go v0.32.0 writes the zero value of a non-pointer field (""
// where NULL is meant) when a word of 64 rows holds y NULLs, then y
// values, then NULLs to its end (its range scan compares the rest of the
// word with (1<<y)-1): the rows are built with each of those patterns
// (y = 1..31), then with random ones, in each column at once. Found on
// the shipped Codex samples, where two last lines of a file in a shared
// part gained an empty role instead of NULL depending on how the files fell
// into parts.
func TestWriter_EmptyIsNullWhateverItsNeighbours(t *testing.T) {
	var set [][]bool // set[i][c]: row i has column c
	for y := 1; y < 32; y++ {
		for i := range 64 {
			on := i >= y && i < 2*y
			row := make([]bool, len(optionalColumns))
			for c := range row {
				row[c] = on
			}
			set = append(set, row)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		row := make([]bool, len(optionalColumns))
		for c := range row {
			row[c] = rng.IntN(3) == 0
		}
		set = append(set, row)
	}
	ts := time.Date(2026, 2, 23, 12, 0, 0, 0, time.UTC)
	entries := make([]schema.Entry, len(set))
	for i, row := range set {
		e := &entries[i]
		*e = schema.Entry{Format: schema.FormatCodex, Host: "h", SessionID: "s", EntryID: fmt.Sprint(i), TS: ts,
			Kind: schema.KindEvent, Usage: &schema.Usage{Input: 1}, Origin: &schema.Origin{},
			ToolCalls: []schema.ToolCall{{ID: "c", Name: "n"}}, ToolResults: []schema.ToolResult{{ToolCallID: "c"}},
			Attachments: []schema.Attachment{{}}}
		for c, on := range row {
			if on {
				optionalColumns[c].set(e)
			}
		}
	}

	dir := t.TempDir()
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir}), entries)

	var exprs []string
	for _, c := range optionalColumns {
		exprs = append(exprs, c.expr+" IS NOT NULL")
	}
	rows, err := openDuckDB(t).Query(`SELECT ` + strings.Join(exprs, ", ") + ` FROM ` + glob(dir) + ` ORDER BY seq`)
	require.NoError(t, err)
	defer rows.Close()
	i := 0
	for ; rows.Next(); i++ {
		got := make([]bool, len(optionalColumns))
		ptrs := make([]any, len(got))
		for c := range got {
			ptrs[c] = &got[c]
		}
		require.NoError(t, rows.Scan(ptrs...))
		for c := range got {
			require.Equal(t, set[i][c], got[c], "row %d (block of y=%d, row %d of it): %s IS NOT NULL", i, i/64+1, i%64, optionalColumns[c].expr)
		}
	}
	require.NoError(t, rows.Err())
	require.Equal(t, len(set), i)
}
