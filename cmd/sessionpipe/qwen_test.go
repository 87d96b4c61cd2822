package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/ccusage"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

// qwenSession is the session golden case of pipeline/formats/qwen
// (written for the tests in the shape Qwen Code records).
const qwenSession = "../../pipeline/formats/qwen/testdata/session/input.jsonl"

// `sessionpipe sessions` on the Qwen Code fixture gives the figures
// computed by hand from its lines: four calls; input = prompt − cached
// (12000−8000, 12500−12000, 13000−12500, 2400), output = candidates +
// thoughts where the total adds them (300+120), candidates alone where
// the total shows they hold the thoughts (200), 50 and 20; the injected
// notification is no input; the telemetry record's counts are not a call.
func TestSessions_Qwen(t *testing.T) {
	got := ours(t, qwenSession)
	require.Len(t, got, 1)
	s := got[0]
	require.Equal(t, schema.FormatQwen, s.Format)
	require.Equal(t, "7c1f2a4e-0b6d-4c1e-9a51-2f3d8e6b1a90", s.SessionID)
	require.Equal(t, [10]int64{2, 2, 4, 4, 2, 1, 7_400, 690, 32_500, 1},
		[10]int64{s.Turns, s.UserMessages, s.AssistantMessages, s.APICalls, s.ToolCalls, s.ToolErrors,
			s.InputTokens, s.OutputTokens, s.CacheReadTokens, s.Compactions},
		"turns, user, assistant, calls, tool calls, tool errors, input, output, cache read, compactions")
	require.Equal(t, "Empty cart checkout", s.Title)
	require.Zero(t, s.UnpricedCalls, "qwen3-coder-plus is priced (models.dev)")
	require.Positive(t, s.CostUSD)
}

// ccusage 20.0.24 reads the same calls but counts promptTokenCount whole
// as input and cachedContentTokenCount as cache read as well: its input
// holds the cached tokens a second time (32500). Its output leaves out
// the thoughts written beside the candidates (120; it adds them to the
// cost only), and its cost, with the cached tokens priced twice, is
// higher. Cache reads agree.
func TestSessions_QwenAgainstCcusage(t *testing.T) {
	files := []string{qwenSession}
	mine := fromSessions(ours(t, files...))
	theirs := fromCcusage(ccusage.Totals(t, ccusage.Qwen, ccusage.Layout(t, ccusage.Qwen, files)))
	require.Equal(t, mine.CacheRead, theirs.CacheRead, "cache read")
	require.Equal(t, mine.Input+mine.CacheRead, theirs.Input, "ccusage's input holds the cached tokens again")
	require.Equal(t, mine.Output-120, theirs.Output, "ccusage's output leaves the thoughts out")
	require.Greater(t, theirs.CostUSD, mine.CostUSD, "the cached tokens priced twice")
}

// /branch copies every record into the new session (its sessionId
// rewritten, uuid and timestamp kept, forkedFrom naming the source); the
// branch then goes on. The copied calls and messages count once, in the
// source (created first), the branch's own call in the branch.
func TestSessions_QwenBranchCountsOnce(t *testing.T) {
	data, err := os.ReadFile(qwenSession)
	require.NoError(t, err)
	dir := t.TempDir()
	const src, branch = "7c1f2a4e-0b6d-4c1e-9a51-2f3d8e6b1a90", "0d9e8f7a-1b2c-4d3e-8f4a-5b6c7d8e9f00"
	var copied []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &rec))
		rec["sessionId"] = branch
		rec["forkedFrom"] = map[string]any{"sessionId": src, "messageUuid": rec["uuid"]}
		b, err := json.Marshal(rec)
		require.NoError(t, err)
		copied = append(copied, string(b))
	}
	copied = append(copied,
		`{"uuid":"b-u","parentUuid":"ct-1","sessionId":"`+branch+`","timestamp":"2026-11-02T10:00:00.000Z","type":"user","provenance":"real_user","message":{"role":"user","parts":[{"text":"Try another fix"}]}}`,
		`{"uuid":"b-a","parentUuid":"b-u","sessionId":"`+branch+`","timestamp":"2026-11-02T10:00:03.000Z","type":"assistant","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"ok"}]},"usageMetadata":{"promptTokenCount":500,"candidatesTokenCount":5,"totalTokenCount":505}}`)
	require.NoError(t, os.WriteFile(filepath.Join(dir, src+".jsonl"), data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, branch+".jsonl"), []byte(strings.Join(copied, "\n")+"\n"), 0o644))
	got := map[string]index.Session{}
	for _, s := range ours(t, dir) {
		got[s.SessionID] = s
	}
	require.Equal(t, [4]int64{4, 2, 7_400, 690}, [4]int64{got[src].APICalls, got[src].UserMessages, got[src].InputTokens, got[src].OutputTokens})
	require.Equal(t, [4]int64{1, 1, 500, 5}, [4]int64{got[branch].APICalls, got[branch].UserMessages, got[branch].InputTokens, got[branch].OutputTokens})
}
