package formats

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Under a directory, OpenCode's database (by its name) and message
// documents (storage/message/<session>/*.json) are found and marked;
// its WAL files, its part documents and other .db and .json files are
// left out by their names. A SQLite file named explicitly is a database
// whatever its name.
func TestWalk_OpenCode(t *testing.T) {
	dir := t.TempDir()
	sqlite := "SQLite format 3\x00" + string(make([]byte, 84))
	writeFile(t, filepath.Join(dir, "opencode.db"), sqlite)
	writeFile(t, filepath.Join(dir, "opencode.db-wal"), "x")
	writeFile(t, filepath.Join(dir, "other.db"), sqlite)
	writeFile(t, filepath.Join(dir, "storage", "message", "ses_a", "msg_1.json"), "{}")
	writeFile(t, filepath.Join(dir, "storage", "part", "msg_1", "prt_1.json"), "{}")
	var left []string
	found, err := WalkAll([]string{dir}, func(error) {}, func(p string) { left = append(left, p) })
	require.NoError(t, err)
	require.Len(t, found, 2)
	require.Equal(t, filepath.Join(dir, "opencode.db"), found[0].Path)
	require.True(t, found[0].Database)
	require.Equal(t, filepath.Join(dir, "storage", "message", "ses_a", "msg_1.json"), found[1].Path)
	require.True(t, found[1].OpenCodeMessage)
	require.ElementsMatch(t, []string{
		filepath.Join(dir, "opencode.db-wal"), filepath.Join(dir, "other.db"),
		filepath.Join(dir, "storage", "part", "msg_1", "prt_1.json"),
	}, left)

	found, err = Walk([]string{filepath.Join(dir, "other.db")}, func(error) {})
	require.NoError(t, err)
	require.Len(t, found, 1)
	require.True(t, found[0].Database, "named explicitly, a SQLite file")
}

// Under a directory, names decide: a SQLite file with a transcript's name
// is read as a transcript (the walk opens none of the files it finds);
// named explicitly, it is a database.
func TestWalk_DirectoryNamesDecide(t *testing.T) {
	dir := t.TempDir()
	sqlite := "SQLite format 3\x00" + string(make([]byte, 84))
	path := filepath.Join(dir, "p", "s.jsonl")
	writeFile(t, path, sqlite)
	found, err := Walk([]string{dir}, func(error) {})
	require.NoError(t, err)
	require.Len(t, found, 1)
	require.False(t, found[0].Database, "under a directory, by its name")
	found, err = Walk([]string{path}, func(error) {})
	require.NoError(t, err)
	require.Len(t, found, 1)
	require.True(t, found[0].Database, "named explicitly, by its content")
}
