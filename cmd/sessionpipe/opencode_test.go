package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/ccusage"
	"github.com/sessionpipe/sessionpipe/internal/testutil/opencodetest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// The OpenCode rows of pipeline/formats/opencode (generated: no public
// OpenCode database is licensed for copying).
const opencodeCases = "../../pipeline/formats/opencode/testdata"

// openCodeDB writes the rows of a golden case into an OpenCode database
// (WAL mode, then closed: checkpointed into the main file) in a new
// directory laid out as ~/.local/share/opencode, and returns it.
func openCodeDB(t *testing.T, rowsFile string) string {
	t.Helper()
	root := t.TempDir()
	db := opencodetest.Create(t, filepath.Join(root, "opencode.db"))
	f, err := os.Open(rowsFile)
	require.NoError(t, err)
	defer f.Close()
	var rows []opencode.Row
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r opencode.Row
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		if r.Data != nil {
			rows = append(rows, r)
		}
	}
	require.NoError(t, sc.Err())
	db.LoadJSONL(rows)
	db.Close()
	return root
}

// sessions on an OpenCode data directory reads its database: the last
// version of each message, counted once; input is OpenCode's (it excludes
// the cache), output adds the reasoning, which OpenCode bills at the
// output rate; a recorded cost is used as recorded. The hand-computed
// totals: input 1200+500, output (300+100)+(40+60)+123 (a message with
// only a total counts it as output), cache read 12000+1000, cache write
// 2200.
//
// ccusage 20.0.24 reads the same rows (SELECT id, session_id, data FROM
// message) and gives the same input, cache and cost (the recorded $0.0123;
// gpt-5's message, whose recorded cost is 0, priced with its reasoning),
// but its output column leaves the reasoning out: 160 tokens less.
func TestSessions_OpenCodeSameAsCcusageButReasoning(t *testing.T) {
	root := openCodeDB(t, opencodeCases+"/session/input.jsonl")
	got := ours(t, root)
	require.Len(t, got, 3)
	byID := map[string]int{}
	for i, s := range got {
		require.Equal(t, "opencode", string(s.Format))
		byID[s.SessionID] = i
	}
	main := got[byID["ses_main"]]
	require.Equal(t, int64(1), main.UserMessages)
	require.Equal(t, int64(1), main.AssistantMessages, "two versions of one message")
	require.Equal(t, int64(1), main.APICalls)
	require.Equal(t, int64(1), main.Turns)
	require.InDelta(t, 0.0123, main.CostUSD, 1e-9, "recorded")
	require.Contains(t, main.PriceSources, "recorded")
	require.Contains(t, got[byID["ses_child"]].PriceSources, "litellm", "a recorded 0 is no price")
	require.Equal(t, "/home/u/proj", main.CWD)
	child := got[byID["ses_child"]]
	require.Equal(t, "ses_main", child.ParentSessionID)
	other := got[byID["ses_other"]]
	require.Equal(t, int64(2), other.AssistantMessages)
	require.Equal(t, int64(1), other.APICalls, "the failed message has no usage")
	require.Equal(t, int64(1), other.UnpricedCalls, "some-model is in no price table")

	mine := fromSessions(got)
	require.Equal(t, totals{Input: 1700, Output: 623, CacheRead: 13000, CacheWrite: 2200, CostUSD: mine.CostUSD}, mine)

	theirs := fromCcusage(ccusage.Totals(t, ccusage.OpenCode, root))
	diff := mine.minus(theirs)
	require.InDelta(t, 0, diff.CostUSD, 1e-9, "cost: ours %+v, ccusage %+v", mine, theirs)
	require.Equal(t, totals{Output: 160, CostUSD: diff.CostUSD}, diff)
}

// With no PATH, sessions reads OpenCode's database in its well-known
// place ($XDG_DATA_HOME/opencode, ~/.local/share/opencode by default).
func TestSessions_OpenCodeWellKnownLocation(t *testing.T) {
	home := t.TempDir()
	for _, k := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_AGENT_DIR", "COPILOT_HOME", "OPENCODE_DATA_DIR", "XDG_DATA_HOME", "GOOSE_PATH_ROOT"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", home)
	root := openCodeDB(t, opencodeCases+"/session/input.jsonl")
	dir := filepath.Join(home, ".local", "share", "opencode")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.Rename(filepath.Join(root, "opencode.db"), filepath.Join(dir, "opencode.db")))
	got := ours(t)
	require.Len(t, got, 3)
	require.Equal(t, totals{Input: 1700, Output: 623, CacheRead: 13000, CacheWrite: 2200, CostUSD: fromSessions(got).CostUSD}, fromSessions(got))
}

// `sessionpipe export` of an OpenCode data directory goes through the
// tailer's database source and the exporter: DuckDB's views over the
// Parquet give the sessions of `sessionpipe sessions` on the same
// directory.
func TestExport_OpenCodeDatabase(t *testing.T) {
	root := openCodeDB(t, opencodeCases+"/session/input.jsonl")
	out := filepath.Join(t.TempDir(), "pq")
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run(t.Context(), []string{"export", "-q", "-out", out, "-no-archive", "-host", "h", root}, &stdout, &stderr), stderr.String())
	stdout.Reset()
	require.Equal(t, exitOK, run(t.Context(), []string{"duckdb", out}, &stdout, &stderr), stderr.String())
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(stdout.String())
	require.NoError(t, err)

	stdout.Reset()
	require.Equal(t, exitOK, run(t.Context(), []string{"sessions", "-json", "-q", "-host", "h", root}, &stdout, &stderr), stderr.String())
	var offline []index.Session
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &offline))
	require.Len(t, offline, 3)
	for _, s := range offline {
		var calls, total int64
		var cost float64
		require.NoError(t, db.QueryRow("SELECT api_calls, total_tokens, cost_usd FROM sessions WHERE format = 'opencode' AND session_id = ?", s.SessionID).Scan(&calls, &total, &cost), s.SessionID)
		require.Equal(t, s.APICalls, calls, s.SessionID)
		require.Equal(t, s.TotalTokens, total, s.SessionID)
		require.InDelta(t, s.CostUSD, cost, 1e-9, s.SessionID)
	}
}

// OpenCode before 1.2 kept one JSON document per message under
// storage/message/<session>/ (rewritten whole as the message grew): given
// the data directory, sessions reads each as one message, as ccusage does;
// its output leaves the reasoning out (30 tokens here), the rest agrees.
func TestSessions_OpenCodeMessageDocuments(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "storage", "message", "ses_l")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	docs := map[string]string{
		"msg_l0.json": `{"id":"msg_l0","sessionID":"ses_l","role":"user","time":{"created":1750000000000}}`,
		"msg_l1.json": "{\n  \"id\": \"msg_l1\",\n  \"sessionID\": \"ses_l\",\n  \"role\": \"assistant\",\n  \"time\": {\n    \"created\": 1750000001000\n  },\n" +
			"  \"modelID\": \"claude-sonnet-4-20250514\",\n  \"providerID\": \"anthropic\",\n  \"cost\": 0.02,\n" +
			"  \"tokens\": {\n    \"input\": 100,\n    \"output\": 50,\n    \"reasoning\": 0,\n    \"cache\": {\n      \"read\": 10,\n      \"write\": 20\n    }\n  }\n}\n",
		"msg_l2.json": `{"id":"msg_l2","sessionID":"ses_l","role":"assistant","time":{"created":1750000002000},"modelID":"claude-sonnet-4-20250514","providerID":"anthropic","cost":0.01,"tokens":{"input":10,"output":5,"reasoning":30,"cache":{"read":1000,"write":0}}}`,
	}
	for name, doc := range docs {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644))
	}
	got := ours(t, root)
	require.Len(t, got, 1)
	s := got[0]
	require.Equal(t, "ses_l", s.SessionID)
	require.Equal(t, [3]int64{1, 2, 2}, [3]int64{s.UserMessages, s.AssistantMessages, s.APICalls})
	mine := fromSessions(got)
	require.Equal(t, totals{Input: 110, Output: 85, CacheRead: 1010, CacheWrite: 20, CostUSD: 0.03}, mine)

	theirs := fromCcusage(ccusage.Totals(t, ccusage.OpenCode, root))
	diff := mine.minus(theirs)
	require.InDelta(t, 0, diff.CostUSD, 1e-9, "ours %+v, ccusage %+v", mine, theirs)
	require.Equal(t, totals{Output: 30, CostUSD: diff.CostUSD}, diff)
}
