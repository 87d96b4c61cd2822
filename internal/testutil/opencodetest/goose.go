package opencodetest

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"
)

// GooseSchema is Goose 1.35's sessions table (schema version 13; the
// columns sessionpipe and ccusage read, and the NOT NULL ones).
const GooseSchema = `CREATE TABLE sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
    session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
    accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
    accumulated_cost REAL, provider_name TEXT, model_config_json TEXT);`

// CreateGoose creates a Goose database at path in WAL mode and returns its
// writer, closed at the end of the test.
func CreateGoose(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	require.NoError(tb, err)
	db.SetMaxOpenConns(1)
	_, err = db.Exec(GooseSchema)
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return db
}
