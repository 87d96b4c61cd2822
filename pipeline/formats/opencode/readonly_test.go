package opencode

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The connection cannot write: mode=ro and query_only, whatever a bug
// in a query would try.
func TestOpen_ReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	_, err = w.Exec("CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)")
	require.NoError(t, err)
	defer w.Close()

	d, err := Open(t.Context(), path)
	require.NoError(t, err)
	defer d.Close()
	_, err = d.conn.ExecContext(t.Context(), "INSERT INTO message VALUES ('a', 's', 1, 1, '{}')")
	require.Error(t, err)

	// Without query_only, mode=ro alone refuses too.
	ro, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer ro.Close()
	_, err = ro.Exec("INSERT INTO message VALUES ('a', 's', 1, 1, '{}')")
	require.Error(t, err)
}
