package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/ccusage"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

// kimiCases are the Kimi CLI golden cases of pipeline/formats/kimi
// (written for the tests in the shape Kimi CLI records).
const kimiCases = "../../pipeline/formats/kimi/testdata"

// kimiHome lays the turns case and its subagent's log out as Kimi CLI
// does under ~/.kimi, and returns the root.
func kimiHome(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	session := filepath.Join(root, "sessions", "3f2a9c", "sess-1")
	for from, to := range map[string]string{
		"turns/input.jsonl":    filepath.Join(session, "wire.jsonl"),
		"subagent/input.jsonl": filepath.Join(session, "subagents", "a7f3c2", "wire.jsonl"),
	} {
		data, err := os.ReadFile(filepath.Join(kimiCases, from))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
		require.NoError(t, os.WriteFile(to, data, 0o644))
	}
	return root
}

// `sessionpipe sessions` on a Kimi CLI home gives the figures computed by
// hand from its lines: five calls, the four steps of the session and the
// subagent's one (in its own log and forwarded to the parent's: once),
// input = Σ input_other (2100+1500+300+400 + 800), output 150+60+90+30
// + 40, cache reads 9000+11000+12500, cache writes 2000; two turns, the
// subagent's prompt no input of the session's; four tool calls (the
// subagent's once), one failed; one compaction. The model is not in the
// log: kimi-for-coding (a subscription), visibly unpriced.
func TestSessions_Kimi(t *testing.T) {
	got := ours(t, kimiHome(t))
	require.Len(t, got, 1)
	s := got[0]
	require.Equal(t, schema.FormatKimi, s.Format)
	require.Equal(t, "sess-1", s.SessionID)
	require.Equal(t, [12]int64{2, 2, 4, 5, 4, 1, 5_100, 370, 32_500, 2_000, 1, 1},
		[12]int64{s.Turns, s.UserMessages, s.AssistantMessages, s.APICalls, s.ToolCalls, s.ToolErrors,
			s.InputTokens, s.OutputTokens, s.CacheReadTokens, s.CacheWriteTokens, s.Compactions, s.Subagents},
		"turns, user, assistant, calls, tool calls, tool errors, input, output, cache read, cache write, compactions, subagents")
	require.Equal(t, int64(5), s.UnpricedCalls)
	require.Equal(t, []string{"kimi-for-coding"}, s.UnpricedModels)
}

// ccusage 20.0.24 reads the same calls: the session's StatusUpdate
// records and the subagent's own log (as a session of its own, named by
// its directory; it skips the SubagentEvent copy), with the same tokens.
// It prices kimi-for-coding as Moonshot's kimi-k2.5 before
// 2026-04-20T15:28:10.072Z and kimi-k2.6 from then on; a price file
// saying the same gives its cost to the cent.
func TestSessions_KimiSameAsCcusage(t *testing.T) {
	root := kimiHome(t)
	rep := ccusage.MustRun(t, ccusage.Kimi, root)
	theirs := fromCcusage(rep.Totals)
	require.Len(t, rep.Sessions, 2, "ccusage lists the subagent apart")

	file := filepath.Join(t.TempDir(), "prices.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"kimi-for-coding": {
		"input_cost_per_token": 9.5e-7, "output_cost_per_token": 4e-6, "cache_read_input_token_cost": 1.6e-7,
		"periods": [{"valid_until": "2026-04-20T15:28:10.072Z", "input_cost_per_token": 6e-7, "output_cost_per_token": 3e-6, "cache_read_input_token_cost": 1e-7}]}}`), 0o644))
	code, stdout, stderr := runCommand(t, "sessions", "-q", "--json", "--prices", file, root)
	require.Equal(t, exitOK, code, stderr)
	var all []index.Session
	require.NoError(t, json.Unmarshal([]byte(stdout), &all))
	require.Len(t, all, 1)
	require.Zero(t, all[0].UnpricedCalls)
	requireSame(t, theirs, fromSessions(all), "Kimi CLI")
}

// A fork (/fork without a turn, kimi vis) copies its source's wire lines
// unchanged into a new session, which then goes on: the copied calls
// count once (in the source, created first), the fork's own call in the
// fork.
func TestSessions_KimiForkCountsOnce(t *testing.T) {
	root := kimiHome(t)
	src, err := os.ReadFile(filepath.Join(kimiCases, "turns", "input.jsonl"))
	require.NoError(t, err)
	fork := filepath.Join(root, "sessions", "3f2a9c", "sess-2", "wire.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(fork), 0o755))
	own := `{"timestamp": 1778320000.0, "message": {"type": "TurnBegin", "payload": {"user_input": "and now?"}}}` + "\n" +
		`{"timestamp": 1778320001.0, "message": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": 7, "output": 3, "input_cache_read": 0, "input_cache_creation": 0}, "message_id": "chatcmpl-f1"}}}` + "\n"
	require.NoError(t, os.WriteFile(fork, append(src, own...), 0o644))
	got := map[string]index.Session{}
	for _, s := range ours(t, root) {
		got[s.SessionID] = s
	}
	require.Equal(t, [3]int64{5, 5_100, 370}, [3]int64{got["sess-1"].APICalls, got["sess-1"].InputTokens, got["sess-1"].OutputTokens})
	require.Equal(t, [3]int64{1, 7, 3}, [3]int64{got["sess-2"].APICalls, got["sess-2"].InputTokens, got["sess-2"].OutputTokens})
}
