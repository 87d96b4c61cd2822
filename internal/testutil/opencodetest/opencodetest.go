// Package opencodetest writes agents' SQLite databases for tests (Goose's
// sessions table too, see CreateGoose): OpenCode's tables of
// OpenCode 1.2 and later (session, message, part; see
// pipeline/formats/opencode), in WAL mode, through a read-write
// connection of its own, as the agent does while sessionpipe reads.
package opencodetest

import (
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"

	_ "modernc.org/sqlite"
)

// Schema is OpenCode's schema for the tables sessionpipe reads
// (session.sql.ts; columns it does not read are left out but for the
// NOT NULL ones a real database has).
const Schema = `
CREATE TABLE session (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL DEFAULT 'p', parent_id TEXT, slug TEXT NOT NULL DEFAULT '',
  directory TEXT NOT NULL DEFAULT '', title TEXT NOT NULL DEFAULT '', version TEXT NOT NULL DEFAULT '1.2.0',
  time_created INTEGER NOT NULL DEFAULT 0, time_updated INTEGER NOT NULL DEFAULT 0);
CREATE TABLE message (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
  data TEXT NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE TABLE part (
  id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
`

// DB is an OpenCode database open for writing.
type DB struct {
	tb   testing.TB
	Path string
	db   *sql.DB
}

// Create creates an OpenCode database at path in WAL mode; it is closed
// at the end of the test.
func Create(tb testing.TB, path string) *DB {
	tb.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	require.NoError(tb, err)
	db.SetMaxOpenConns(1)
	_, err = db.Exec(Schema)
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return &DB{tb: tb, Path: path, db: db}
}

// Close closes the writer (the agent exits).
func (d *DB) Close() { require.NoError(d.tb, d.db.Close()) }

// Session inserts or replaces a session row.
func (d *DB) Session(id, parent, directory, title string) {
	d.tb.Helper()
	var p any
	if parent != "" {
		p = parent
	}
	_, err := d.db.Exec(`INSERT OR REPLACE INTO session (id, parent_id, directory, title) VALUES (?, ?, ?, ?)`, id, p, directory, title)
	require.NoError(d.tb, err)
}

// Put inserts or updates a message row, as OpenCode's upsert does
// (time_updated set by the caller, the agent's Date.now()).
func (d *DB) Put(r opencode.Row) {
	d.tb.Helper()
	data := []byte(r.Data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		require.NoError(d.tb, json.Unmarshal(data, &s))
		data = []byte(s)
	}
	_, err := d.db.Exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET time_updated = excluded.time_updated, data = excluded.data`,
		r.ID, r.SessionID, r.TimeCreated, r.TimeUpdated, string(data))
	require.NoError(d.tb, err)
}

// Exec runs a statement (a test's own change).
func (d *DB) Exec(query string, args ...any) {
	d.tb.Helper()
	_, err := d.db.Exec(query, args...)
	require.NoError(d.tb, err)
}

// Begin starts a write transaction that the test holds open (a writer in
// the middle of its work); commit or roll it back with the returned Tx.
func (d *DB) Begin() *sql.Tx {
	d.tb.Helper()
	tx, err := d.db.Begin()
	require.NoError(d.tb, err)
	return tx
}

// LoadJSONL puts every row of a file of rows in their JSON form (the
// golden tests' input.jsonl), with their sessions.
func (d *DB) LoadJSONL(rows []opencode.Row) {
	d.tb.Helper()
	for _, r := range rows {
		if r.Directory != "" || r.ParentID != "" || r.Title != "" {
			d.Session(r.SessionID, r.ParentID, r.Directory, r.Title)
		}
		d.Put(r)
	}
}
