package parquet_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// A batch whose rename fails midway (a partition's directory moved to cold
// storage between writing and recording) records the other partitions'
// files and leaves no unlisted file for readers to see twice; the failed
// part stays open and is committed later.
func TestWriter_RenameFailsMidBatch(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	w := mustWriter(t, parquet.Config{Dir: dir})
	for i, host := range []string{"a", "b", "c"} {
		e := entryAt(host, "s", "t")
		require.NoError(t, w.Write(ctx, &e, uint64(i+1)))
	}
	hostB := filepath.Join(dir, "format=claude-code", "date=2026-07-01", "host=b")
	written := 0
	parquet.SetHook(w, func(s string) {
		if s == "written" {
			if written++; written == 3 {
				require.NoError(t, os.Rename(hostB, filepath.Join(t.TempDir(), "cold")))
			}
		}
	})
	err := w.Flush(ctx)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorAs(t, err, new(*parquet.PartitionError))
	require.Len(t, w.Manifest(), 2)
	require.Equal(t, uint64(1), w.Committed(), "a and c committed; b open")
	rows, seqs := listedOnDisk(t, dir)
	require.Equal(t, []int64{2, 2}, []int64{rows, seqs})

	parquet.SetHook(w, nil)
	e := entryAt("a", "s", "t2")
	require.NoError(t, w.Write(ctx, &e, 4))
	require.NoError(t, w.Close(ctx))
	require.Equal(t, uint64(4), w.Committed())
	rows, seqs = listedOnDisk(t, dir)
	require.Equal(t, []int64{4, 4}, []int64{rows, seqs})
}

// A manifest renamed into place whose directory then cannot be synced
// (an I/O error) is visible but not known to be durable: the writer
// stops (retrying would list the file a second time), acknowledges
// nothing of it, and a new writer recovers from what the disk holds:
// every entry once.
func TestWriter_ManifestNotDurableStopsTheWriter(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	w := mustWriter(t, parquet.Config{Dir: dir})
	first := entryAt("a", "s", "t")
	require.NoError(t, w.Write(ctx, &first, 1))
	restore := parquet.FailSyncAfterRename(parquet.ManifestName, errors.New("input/output error"))
	defer restore()
	err := w.Flush(ctx)
	require.ErrorIs(t, err, parquet.ErrNotDurable)
	require.Equal(t, uint64(0), w.Committed(), "nothing acknowledged")

	second := entryAt("a", "s", "t2")
	require.ErrorIs(t, w.Write(ctx, &second, 2), parquet.ErrNotDurable, "the writer takes nothing more")
	require.ErrorIs(t, w.CommitDue(ctx, farFuture), parquet.ErrNotDurable)
	require.ErrorIs(t, w.Close(ctx), parquet.ErrNotDurable)

	// The restarted process: the entries are delivered again.
	w2 := mustWriter(t, parquet.Config{Dir: dir})
	require.NoError(t, w2.Write(ctx, &first, 1))
	require.NoError(t, w2.Write(ctx, &second, 2))
	require.NoError(t, w2.Close(ctx))
	require.Equal(t, int64(1), w2.Stats().Skipped, "seq 1 is in the listed file")
	rows, seqs := listedOnDisk(t, dir)
	require.Equal(t, []int64{2, 2}, []int64{rows, seqs})
}

// The same failure in a compaction: the manifest now lists the merged
// file instead of its inputs, so the merged file must stay; the inputs
// are the leftover, removed at the next clean-up. Nothing is lost.
func TestCompact_ManifestNotDurableKeepsTheMergedFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	w := mustWriter(t, parquet.Config{Dir: dir})
	for i := range 2 {
		e := entryAt("a", "s", fmt.Sprint("t", i)) // two entries (compaction keeps one row per key)
		require.NoError(t, w.Write(ctx, &e, uint64(i+1)))
		require.NoError(t, w.Flush(ctx))
	}
	require.NoError(t, w.Close(ctx))
	restore := parquet.FailSyncAfterRename(parquet.ManifestName, errors.New("input/output error"))
	_, err := parquet.Compact(ctx, compactConfig(dir))
	restore()
	require.ErrorIs(t, err, parquet.ErrNotDurable)
	m, err := parquet.ReadManifest(dir)
	require.NoError(t, err)
	require.Len(t, m.Files, 1)
	require.True(t, strings.Contains(m.Files[0].Path, "-c"), "the merged file is listed: %s", m.Files[0].Path)
	require.FileExists(t, filepath.Join(dir, filepath.FromSlash(m.Files[0].Path)))

	require.NoError(t, mustWriter(t, parquet.Config{Dir: dir}).Close(ctx)) // the clean-up at open
	rows, seqs := listedOnDisk(t, dir)
	require.Equal(t, []int64{2, 2}, []int64{rows, seqs})
}
