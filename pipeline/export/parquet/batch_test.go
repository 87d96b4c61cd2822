package parquet_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// TestWriter_FlushManyPartitionsOneManifestWrite flushes 300 open
// partitions (a backfill of months of history): every file is written,
// and the manifest is changed once for all of them, not once per file.
func TestWriter_FlushManyPartitionsOneManifestWrite(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	w := mustWriter(t, parquet.Config{Dir: dir})
	steps := map[string]int{}
	parquet.SetHook(w, func(s string) { steps[s]++ })
	const days = 300
	day0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for i := range days {
		e := entryAt("h", fmt.Sprintf("s%d", i), "x")
		e.TS = day0.AddDate(0, 0, i)
		require.NoError(t, w.Write(ctx, &e, uint64(i+1)))
	}
	require.NoError(t, w.Flush(ctx))
	require.Equal(t, map[string]int{"written": days, "renamed": 1, "recorded": 1}, steps)
	require.Equal(t, uint64(days), w.Committed())

	man, err := parquet.ReadManifest(dir)
	require.NoError(t, err)
	require.Len(t, man.Files, days)
	var n, dates int64
	require.NoError(t, openDuckDB(t).QueryRow(`SELECT count(*), count(DISTINCT date) FROM `+glob(dir)).Scan(&n, &dates))
	require.Equal(t, []int64{days, days}, []int64{n, dates})
}

// TestWriter_BatchSkipsUnwritablePart: when one part of a batch cannot
// be written (here its partition directory is blocked by a file), the
// other parts are committed, it stays open (Committed below it), no
// temporary file is left, and a later flush commits it once the cause is
// gone.
func TestWriter_BatchSkipsUnwritablePart(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	w := mustWriter(t, parquet.Config{Dir: dir})
	var entries []schema.Entry
	for i, host := range []string{"a", "b", "c"} {
		e := entryAt(host, "s", strings.Repeat("t", 10+i))
		entries = append(entries, e)
	}
	for i := range entries {
		require.NoError(t, w.Write(ctx, &entries[i], uint64(i+1)))
	}
	blocked := filepath.Join(dir, "format=claude-code", "date=2026-07-01", "host=b")
	require.NoError(t, os.MkdirAll(filepath.Dir(blocked), 0o755))
	require.NoError(t, os.WriteFile(blocked, []byte("in the way"), 0o644))

	require.ErrorAs(t, w.Flush(ctx), new(*parquet.PartitionError))
	require.Len(t, w.Manifest(), 2)
	require.Equal(t, "format=claude-code/date=2026-07-01/host=a/part-1-1.parquet", w.Manifest()[0].Path)
	require.Equal(t, "format=claude-code/date=2026-07-01/host=c/part-3-3.parquet", w.Manifest()[1].Path)
	require.Equal(t, uint64(1), w.Committed(), "b (seq 2) is not committed")
	require.Positive(t, w.Buffered())
	tmps, _ := scan(t, dir)
	require.Empty(t, tmps)

	require.NoError(t, os.Remove(blocked))
	require.NoError(t, w.Close(ctx))
	require.Equal(t, uint64(3), w.Committed())
	require.Zero(t, w.Buffered())
	var n, seqs int64
	require.NoError(t, openDuckDB(t).QueryRow(`SELECT count(*), count(DISTINCT seq) FROM `+glob(dir)).Scan(&n, &seqs))
	require.Equal(t, []int64{3, 3}, []int64{n, seqs})
}

// TestWriter_PartitionMovedAwayWhileRunning: a user moves a closed day's
// partition to cold storage while the writer runs; a late entry of that
// day recreates the directory and is committed (the writer's cache of
// the directories it made must not make every retry fail).
func TestWriter_PartitionMovedAwayWhileRunning(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	w := mustWriter(t, parquet.Config{Dir: dir})
	e := entryAt("h", "s", "first")
	require.NoError(t, w.Write(ctx, &e, 1))
	require.NoError(t, w.Flush(ctx))
	day := filepath.Join(dir, "format=claude-code", "date=2026-07-01")
	require.NoError(t, os.Rename(day, filepath.Join(t.TempDir(), "cold")))

	late := entryAt("h", "s", "late")
	require.NoError(t, w.Write(ctx, &late, 2))
	require.NoError(t, w.Flush(ctx))
	require.FileExists(t, filepath.Join(day, "host=h", "part-2-2.parquet"))
	require.Equal(t, uint64(2), w.Committed())

	// The same for the archive.
	adir := t.TempDir()
	a, err := archive.NewArchiveWriter(archive.ArchiveConfig{Dir: adir})
	require.NoError(t, err)
	require.NoError(t, a.Write(ctx, chunk("h", "/p/a.jsonl", "1:1", 1, "one\n"), 1))
	require.NoError(t, a.Flush(ctx))
	aday := filepath.Join(adir, "format=pi", "date=2026-11-24")
	require.NoError(t, os.RemoveAll(aday))
	require.NoError(t, a.Write(ctx, chunk("h", "/p/a.jsonl", "1:1", 2, "two\n"), 2))
	require.NoError(t, a.Close(ctx))
	require.FileExists(t, filepath.Join(aday, "host=h", "seg-2-2.jsonl.zst"))
}

// TestWriter_SeesCompactionBetweenCommits: a writer keeps its own copy of
// the manifest between commits, and must notice that a compaction
// replaced it: after a merge, the next commit lists the merged file and
// the new one, never the merged inputs again.
func TestWriter_SeesCompactionBetweenCommits(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	w := mustWriter(t, parquet.Config{Dir: dir, PartBytes: 8 << 10, RowGroupRows: 100})
	entries := genEntries(600)
	var day []schema.Entry
	for _, e := range entries {
		if e.Host == "host-0" && e.Format == schema.FormatClaudeCode && e.TS.Day() == 1 {
			day = append(day, e)
		}
	}
	for i := range day[:len(day)-1] {
		require.NoError(t, w.Write(ctx, &day[i], uint64(i+1)))
	}
	require.NoError(t, w.Flush(ctx))
	before := len(w.Manifest())
	require.Greater(t, before, 2)

	st, err := parquet.Compact(ctx, parquet.CompactConfig{Dir: dir, ClosedBefore: farFuture, RowGroupRows: 100, MinFiles: 2})
	require.NoError(t, err)
	require.Equal(t, 1, st.FilesOut)

	last := day[len(day)-1]
	require.NoError(t, w.Write(ctx, &last, uint64(len(day))))
	require.NoError(t, w.Flush(ctx))
	man, err := parquet.ReadManifest(dir)
	require.NoError(t, err)
	require.Len(t, man.Files, 2, "the merged file and the new one")
	require.Contains(t, man.Files[0].Path, "-c", "a merged file's name")
	require.Equal(t, man.Files, w.Manifest())
	require.Equal(t, [3]int64{int64(len(day)), int64(len(day)), int64(len(day))}, counts(t, dir))
}
