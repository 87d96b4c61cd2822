package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	_ "github.com/marcboeker/go-duckdb/v2"
	"github.com/stretchr/testify/require"
)

// `sessionpipe duckdb DIR` prints a script that DuckDB runs as it is, over
// what `sessionpipe export` wrote, giving the sessions of `sessionpipe
// sessions`.
func TestDuckDB_ScriptOverExport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "pq")
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run(t.Context(), []string{"export", "-q", "-out", out, "-no-archive", "-host", "h", filepath.Join(corpus, "pi")}, &stdout, &stderr), stderr.String())
	stdout.Reset()
	require.Equal(t, exitOK, run(t.Context(), []string{"duckdb", out}, &stdout, &stderr), stderr.String())
	script := stdout.String()

	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(script)
	require.NoError(t, err)
	var sessions, entries int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM sessions").Scan(&sessions))
	require.NoError(t, db.QueryRow("SELECT count(*) FROM entries").Scan(&entries))

	stdout.Reset()
	require.Equal(t, exitOK, run(t.Context(), []string{"sessions", "-json", "-host", "h", filepath.Join(corpus, "pi")}, &stdout, &stderr), stderr.String())
	var offline []struct {
		SessionID   string  `json:"session_id"`
		Turns       int64   `json:"turns"`
		TotalTokens int64   `json:"total_tokens"`
		CostUSD     float64 `json:"cost_usd"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &offline))
	require.Len(t, offline, sessions)
	require.Positive(t, entries)
	for _, s := range offline {
		var turns, total int64
		var cost float64
		require.NoError(t, db.QueryRow("SELECT turns, total_tokens, cost_usd FROM sessions WHERE session_id = ?", s.SessionID).Scan(&turns, &total, &cost), s.SessionID)
		require.Equal(t, s.Turns, turns, s.SessionID)
		require.Equal(t, s.TotalTokens, total, s.SessionID)
		require.InDelta(t, s.CostUSD, cost, 1e-9, s.SessionID)
	}

	// A fresh data directory (no Parquet yet): the script runs, every
	// view empty, and stderr says why.
	stdout.Reset()
	stderr.Reset()
	fresh := t.TempDir()
	require.Equal(t, exitOK, run(t.Context(), []string{"duckdb", fresh}, &stdout, &stderr), stderr.String())
	require.Contains(t, stderr.String(), "no Parquet files under")
	edb, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer edb.Close()
	edb.SetMaxOpenConns(1)
	_, err = edb.Exec(stdout.String())
	require.NoError(t, err)
	var n int64
	require.NoError(t, edb.QueryRow("SELECT count(*) FROM sessions").Scan(&n))
	require.Zero(t, n)

	// Errors: no such directory; two of them.
	require.Equal(t, exitError, run(t.Context(), []string{"duckdb", filepath.Join(t.TempDir(), "nope")}, &stdout, &stderr))
	require.Equal(t, exitUsage, run(t.Context(), []string{"duckdb", out, out}, &stdout, &stderr))
}
