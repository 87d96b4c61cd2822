package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// `exporter compact` merges the small files of closed days: -dry-run
// says what it would do and changes nothing; the run merges them, and
// today's files stay as they are.
func TestCompactCommand(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().UTC().AddDate(0, 0, -5)
	seq := uint64(0)
	write := func(ts time.Time, n int) {
		w, err := parquet.NewWriter(parquet.Config{Dir: dir})
		require.NoError(t, err)
		for i := range n {
			seq++
			e := schema.Entry{Format: schema.FormatPi, Host: "h", SessionID: fmt.Sprintf("s%d", i%3), EntryID: fmt.Sprint(seq),
				Kind: schema.KindMessage, Role: schema.RoleUser, Text: "hello", TS: ts.Add(time.Duration(i) * time.Second)}
			require.NoError(t, w.Write(t.Context(), &e, seq))
		}
		require.NoError(t, w.Close(t.Context()))
	}
	for range 4 {
		write(old, 10) // one small file per writer: four in the old day
	}
	write(time.Now().UTC(), 10)
	write(time.Now().UTC(), 10)
	files := func() []string {
		m, err := parquet.ReadManifest(dir)
		require.NoError(t, err)
		var paths []string
		for _, f := range m.Files {
			paths = append(paths, f.Path)
		}
		return paths
	}
	require.Len(t, files(), 6)

	env := func(string) string { return "" }
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"compact", "-out", dir, "-dry-run", "-log-level", "warn"}, env, &stdout, &stderr))
	require.Contains(t, stderr.String(), "would merge 4 files of 1 partitions into 1")
	require.Equal(t, 1, strings.Count(stdout.String(), "\n"), stdout.String())
	require.Len(t, files(), 6, "a dry run changes nothing")

	stdout.Reset()
	stderr.Reset()
	require.NoError(t, run(t.Context(), []string{"compact", "-out", dir, "-log-level", "warn"}, env, &stdout, &stderr))
	require.Contains(t, stderr.String(), "merged 4 files of 1 partitions into 1")
	after := files()
	require.Len(t, after, 3, "the old day's four files are one; today's two stay")
	merged, err := filepath.Glob(filepath.Join(dir, "*", "date="+old.Format(time.DateOnly), "*", "*.parquet"))
	require.NoError(t, err)
	require.Len(t, merged, 1)

	require.ErrorAs(t, run(t.Context(), []string{"compact", "-out", dir, "extra"}, env, &stdout, &stderr), new(usageError))
}
