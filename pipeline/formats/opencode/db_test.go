package opencode_test

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/opencodetest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// loadRows reads a golden case's rows (their JSON form).
func loadRows(tb testing.TB, path string) []opencode.Row {
	tb.Helper()
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	var rows []opencode.Row
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r opencode.Row
		require.NoError(tb, json.Unmarshal(sc.Bytes(), &r))
		if r.Data != nil {
			rows = append(rows, r)
		}
	}
	return rows
}

func readAll(tb testing.TB, path string) ([]schema.Entry, []error) {
	tb.Helper()
	var (
		out  []schema.Entry
		errs []error
	)
	_, err := opencode.ReadDB(tb.Context(), path, parse.Config{Host: "h"}, func(e *schema.Entry) { out = append(out, *e) },
		func(err error) { errs = append(errs, err) })
	require.NoError(tb, err)
	return out, errs
}

// A database holds one version of each message: the last.
func TestReadDB_LastVersionOfEachMessage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	db := opencodetest.Create(t, path)
	db.LoadJSONL(loadRows(t, "testdata/session/input.jsonl"))

	entries, errs := readAll(t, path)
	require.Empty(t, errs)
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		ids = append(ids, e.EntryID)
		require.Equal(t, path+"#"+e.SessionID, e.Path)
	}
	// In (time_updated, id) order; msg_a002 once, at its last version.
	require.Equal(t, []string{"msg_a001", "msg_b001", "msg_b002", "msg_c001", "msg_c002", "msg_a002"}, ids)
	last := entries[len(entries)-1]
	require.Equal(t, schema.Usage{Input: 1200, Output: 400, Reasoning: 100, CacheRead: 12000, CacheWrite: 2200}, *last.Usage)
	require.Equal(t, "Fix the build", last.Title)
	require.Equal(t, "ses_main", entries[1].ParentSessionID)
}

// A reader never waits for a writer in the middle of a transaction (WAL),
// sees only what was committed, and notices the commit.
func TestDB_ReadsBesideAnOpenWriteTransaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	w := opencodetest.Create(t, path)
	rows := loadRows(t, "testdata/session/input.jsonl")
	w.Put(rows[0])

	d, err := opencode.Open(t.Context(), path)
	require.NoError(t, err)
	defer d.Close()
	changed, err := d.Changed(t.Context())
	require.NoError(t, err)
	require.True(t, changed, "first call")
	got, err := d.Rows(t.Context(), opencode.Position{}, 10, nil)
	require.NoError(t, err)
	require.Len(t, got, 1)

	tx := w.Begin()
	_, err = tx.Exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_z', 'ses_main', 1, 1767312099000, '{"role":"user"}')`)
	require.NoError(t, err)
	changed, err = d.Changed(t.Context())
	require.NoError(t, err)
	require.False(t, changed, "nothing committed")
	got, err = d.Rows(t.Context(), got[0].Position(), 10, nil)
	require.NoError(t, err)
	require.Empty(t, got, "uncommitted row")
	require.NoError(t, tx.Commit())

	changed, err = d.Changed(t.Context())
	require.NoError(t, err)
	require.True(t, changed)
	got, err = d.Rows(t.Context(), opencode.Position{Updated: 1767312000000, ID: "msg_a001"}, 10, nil)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "msg_z", got[0].ID)
}

// A row updated after it was read comes again after the position: its
// time_updated moved.
func TestDB_UpdatedRowIsReadAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	w := opencodetest.Create(t, path)
	rows := loadRows(t, "testdata/session/input.jsonl")
	w.Put(rows[1]) // msg_a002, streaming, no tokens yet
	d, err := opencode.Open(t.Context(), path)
	require.NoError(t, err)
	defer d.Close()
	got, err := d.Rows(t.Context(), opencode.Position{}, 10, nil)
	require.NoError(t, err)
	require.Len(t, got, 1)
	pos := got[0].Position()

	w.Put(rows[2]) // its final version
	got, err = d.Rows(t.Context(), pos, 10, nil)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "msg_a002", got[0].ID)
	require.EqualValues(t, 1767312009000, got[0].TimeUpdated)
	end, err := d.End(t.Context())
	require.NoError(t, err)
	require.Equal(t, got[0].Position(), end)
}

func TestOpen_NotADatabase(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "opencode.db")
	require.NoError(t, os.WriteFile(text, []byte("hello, not sqlite at all"), 0o644))
	_, err := opencode.Open(t.Context(), text)
	require.ErrorIs(t, err, opencode.ErrNotDatabase)

	other := filepath.Join(dir, "opencode-beta.db")
	db, err := sql.Open("sqlite", other)
	require.NoError(t, err)
	_, err = db.Exec("CREATE TABLE message (id TEXT, body TEXT)")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = opencode.Open(t.Context(), other)
	require.ErrorIs(t, err, opencode.ErrNotDatabase)
}

// ccusage's fixtures hold message(id, session_id, data) only: read in
// rowid order, the message's own time.created as its time; a message with
// tokens and no role is a model's.
func TestReadDB_UntimedTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE message (id TEXT, session_id TEXT, data TEXT);
INSERT INTO message VALUES ('db-msg-1', 'db-session-a', '{"providerID":"anthropic","modelID":"claude-sonnet-4-20250514","time":{"created":1767312000000},"tokens":{"input":120,"output":60,"cache":{"read":12,"write":24}},"cost":0.03}');
INSERT INTO message VALUES (NULL, 'db-session-a', '{}');`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	entries, errs := readAll(t, path)
	require.Len(t, entries, 1)
	require.Len(t, errs, 1, "the row without an id is reported")
	var re *opencode.RowError
	require.True(t, errors.As(errs[0], &re))
	require.ErrorIs(t, errs[0], opencode.ErrRow)
	e := entries[0]
	require.Equal(t, "db-session-a", e.SessionID)
	require.Equal(t, schema.Usage{Input: 120, Output: 60, CacheRead: 12, CacheWrite: 24}, *e.Usage)
	require.Equal(t, "2026-01-02T00:00:00Z", e.TS.Format("2006-01-02T15:04:05Z07:00"))
	require.InDelta(t, 0.03, *e.CostUSD, 1e-12)
}

func TestIsDatabaseName(t *testing.T) {
	for name, want := range map[string]bool{
		"opencode.db": true, "opencode-beta.db": true, "opencode-dev_2.db": true,
		"opencode.db-wal": false, "opencode.db-shm": false, "opencode-.db": false, "opencode-a.b.db": false, "other.db": false,
	} {
		require.Equal(t, want, opencode.IsDatabaseName(name), name)
	}
}
