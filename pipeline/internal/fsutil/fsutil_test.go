package fsutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Replace puts the new content in place under both kinds of temporary
// name and leaves no temporary file behind.
func TestReplace(t *testing.T) {
	for _, tmp := range []string{".state.json.tmp", "state.json.tmp-*"} {
		t.Run(tmp, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "state.json"), []byte("old"), 0o644))
			require.NoError(t, Replace(dir, "state.json", tmp, []byte("new")))
			require.NoError(t, SyncDir(dir))
			data, err := os.ReadFile(filepath.Join(dir, "state.json"))
			require.NoError(t, err)
			require.Equal(t, "new", string(data))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "no temporary file left")
		})
	}
}

// A rename that fails (a directory stands at the name) leaves the name as
// it was and removes the temporary file.
func TestReplace_FailedRenameKeepsOld(t *testing.T) {
	for _, tmp := range []string{".state.json.tmp", "state.json.tmp-*"} {
		t.Run(tmp, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "state.json", "x"), 0o755))
			require.Error(t, Replace(dir, "state.json", tmp, []byte("new")))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "the temporary file is removed")
			info, err := os.Stat(filepath.Join(dir, "state.json"))
			require.NoError(t, err)
			require.True(t, info.IsDir(), "the name is as it was")
		})
	}
}

// SyncDir of a directory that is not there says so.
func TestSyncDir_Missing(t *testing.T) {
	require.ErrorIs(t, SyncDir(filepath.Join(t.TempDir(), "gone")), os.ErrNotExist)
}
