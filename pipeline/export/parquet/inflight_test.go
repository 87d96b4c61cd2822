package parquet_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// manifestPaths returns the paths the writer's manifest lists, in order.
func manifestPaths(w *parquet.Writer) []string {
	var paths []string
	for _, f := range w.Manifest() {
		paths = append(paths, f.Path)
	}
	return paths
}

// seqWriter returns a function that writes the next entry (sequences 1,
// 2, …) of host's session, each with its own text.
func seqWriter(t *testing.T, w *parquet.Writer) func(host string) {
	var seq uint64
	return func(host string) {
		t.Helper()
		seq++
		e := entryAt(host, "s-"+host, "e"+strings.Repeat("x", int(seq)))
		require.NoError(t, w.Write(t.Context(), &e, seq))
	}
}

// requireFlushed flushes w and checks that the n entries handed over are
// committed, each once, in the files paths (in the manifest's order).
func requireFlushed(t *testing.T, w *parquet.Writer, dir string, n int, paths ...string) {
	t.Helper()
	require.NoError(t, w.Flush(t.Context()))
	require.Equal(t, uint64(n), w.Committed())
	require.Equal(t, paths, manifestPaths(w))
	requireEachOnce(t, dir, n)
}

// A commit taken out with Begin is written while entries go on into new
// parts of the same partitions: the position stays below the parts in
// flight until Finish, then below the new parts, and every entry ends in
// one file, the partitions' files in stream order.
func TestWriter_WritesBesideCommit(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	w := mustWriter(t, parquet.Config{Dir: dir})
	write := seqWriter(t, w)
	for i := range 6 {
		write([]string{"a", "b"}[i%2])
	}

	c, err := w.Begin(time.Now(), true)
	require.NoError(t, err)
	require.NotNil(t, c)
	written := make(chan struct{})
	release := make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce) // a failed check must not leave the commit held
	parquet.SetHook(w, func(step string) {
		if step == "written" {
			select {
			case <-written:
			default:
				close(written)
				<-release // hold the commit after its first file
			}
		}
	})
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		c.Run(ctx)
	}()
	<-written

	// The commit is in the middle of its files: entries go on.
	for i := range 4 {
		write([]string{"a", "b"}[i%2])
	}
	require.Equal(t, uint64(0), w.Committed(), "below the parts in flight")
	require.Equal(t, int64(10), w.Stats().Entries)

	releaseOnce()
	<-ran
	require.NoError(t, w.Finish(c))
	require.NoError(t, w.Finish(c), "a finished commit returns its outcome again")
	require.Equal(t, uint64(6), w.Committed(), "below the new parts")
	require.Equal(t, []string{
		"format=claude-code/date=2026-07-01/host=a/part-1-5.parquet",
		"format=claude-code/date=2026-07-01/host=b/part-2-6.parquet",
	}, manifestPaths(w))

	requireFlushed(t, w, dir, 10,
		"format=claude-code/date=2026-07-01/host=a/part-1-5.parquet",
		"format=claude-code/date=2026-07-01/host=b/part-2-6.parquet",
		"format=claude-code/date=2026-07-01/host=a/part-7-9.parquet",
		"format=claude-code/date=2026-07-01/host=b/part-8-10.parquet")
}

// A part Write must commit (it reached PartBytes) while a commit of its
// partition is in flight waits for that commit, so that the partition's
// files are recorded in stream order; Finish then returns the outcome the
// waiting Write already applied.
func TestWriter_WriteWaitsForCommitInFlight(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	w := mustWriter(t, parquet.Config{Dir: dir, PartBytes: 16 << 10})
	text := strings.Repeat("z", 1000)
	var entries []schema.Entry
	for i := range 40 {
		entries = append(entries, entryAt("a", "s", text+string(rune('a'+i%26))+strings.Repeat("y", i)))
	}
	require.NoError(t, w.Write(ctx, &entries[0], 1))
	c, err := w.Begin(time.Now(), true)
	require.NoError(t, err)

	// Fill a new part of the same partition past PartBytes: the Write
	// that must commit it cannot return before the commit in flight ran.
	wrote := make(chan error, 1)
	go func() {
		for i := 1; i < len(entries); i++ {
			if err := w.Write(ctx, &entries[i], uint64(i+1)); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	c.Run(ctx)
	require.NoError(t, <-wrote)
	require.NoError(t, w.Finish(c))
	require.NoError(t, w.Flush(ctx))

	paths := manifestPaths(w)
	require.Greater(t, len(paths), 2, "the new part was committed in Write")
	require.Equal(t, "format=claude-code/date=2026-07-01/host=a/part-1-1.parquet", paths[0], "the commit in flight first")
	var last uint64
	for _, f := range w.Manifest() {
		require.Greater(t, f.FirstSeq, last, "the partition's files in stream order: %v", paths)
		last = f.LastSeq
	}
	require.Equal(t, uint64(len(entries)), w.Committed())
	requireEachOnce(t, dir, len(entries))
}

// A partition whose commit fails while it is in flight keeps its part
// ahead of the part its later entries went into: the position stays below
// it, and once the partition can be written the two are committed in
// order, each entry once.
func TestWriter_CommitInFlightFails(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	blocker := blockPartition(t, dir, "b")
	w := mustWriter(t, parquet.Config{Dir: dir})
	write := seqWriter(t, w)
	for i := range 4 {
		write([]string{"b", "a"}[i%2])
	}
	c, err := w.Begin(time.Now(), true)
	require.NoError(t, err)
	write("b") // 5: a new part of b, beside the one in flight
	write("a") // 6
	c.Run(ctx)
	err = w.Finish(c)
	var pe *parquet.PartitionError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, [2]uint64{1, 3}, [2]uint64{pe.FirstSeq, pe.LastSeq})
	require.Equal(t, []string{"format=claude-code/date=2026-07-01/host=a/part-2-4.parquet"}, manifestPaths(w))
	require.Equal(t, uint64(0), w.Committed(), "below the failed part")
	require.Equal(t, int64(1), w.Stats().FailedCommits)

	// Still blocked: the periodic commit tries the failed part first and
	// leaves the later part of b alone.
	err = w.CommitDue(ctx, time.Now())
	require.ErrorAs(t, err, &pe)
	require.Equal(t, uint64(0), w.Committed())

	require.NoError(t, os.Remove(blocker))
	requireFlushed(t, w, dir, 6,
		"format=claude-code/date=2026-07-01/host=a/part-2-4.parquet",
		"format=claude-code/date=2026-07-01/host=b/part-1-3.parquet",
		"format=claude-code/date=2026-07-01/host=b/part-5-5.parquet",
		"format=claude-code/date=2026-07-01/host=a/part-6-6.parquet")
}

// A commit cancelled in flight, after its first file was written, stops
// there: it returns the cancellation, and what it did not record stays
// below the position and is committed by the next commit, each entry once.
// Begin with nothing due returns nil, and a nil commit runs and finishes
// as nothing.
func TestWriter_CommitInFlightCancelled(t *testing.T) {
	dir := t.TempDir()
	w := mustWriter(t, parquet.Config{Dir: dir})
	c, err := w.Begin(time.Now(), true)
	require.NoError(t, err)
	require.Nil(t, c, "nothing to commit")
	c.Run(t.Context())
	require.NoError(t, w.Finish(c))

	write := seqWriter(t, w)
	for i := range 6 {
		write([]string{"a", "b", "c"}[i%3])
	}
	c, err = w.Begin(time.Now(), true)
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(t.Context())
	files := 0
	parquet.SetHook(w, func(step string) {
		if step == "written" {
			if files++; files == 1 {
				cancel() // while the commit is in flight, after its first file
			}
		}
	})
	c.Run(cctx)
	parquet.SetHook(w, nil)
	require.ErrorIs(t, w.Finish(c), context.Canceled)
	require.Equal(t, 1, files, "the commit stopped after the file it was writing")
	// The file written may be recorded, or not (the manifest lock is
	// taken with the cancelled context): either way nothing past it.
	const a14, b25, c36 = "format=claude-code/date=2026-07-01/host=a/part-1-4.parquet",
		"format=claude-code/date=2026-07-01/host=b/part-2-5.parquet",
		"format=claude-code/date=2026-07-01/host=c/part-3-6.parquet"
	switch len(manifestPaths(w)) {
	case 0:
		require.Equal(t, uint64(0), w.Committed(), "below the first part")
		write("a") // 7: into a's part, kept open
		requireFlushed(t, w, dir, 7, "format=claude-code/date=2026-07-01/host=a/part-1-7.parquet", b25, c36)
	case 1:
		require.Equal(t, []string{a14}, manifestPaths(w))
		require.Equal(t, uint64(1), w.Committed(), "below the second part")
		write("a") // 7: a new part of a
		requireFlushed(t, w, dir, 7, a14, b25, c36, "format=claude-code/date=2026-07-01/host=a/part-7-7.parquet")
	default:
		t.Fatalf("recorded past the cancellation: %v", manifestPaths(w))
	}
}
