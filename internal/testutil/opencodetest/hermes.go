package opencodetest

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// HermesSchema is Hermes Agent's sessions and messages tables
// (hermes_state_common.py's SCHEMA_SQL, schema version 30: the columns
// sessionpipe and ccusage read, the NOT NULL ones and a few others as the
// agent has them; written from the upstream schema, not copied).
const HermesSchema = `
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
    message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0, cwd TEXT,
    billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT,
    estimated_cost_usd REAL, actual_cost_usd REAL, cost_status TEXT, cost_source TEXT,
    title TEXT, last_activity_at REAL, api_call_count INTEGER DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id));
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT);
CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
`

// CreateHermes creates a Hermes database at path in WAL mode (as Hermes
// runs it) and returns its writer, closed at the end of the test.
func CreateHermes(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	require.NoError(tb, err)
	db.SetMaxOpenConns(1)
	_, err = db.Exec(HermesSchema)
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return db
}

// PutHermes inserts a sessions row given as a JSON object of its columns,
// or replaces the row of its id with it (the row as it grew); a column
// HermesSchema lacks fails the test.
func PutHermes(tb testing.TB, db *sql.DB, row map[string]any) {
	tb.Helper()
	if _, ok := row["source"]; !ok {
		row["source"] = "cli"
	}
	cols := make([]string, 0, len(row))
	for k := range row {
		cols = append(cols, k)
	}
	sort.Strings(cols)
	args := make([]any, len(cols))
	set := make([]string, len(cols))
	for i, c := range cols {
		args[i] = row[c]
		set[i] = c + " = excluded." + c
	}
	_, err := db.Exec("INSERT INTO sessions ("+strings.Join(cols, ", ")+") VALUES (?"+strings.Repeat(", ?", len(cols)-1)+
		") ON CONFLICT (id) DO UPDATE SET "+strings.Join(set, ", "), args...)
	require.NoError(tb, err)
}

// LoadHermesJSONL puts every row of a file of JSON rows (a hermes golden
// case's input.jsonl), in order: a row given again replaces its earlier
// version. Lines that are not JSON objects with an id are left out.
func LoadHermesJSONL(tb testing.TB, db *sql.DB, file string) {
	tb.Helper()
	f, err := os.Open(file)
	require.NoError(tb, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var row map[string]any
		if json.Unmarshal(sc.Bytes(), &row) != nil {
			continue
		}
		if id, ok := row["id"].(string); !ok || id == "" {
			continue
		}
		PutHermes(tb, db, row)
	}
	require.NoError(tb, sc.Err())
}
