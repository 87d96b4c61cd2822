package parquet_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// blockPartition puts a regular file where the partition directory of
// host's entryAt entries belongs, and returns its path.
func blockPartition(t *testing.T, dir, host string) string {
	t.Helper()
	parent := filepath.Join(dir, "format=claude-code", "date=2026-07-01")
	require.NoError(t, os.MkdirAll(parent, 0o755))
	blocker := filepath.Join(parent, "host="+host)
	require.NoError(t, os.WriteFile(blocker, []byte("in the way"), 0o644))
	return blocker
}

// requireEachOnce checks that the committed files below dir hold the
// sequences 1..n, each in one row.
func requireEachOnce(t *testing.T, dir string, n int) {
	t.Helper()
	checkDir(t, dir)
	c := counts(t, dir)
	require.Equal(t, [3]int64{int64(n), int64(n), int64(n)}, c, "rows, distinct seq, distinct key")
	var lo, hi int64
	require.NoError(t, openDuckDB(t).QueryRow(`SELECT min(seq), max(seq) FROM `+glob(dir)).Scan(&lo, &hi))
	require.Equal(t, [2]int64{1, int64(n)}, [2]int64{lo, hi})
}

// A file where one partition's directory belongs fails that partition's
// commit only: the other partition's file is committed, the position
// stays below the blocked part (nothing is acknowledged past it), the
// failure is a PartitionError naming the path and counted; once the file
// is gone, the next commit takes everything, each entry once.
func TestWriter_BlockedPartition(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	blocker := blockPartition(t, dir, "b")
	w := mustWriter(t, parquet.Config{Dir: dir})

	var entries []schema.Entry
	for i := range 10 {
		host := []string{"b", "a"}[i%2] // b first: its part is the oldest
		entries = append(entries, entryAt(host, "s-"+host, strings.Repeat("x", i+1)))
	}
	for i := range entries {
		require.NoError(t, w.Write(ctx, &entries[i], uint64(i+1)))
	}

	err := w.Flush(ctx)
	var pe *parquet.PartitionError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, blocker, pe.Dir)
	require.Equal(t, [2]uint64{1, 9}, [2]uint64{pe.FirstSeq, pe.LastSeq})
	require.ErrorContains(t, err, blocker+" is a file, not a directory: move it away")
	require.Len(t, w.Manifest(), 1, "the other partition is committed")
	require.Equal(t, "format=claude-code/date=2026-07-01/host=a/part-2-10.parquet", w.Manifest()[0].Path)
	require.Equal(t, uint64(0), w.Committed(), "below the blocked part")
	require.Equal(t, int64(1), w.Stats().FailedCommits)

	// More entries of both; a periodic commit tries the blocked part again.
	for i := range 4 {
		e := entryAt([]string{"a", "b"}[i%2], "s", strings.Repeat("y", i+1))
		entries = append(entries, e)
		require.NoError(t, w.Write(ctx, &e, uint64(len(entries))))
	}
	require.ErrorAs(t, w.Flush(ctx), &pe)
	require.Len(t, w.Manifest(), 2)
	require.Equal(t, uint64(0), w.Committed())
	require.Equal(t, int64(2), w.Stats().FailedCommits)

	require.NoError(t, os.Remove(blocker))
	require.NoError(t, w.Flush(ctx))
	require.Equal(t, uint64(len(entries)), w.Committed())
	require.NoError(t, w.Close(ctx))
	requireEachOnce(t, dir, len(entries))
}

// A blocked partition's part that reaches PartBytes in Write waits for the
// next commit instead of failing Write: the other partitions go on. Past
// three quarters of MemoryBytes held by waiting parts, Write fails with
// the PartitionError instead (the entry not taken). Once the file is
// gone, everything is committed, the blocked partition's files in stream
// order, each entry once.
func TestWriter_BlockedPartitionPartBytes(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	blocker := blockPartition(t, dir, "b")
	const memory = 256 << 10
	w := mustWriter(t, parquet.Config{Dir: dir, PartBytes: 16 << 10, MemoryBytes: memory})

	text := strings.Repeat("z", 1000)
	var entries []schema.Entry
	var werr error
	for len(entries) < 2000 {
		host := []string{"a", "b"}[len(entries)%2]
		e := entryAt(host, "s-"+host, text)
		e.EntryID = strconv.Itoa(len(entries))
		if werr = w.Write(ctx, &e, uint64(len(entries)+1)); werr != nil {
			break
		}
		entries = append(entries, e)
	}
	var pe *parquet.PartitionError
	require.ErrorAs(t, werr, &pe, "waiting parts past 3/4 of MemoryBytes: Write fails")
	require.Equal(t, blocker, pe.Dir)
	require.Greater(t, len(entries), 40, "Write went on while the blocked parts could wait (a part is full after a few entries)")
	require.Greater(t, w.Stats().FailedCommits, int64(1))
	require.Equal(t, uint64(1), w.Committed(), "below the blocked partition's first entry, 2")
	var aFiles int
	for _, f := range w.Manifest() {
		require.Equal(t, "a", f.Partition.Host)
		aFiles++
	}
	require.Greater(t, aFiles, 1, "the other partition committed its full parts")

	require.NoError(t, os.Remove(blocker))
	e := entryAt([]string{"a", "b"}[len(entries)%2], "s", text) // the entry not taken, again
	e.EntryID = strconv.Itoa(len(entries))
	entries = append(entries, e)
	require.NoError(t, w.Write(ctx, &e, uint64(len(entries))))
	require.NoError(t, w.Close(ctx))
	require.Equal(t, uint64(len(entries)), w.Committed())
	next := uint64(2)
	for _, f := range w.Manifest() {
		if f.Partition.Host == "b" {
			require.Equal(t, next, f.FirstSeq, "the blocked partition's files in stream order, contiguous")
			next = f.LastSeq + 2
		}
	}
	requireEachOnce(t, dir, len(entries))
}
