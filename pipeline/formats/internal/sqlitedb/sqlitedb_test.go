package sqlitedb_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/internal/sqlitedb"
)

var errNotOurs = errors.New("not ours")

// A file that is not SQLite is refused by its header, with the caller's
// error, before any driver opens it; a database is opened read-only and
// its columns listed, none for a table it does not have.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "state.db")
	require.NoError(t, os.WriteFile(text, []byte("id,model\n1,gpt\n"), 0o644))
	_, _, err := sqlitedb.Open(t.Context(), text, errNotOurs)
	require.ErrorIs(t, err, errNotOurs)
	require.False(t, sqlitedb.IsSQLite(text))
	require.False(t, sqlitedb.IsSQLite(filepath.Join(dir, "missing.db")))

	path := filepath.Join(dir, "agent.db")
	w, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = w.Exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, model TEXT)`)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.True(t, sqlitedb.IsSQLite(path))

	db, conn, err := sqlitedb.Open(t.Context(), path, errNotOurs)
	require.NoError(t, err)
	defer db.Close()
	defer conn.Close()
	cols, err := sqlitedb.Columns(t.Context(), conn, path, "sessions")
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"id": true, "model": true}, cols)
	none, err := sqlitedb.Columns(t.Context(), conn, path, "messages")
	require.NoError(t, err)
	require.Empty(t, none)
	_, err = conn.ExecContext(t.Context(), `INSERT INTO sessions VALUES ('a', 'b')`)
	require.Error(t, err, "read-only")
}
