package hermes_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/opencodetest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/hermes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// readDB reads a database whole as `sessionpipe sessions` does.
func readDB(t *testing.T, path string) ([]schema.Entry, []error, error) {
	t.Helper()
	var (
		es   []schema.Entry
		errs []error
	)
	_, err := hermes.ReadDB(t.Context(), path, parse.Config{Host: "h"}, func(e *schema.Entry) { es = append(es, *e) }, func(err error) { errs = append(errs, err) })
	return es, errs, err
}

// The golden rows in a state.db written by Hermes's schema, each session
// at its last version, read back: the same sessions and figures as the
// rows parsed as lines (TestParse_SessionsAsCcusage), while the agent
// holds a write transaction open (WAL: the read neither waits nor blocks).
func TestReadDB_GoldenRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), hermes.DatabaseName)
	db := opencodetest.CreateHermes(t, path)
	opencodetest.LoadHermesJSONL(t, db, filepath.Join("testdata", "sessions", "input.jsonl"))
	_, err := db.Exec(`UPDATE sessions SET cwd = '/home/u/proj' WHERE id = '20260519_101500_a1b2c3'`)
	require.NoError(t, err)
	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`UPDATE sessions SET input_tokens = 999999 WHERE id = '20260519_113000_d4e5f6'`)
	require.NoError(t, err)
	defer tx.Rollback()

	es, errs, err := readDB(t, path)
	require.NoError(t, err)
	require.Empty(t, errs)
	agg := index.NewAggregator(price.Default())
	for i := range es {
		require.Equal(t, path, es[i].Path)
		agg.Add(&es[i])
	}
	got := map[string][5]int64{}
	for _, s := range agg.Sessions() {
		got[s.SessionID] = [5]int64{s.InputTokens, s.OutputTokens, s.CacheReadTokens, s.CacheWriteTokens, s.APICalls}
		if s.SessionID == "20260519_101500_a1b2c3" {
			require.Equal(t, "/home/u/proj", s.CWD)
			require.InDelta(t, 0.12, s.CostUSD, 1e-9)
		}
	}
	require.Equal(t, map[string][5]int64{
		"20260519_101500_a1b2c3": {5200, 900, 30050, 2020, 1},
		"20260519_113000_d4e5f6": {800, 120, 0, 0, 1},
		"20260519_120000_g7h8i9": {244075, 10019, 3339776, 0, 1},
	}, got, "the uncommitted update is not seen")
}

// A file named state.db is Hermes's only when its sessions table has
// Hermes's columns: not SQLite, another program's sessions table, Goose's
// sessions table, or none, is ErrNotDatabase, before any row is read.
func TestOpen_NotHermes(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text", hermes.DatabaseName)
	require.NoError(t, os.MkdirAll(filepath.Dir(text), 0o755))
	require.NoError(t, os.WriteFile(text, []byte("not a database, and long enough\n"), 0o644))
	cases := map[string]string{
		"web":   `CREATE TABLE sessions (token_hash TEXT PRIMARY KEY, user_id INTEGER, created_at TEXT, expires_at TEXT)`,
		"goose": opencodetest.GooseSchema,
		"none":  `CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT)`,
	}
	paths := []string{text}
	for name, ddl := range cases {
		p := filepath.Join(dir, name, hermes.DatabaseName)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		db, err := sql.Open("sqlite", p)
		require.NoError(t, err)
		_, err = db.Exec(ddl)
		require.NoError(t, err)
		require.NoError(t, db.Close())
		paths = append(paths, p)
	}
	for _, p := range paths {
		_, err := hermes.Open(t.Context(), p)
		require.ErrorIs(t, err, hermes.ErrNotDatabase, p)
		_, _, err = readDB(t, p)
		require.ErrorIs(t, err, hermes.ErrNotDatabase, p)
	}
}

// An older Hermes (the columns ccusage's own test schema has: no title,
// parent, cwd, ended_at nor last_activity_at) is read with what it has.
func TestReadDB_OlderSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), hermes.DatabaseName)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, started_at REAL NOT NULL,
message_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0, billing_provider TEXT, estimated_cost_usd REAL, actual_cost_usd REAL);
INSERT INTO sessions VALUES ('session-1', 'cli', 'claude-sonnet-4-20250514', 1750000000.25, 42, 1200, 300, 50, 20, 10, 'anthropic', 0.12, 0.34);`)
	require.NoError(t, err)
	es, errs, err := readDB(t, path)
	require.NoError(t, err)
	require.Empty(t, errs)
	require.Len(t, es, 1)
	require.Equal(t, schema.Usage{Input: 1200, Output: 300, CacheRead: 50, CacheWrite: 20, Reasoning: 10}, *es[0].Usage)
	require.InDelta(t, 0.34, *es[0].CostUSD, 0)
	require.Equal(t, "2025-06-15T15:06:40.25Z", es[0].TS.Format("2006-01-02T15:04:05.999Z07:00"))
}

// A bad row is a located error naming the database and the session, and
// the other rows are read: a counter stored as text is the parser's
// error (the entry kept without usage), a NULL id the row left out.
func TestReadDB_BadRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), hermes.DatabaseName)
	db := opencodetest.CreateHermes(t, path)
	_, err := db.Exec(`INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens) VALUES
('ok', 'cli', 'gpt-5', 1750000000, 10, 1), ('bad', 'cli', 'gpt-5', 1750000000, 'lots', 1), (NULL, 'cli', 'gpt-5', 1750000000, 5, 5)`)
	require.NoError(t, err)
	es, errs, err := readDB(t, path)
	require.NoError(t, err)
	require.Len(t, errs, 2)
	var re *hermes.RowError
	require.True(t, errors.As(errs[0], &re))
	require.Equal(t, path, re.Path)
	require.ErrorIs(t, errs[0], hermes.ErrRow, "the NULL id")
	require.True(t, errors.As(errs[1], &re))
	require.Equal(t, "bad", re.ID)
	var de *schema.DecodeError
	require.True(t, errors.As(errs[1], &de), "the parser's located error")
	require.Len(t, es, 2)
	require.Equal(t, "ok", es[0].SessionID)
	require.NotNil(t, es[0].Usage)
	require.Equal(t, "bad", es[1].SessionID)
	require.Nil(t, es[1].Usage)
}
