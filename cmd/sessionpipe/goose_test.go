package main

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/ccusage"
)

// gooseSchema is Goose 1.35's sessions table (schema version 13; the
// columns sessionpipe and ccusage read, and the NOT NULL ones).
const gooseSchema = `CREATE TABLE sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
    session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
    accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
    accumulated_cost REAL, provider_name TEXT, model_config_json TEXT);`

// gooseDB writes the rows of the goose package's sessions golden case
// (each session at its last version) into root/data/sessions/sessions.db,
// laid out as GOOSE_PATH_ROOT.
func gooseDB(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	path := filepath.Join(root, "data", "sessions", "sessions.db")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(gooseSchema)
	require.NoError(t, err)
	f, err := os.Open("../../pipeline/formats/goose/testdata/sessions/input.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var row map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row))
		cols := make([]string, 0, len(row))
		args := make([]any, 0, len(row))
		for k, v := range row {
			cols = append(cols, k)
			args = append(args, v)
		}
		_, err := db.Exec("INSERT OR REPLACE INTO sessions ("+strings.Join(cols, ", ")+") VALUES (?"+strings.Repeat(", ?", len(cols)-1)+")", args...)
		require.NoError(t, err)
	}
	require.NoError(t, sc.Err())
	return root
}

// sessions on Goose's database: one session total per session, its
// accumulated counters (an old Goose without them: the last reply's);
// what the total holds beyond input and output is reasoning, counted in
// output; accumulated_cost, when recorded, is the cost. Hand-computed:
// input 100 + 1200 + 5000, output (50+30) + 300 + 700. ccusage 20.0.24
// gives the same input; its output leaves the reasoning (30) out, as its
// OpenCode report does (it prices it as output, as we do); and it ignores
// accumulated_cost: it prices the qwen3-coder session from its table
// ($0.001765) where we take Goose's recorded $0.0123.
func TestSessions_GooseSameAsCcusageButReasoning(t *testing.T) {
	root := gooseDB(t)
	got := ours(t, root)
	require.Len(t, got, 3)
	for _, s := range got {
		require.Equal(t, "goose", string(s.Format))
		require.Equal(t, int64(1), s.APICalls, s.SessionID)
		require.Equal(t, int64(0), s.AssistantMessages, "a session total is no reply")
	}
	mine := fromSessions(got)
	require.Equal(t, totals{Input: 6300, Output: 1080, CostUSD: mine.CostUSD}, mine)

	theirs := fromCcusage(ccusage.Totals(t, ccusage.Goose, root))
	diff := mine.minus(theirs)
	require.InDelta(t, 0.0123-0.001765, diff.CostUSD, 1e-9, "ours %+v, ccusage %+v", mine, theirs)
	require.Equal(t, totals{Output: 30, CostUSD: diff.CostUSD}, diff)
}
