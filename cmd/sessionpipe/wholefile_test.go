package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/ccusage"
)

// The whole-file fixtures of pipeline/formats/amp, droid, gemini and codebuff
// (generated from the shapes ccusage's readers and the agents' sources
// give: no public thread or settings file with usage is licensed for
// copying).
const (
	ampCases      = "../../pipeline/formats/amp/testdata"
	droidCases    = "../../pipeline/formats/droid/testdata"
	geminiCases   = "../../pipeline/formats/gemini/testdata"
	codebuffCases = "../../pipeline/formats/codebuff/testdata"
)

// Two Amp threads, one counted from its messages' usage and one from its
// usage ledger. Hand computed: the first thread's two replies (input
// 12+6, output 85+14, cache reads 9000+10800, cache writes 1800+120; the
// streaming reply has none yet), the ledger's two events (10 in, 20 out
// with the cache counters of message 1: 4000 read, 500 written; and an
// oracle call of only a total, 345, counted as output). ccusage 20.0.24
// gives the same tokens and cost.
func TestSessions_AmpSameAsCcusage(t *testing.T) {
	files := []string{ampCases + "/thread/input.json", ampCases + "/ledger/input.json"}
	got := ours(t, files...)
	require.Len(t, got, 2)
	calls := int64(0)
	for _, s := range got {
		require.Equal(t, "amp", string(s.Format))
		require.Zero(t, s.UnpricedCalls, "every model priced: %s", s.SessionID)
		calls += s.APICalls
	}
	require.Equal(t, int64(4), calls)
	mine := fromSessions(got)
	require.Equal(t, totals{Input: 28, Output: 464, CacheRead: 23800, CacheWrite: 2420, CostUSD: mine.CostUSD}, mine)
	theirs := fromCcusage(ccusage.Totals(t, ccusage.Amp, ccusage.Layout(t, ccusage.Amp, files)))
	requireSame(t, theirs, mine, "amp")
}

// A Droid session's totals: one call per session. ccusage 20.0.24 counts
// the same input, cache and cost (it prices the thinking tokens as
// output), but reports output without the thinking tokens; ours are part
// of output (Anthropic's convention), 200 more.
func TestSessions_DroidSameAsCcusage(t *testing.T) {
	// ccusage reads only *.settings.json, and the session is the name:
	// the fixture goes under a settings file's name for both.
	data, err := os.ReadFile(droidCases + "/settings/input.json")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "sessions", "-home-dev-proj", "0b7c.settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, data, 0o644))
	got := ours(t, file)
	require.Len(t, got, 1)
	require.Equal(t, "droid", string(got[0].Format))
	require.Equal(t, "0b7c", got[0].SessionID)
	require.Equal(t, int64(1), got[0].APICalls)
	require.Zero(t, got[0].UnpricedCalls)
	mine := fromSessions(got)
	require.Equal(t, totals{Input: 1500, Output: 1000, CacheRead: 30000, CacheWrite: 2000, CostUSD: mine.CostUSD}, mine)
	theirs := fromCcusage(ccusage.Totals(t, ccusage.Droid, ccusage.Layout(t, ccusage.Droid, []string{file})))
	require.Equal(t, theirs.Output+200, mine.Output, "output: ours includes the thinking tokens")
	mine.Output = theirs.Output
	requireSame(t, theirs, mine, "droid")
}

// Gemini CLI's whole-file session-*.json is read with the JSONL form's
// rules; ccusage 20.0.24 reads it too and gives the same input, cache and
// cost, with output without the thoughts (120).
func TestSessions_GeminiDocumentSameAsCcusage(t *testing.T) {
	files := []string{geminiCases + "/document/input.json"}
	got := ours(t, files...)
	require.Len(t, got, 1)
	require.Equal(t, "gemini-cli", string(got[0].Format))
	mine := fromSessions(got)
	require.Equal(t, totals{Input: 1104, Output: 160, CacheRead: 4096, CostUSD: mine.CostUSD}, mine)
	require.Equal(t, int64(1), got[0].UserMessages)
	require.Equal(t, int64(1), got[0].AssistantMessages)
	theirs := fromCcusage(ccusage.Totals(t, ccusage.Gemini, ccusage.Layout(t, ccusage.Gemini, files)))
	require.Equal(t, theirs.Output+120, mine.Output, "output: ours includes the thoughts")
	mine.Output = theirs.Output
	requireSame(t, theirs, mine, "Gemini CLI session-*.json")
}

// `sessionpipe export` reads documents through the tailer's document
// mode: the Parquet's sessions (the DuckDB views) are those of
// `sessionpipe sessions` on the same directory.
func TestExport_Documents(t *testing.T) {
	dir := t.TempDir()
	for src, dst := range map[string]string{
		ampCases + "/thread/input.json":        "amp/threads/T-5f1c9a2e.json",
		ampCases + "/ledger/input.json":        "amp/threads/T-ledger.json",
		droidCases + "/settings/input.json":    "factory/sessions/-home-dev-proj/0b7c.settings.json",
		geminiCases + "/document/input.json":   "gemini/tmp/h/chats/session-2026-09-23T08-00-9d2f4c1a.json",
		codebuffCases + "/document/input.json": "manicode/projects/p/chats/2026-01-02T03-04-05.000Z/chat-messages.json",
	} {
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(dst)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, dst), data, 0o644))
	}
	out := filepath.Join(t.TempDir(), "pq")
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run(t.Context(), []string{"export", "-q", "-out", out, "-no-archive", "-host", "h", dir}, &stdout, &stderr), stderr.String())
	stdout.Reset()
	require.Equal(t, exitOK, run(t.Context(), []string{"duckdb", out}, &stdout, &stderr), stderr.String())
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(stdout.String())
	require.NoError(t, err)

	offline := ours(t, "-host", "h", dir)
	require.Len(t, offline, 5)
	for _, s := range offline {
		var format string
		var calls, total int64
		var cost float64
		require.NoError(t, db.QueryRow("SELECT format, api_calls, total_tokens, cost_usd FROM sessions WHERE session_id = ?", s.SessionID).
			Scan(&format, &calls, &total, &cost), s.SessionID)
		require.Equal(t, string(s.Format), format, s.SessionID)
		require.Equal(t, s.APICalls, calls, s.SessionID)
		require.Equal(t, s.TotalTokens, total, s.SessionID)
		require.InDelta(t, s.CostUSD, cost, 1e-9, s.SessionID)
	}
}

// Gemini CLI converts a session-*.json to .jsonl when it resumes the
// session: both files on disk hold the same messages under the same ids,
// and each call counts once (one session, the numbers of either file).
func TestSessions_GeminiDocumentAndItsJSONLCountOnce(t *testing.T) {
	doc, err := os.ReadFile(geminiCases + "/document/input.json")
	require.NoError(t, err)
	var rec map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc, &rec))
	var msgs []json.RawMessage
	require.NoError(t, json.Unmarshal(rec["messages"], &msgs))
	delete(rec, "messages")
	meta, err := json.Marshal(rec)
	require.NoError(t, err)
	var jsonl bytes.Buffer
	jsonl.Write(meta)
	jsonl.WriteByte('\n')
	for _, m := range msgs {
		require.NoError(t, json.Compact(&jsonl, m))
		jsonl.WriteByte('\n')
	}
	dir := filepath.Join(t.TempDir(), "tmp", "h", "chats")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "session-2026-09-23T08-00-9d2f4c1a.json"), doc, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "session-2026-09-23T08-00-9d2f4c1a.jsonl"), jsonl.Bytes(), 0o644))

	alone := ours(t, geminiCases+"/document/input.json")
	both := ours(t, dir)
	require.Len(t, both, 1)
	require.Equal(t, fromSessions(alone), fromSessions(both))
	require.Equal(t, alone[0].APICalls, both[0].APICalls)
	require.Equal(t, alone[0].AssistantMessages, both[0].AssistantMessages)
	require.Equal(t, alone[0].UserMessages, both[0].UserMessages)
}

// A Codebuff chat (pipeline/formats/codebuff's chat case, written as one
// pretty-printed chat-messages.json) under a channel root, read by
// `sessionpipe sessions` and by ccusage 20.0.24 on the same root. The same
// output, cache reads and writes (a1 once though written twice; hand
// computed in the codebuff package: input 500, output 404, cache 2300
// read, 20 written, 4 calls); ccusage's input is larger by the
// OpenAI-style cached tokens (1000 + 300, gpt-5's) that it leaves in the
// prompt while counting them as cache reads too. Its cost, $0.007595, is
// ours ($0.0056275) plus those tokens at gpt-5's input price ($0.001625)
// plus $0.0003425 on the run step's model "openai/gpt-5", which ccusage
// prices at other rates than gpt-5 (its own breakdown: $0.001405 for 500
// input, 40 output, 300 cache reads, where gpt-5's rates give $0.0010625);
// ours prices it as gpt-5, the provider prefix dropped.
func TestSessions_CodebuffSameAsCcusage(t *testing.T) {
	data, err := os.ReadFile(codebuffCases + "/document/input.json")
	require.NoError(t, err)
	root := filepath.Join(t.TempDir(), "manicode")
	file := filepath.Join(root, "projects", "proj", "chats", "2026-01-02T03-04-05.000Z", "chat-messages.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, data, 0o644))
	// An empty chat beside it: no session for either.
	empty := filepath.Join(root, "projects", "proj", "chats", "2026-01-03T00-00-00.000Z", "chat-messages.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(empty), 0o755))
	require.NoError(t, os.WriteFile(empty, []byte("[]\n"), 0o644))

	got := ours(t, root)
	require.Len(t, got, 1)
	require.Equal(t, "codebuff", string(got[0].Format))
	require.Equal(t, "manicode/proj/2026-01-02T03-04-05.000Z", got[0].SessionID)
	require.Equal(t, int64(4), got[0].APICalls)
	require.Equal(t, int64(2), got[0].UserMessages)
	require.Zero(t, got[0].UnpricedCalls)
	mine := fromSessions(got)
	require.Equal(t, totals{Input: 500, Output: 404, CacheRead: 2300, CacheWrite: 20, CostUSD: mine.CostUSD}, mine)

	theirs := fromCcusage(ccusage.Totals(t, ccusage.Codebuff, root))
	require.Equal(t, mine.Input+1000+300, theirs.Input, "input: ccusage keeps the cached tokens in the prompt")
	require.InDelta(t, 0.0056275, mine.CostUSD, 1e-9)
	require.InDelta(t, 1300*1.25e-6+(0.001405-0.0010625), theirs.CostUSD-mine.CostUSD, 1e-9,
		"cost: those tokens at gpt-5's input price, and openai/gpt-5 at ccusage's other rates")
	mine.Input, mine.CostUSD = theirs.Input, theirs.CostUSD
	requireSame(t, theirs, mine, "codebuff")
}
