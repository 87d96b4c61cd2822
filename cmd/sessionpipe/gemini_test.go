package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/ccusage"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

// geminiHome is a Gemini CLI home (~/.gemini) with one session and its
// subagent: the session golden case of pipeline/formats/gemini as
// Gemini CLI lays it out.
const geminiHome = "../../pipeline/formats/gemini/testdata/home/.gemini"

// `sessionpipe sessions` on the Gemini CLI fixture gives the figures
// computed by hand from its lines (pipeline/formats/gemini/testdata/
// session): four calls (a message written three times with its tokens
// and tool calls arriving, and re-sent once more in a $set, counts
// once), input = input − cached + tool, output = output + thoughts; the
// injected <session_context> and the $set's summary turn are not user
// input; the subagent is a session of its own naming its parent.
func TestSessions_GeminiCLI(t *testing.T) {
	got := map[string]index.Session{}
	for _, s := range ours(t, geminiHome) {
		got[s.SessionID] = s
	}
	require.Len(t, got, 2)
	parentS := got["5b0e8c52-3f1a-4d7e-9c41-2a6f0b8d1e37"]
	require.Equal(t, schema.FormatGeminiCLI, parentS.Format)
	require.Equal(t, [10]int64{3, 3, 4, 4, 2, 1, 21_130, 950, 31_000, 0},
		[10]int64{parentS.Turns, parentS.UserMessages, parentS.AssistantMessages, parentS.APICalls, parentS.ToolCalls, parentS.ToolErrors,
			parentS.InputTokens, parentS.OutputTokens, parentS.CacheReadTokens, parentS.CacheWriteTokens},
		"turns, user, assistant, calls, tool calls, tool errors, input, output, cache read, cache write")
	require.Equal(t, int64(53_080), parentS.TotalTokens, "the sum of the records' totals")
	require.Equal(t, "List and read Go files", parentS.Title)
	require.Zero(t, parentS.UnpricedCalls)

	sub := got["c4f1a9d2-8b7e-4f6a-b3c2-1d0e9f8a7b6c"]
	require.Equal(t, parentS.SessionID, sub.ParentSessionID)
	require.Equal(t, [3]int64{1, 5_000, 210}, [3]int64{sub.APICalls, sub.InputTokens, sub.OutputTokens})
}

// ccusage 20.0.24 on the same home gives the same input, cache read,
// total tokens and cost. Its output leaves the thoughts out (it prices
// them as output and counts them in the total, apart), ours holds them
// (reasoning is part of output): the difference is the thoughts, 360.
func TestSessions_GeminiCLISameAsCcusage(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(geminiHome, "tmp", "*", "chats", "*.jsonl"))
	require.NoError(t, err)
	subs, err := filepath.Glob(filepath.Join(geminiHome, "tmp", "*", "chats", "*", "*.jsonl"))
	require.NoError(t, err)
	files = append(files, subs...)
	require.Len(t, files, 2)
	rep := ccusage.MustRun(t, ccusage.Gemini, ccusage.Layout(t, ccusage.Gemini, files))
	theirs := fromCcusage(rep.Totals)
	all := ours(t, files...)
	got := fromSessions(all)
	var total int64
	for _, s := range all {
		total += s.TotalTokens
	}
	require.Equal(t, rep.Totals.Total, total, "total tokens")
	const thoughts = 200 + 40 + 120
	require.Equal(t, theirs.Output+thoughts, got.Output, "output: ours includes the thoughts")
	got.Output = theirs.Output
	requireSame(t, theirs, got, "Gemini CLI")
}
