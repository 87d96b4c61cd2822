package formats

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func foundPaths(found []Found) []string {
	var out []string
	for _, f := range found {
		out = append(out, f.Path)
	}
	return out
}

// hostileDir holds two transcripts, a session store, a file that is no
// candidate, a FIFO, and a .jsonl link to /dev/zero.
func hostileDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	writeFile(tb, filepath.Join(dir, "b", "s2.jsonl"), claudeUser+"\n")
	writeFile(tb, filepath.Join(dir, "a", "s1.jsonl"), claudeUser+"\n")
	writeFile(tb, filepath.Join(dir, "a", "sessions.json"), `{}`)
	writeFile(tb, filepath.Join(dir, "a", "notes.txt"), "x")
	require.NoError(tb, syscall.Mkfifo(filepath.Join(dir, "a", "fifo.jsonl"), 0o644))
	require.NoError(tb, os.Symlink("/dev/zero", filepath.Join(dir, "b", "zero.jsonl")))
	return dir
}

// hostileTranscripts lists, in walk order, what Walk finds in a
// [hostileDir]: the transcripts and the session store.
func hostileTranscripts(dir string) []string {
	return []string{
		filepath.Join(dir, "a", "s1.jsonl"),
		filepath.Join(dir, "a", "sessions.json"),
		filepath.Join(dir, "b", "s2.jsonl"),
	}
}

func TestWalk_Directory(t *testing.T) {
	dir := hostileDir(t)
	var skipped []error
	found, err := Walk([]string{dir}, func(err error) { skipped = append(skipped, err) })
	require.NoError(t, err)
	require.Equal(t, hostileTranscripts(dir), foundPaths(found))
	require.True(t, found[1].Meta)
	require.Len(t, skipped, 2, "the FIFO and the link to a device are counted skips")
	for _, err := range skipped {
		require.ErrorIs(t, err, ErrNotRegular)
	}

	// WalkAll names the files left out by their names too.
	var left []string
	found, err = WalkAll([]string{dir}, func(error) {}, func(path string) { left = append(left, path) })
	require.NoError(t, err)
	require.Equal(t, hostileTranscripts(dir), foundPaths(found))
	require.Equal(t, []string{filepath.Join(dir, "a", "notes.txt")}, left)
}

func TestIsCandidate(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"s.jsonl", true},
		{"s.jsonl.bak.2026-03-20T06-34-44.520Z", true},
		{"s.jsonl.reset.2026-03-20T06-34-44.520Z", true},
		{"s.jsonl.deleted.2026-03-20T06-34-44.520Z", true},
		// OpenClaw's session file repair: ${sessionFile}.bak-${pid}-${Date.now()}.
		{"8555a0a4-0b79-459d-939c-e17cdbbf4fe2.jsonl.bak-41873-1774012345678", true},
		{"s.trajectory.jsonl", true},
		{"s.jsonl.bak-", false},
		{"s.jsonl.bak-12", false},
		{"s.jsonl.bak-12-", false},
		{"s.jsonl.bak-x-1", false},
		{"s.jsonl.repair-12-34.tmp", false},
		{"s.trajectory-path.json", false},
		{"sessions.json", false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, IsCandidate(tc.name), "IsCandidate(%q)", tc.name)
	}
}

func TestWalk_RepairBackupRead(t *testing.T) {
	dir := t.TempDir()
	bak := writeFile(t, filepath.Join(dir, "s.jsonl.bak-41873-1774012345678"), claudeUser+"\n")
	ptr := writeFile(t, filepath.Join(dir, "s.trajectory-path.json"), "{}")
	var left []string
	found, err := WalkAll([]string{dir}, func(err error) { t.Error(err) }, func(path string) { left = append(left, path) })
	require.NoError(t, err)
	require.Equal(t, []string{bak}, foundPaths(found))
	require.Equal(t, []string{ptr}, left)
}

func TestWalk_NamedPaths(t *testing.T) {
	dir := hostileDir(t)
	noSkip := func(err error) { t.Errorf("unexpected skip: %v", err) }
	tests := []struct {
		name string
		path string
		want error
	}{
		{"FIFO", filepath.Join(dir, "a", "fifo.jsonl"), ErrNotRegular},
		{"LinkToDevice", filepath.Join(dir, "b", "zero.jsonl"), ErrNotRegular},
		{"Device", "/dev/zero", ErrNotRegular},
		{"Missing", filepath.Join(dir, "nope.jsonl"), os.ErrNotExist},
		{"GlobWithoutMatch", filepath.Join(dir, "**", "*.parquet"), ErrNoMatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			found, err := Walk([]string{filepath.Join(dir, "a", "s1.jsonl"), tc.path}, noSkip)
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, found)
		})
	}
}

func TestWalk_Glob(t *testing.T) {
	dir := hostileDir(t)
	var skipped []error
	found, err := Walk([]string{filepath.Join(dir, "**", "s*.json*")}, func(err error) { skipped = append(skipped, err) })
	require.NoError(t, err)
	require.Equal(t, hostileTranscripts(dir), foundPaths(found))
	require.Empty(t, skipped)

	// A glob matching directories walks them; one matching a FIFO skips it.
	skipped = nil
	found, err = Walk([]string{filepath.Join(dir, "?"), filepath.Join(dir, "a", "f*")}, func(err error) { skipped = append(skipped, err) })
	require.NoError(t, err)
	require.Len(t, found, 3, "each file once, whatever reaches it")
	require.Len(t, skipped, 3)
}

func TestWalk_NamedFileWhateverItsName(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, filepath.Join(dir, "transcript.log"), claudeUser+"\n")
	found, err := Walk([]string{path, path}, func(err error) { t.Error(err) })
	require.NoError(t, err)
	require.Equal(t, []string{path}, foundPaths(found), "once")
}
