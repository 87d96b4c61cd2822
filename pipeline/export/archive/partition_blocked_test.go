package archive_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// The archive writer commits the segments of the other partitions when
// one partition's directory is blocked, and the blocked one after.
func TestArchiveWriter_BlockedPartition(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	parent := filepath.Join(dir, "format=pi", "date=2026-11-24")
	require.NoError(t, os.MkdirAll(parent, 0o755))
	blocker := filepath.Join(parent, "host=b")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	a, err := archive.NewArchiveWriter(archive.ArchiveConfig{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, a.Write(ctx, chunk("b", "/x", "f1", 1, "one\n"), 1))
	require.NoError(t, a.Write(ctx, chunk("a", "/y", "f2", 1, "two\n"), 2))

	err = a.Flush(ctx)
	var pe *parquet.PartitionError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, blocker, pe.Dir)
	require.Len(t, a.Segments(), 1)
	require.Equal(t, "a", a.Segments()[0].Partition.Host)
	require.Equal(t, uint64(0), a.Committed())
	require.Equal(t, int64(1), a.Stats().FailedCommits)

	require.NoError(t, os.Remove(blocker))
	require.NoError(t, a.Close(ctx))
	require.Equal(t, uint64(2), a.Committed())
	segs, err := archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	require.Len(t, segs, 2)
}

// A blocked partition's segment that is full in Write waits for the next
// commit instead of failing Write, up to three quarters of MemoryBytes;
// once the file is gone, every chunk is committed, the blocked
// partition's segments in stream order.
func TestArchiveWriter_BlockedPartitionFullSegments(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	parent := filepath.Join(dir, "format=pi", "date=2026-11-24")
	require.NoError(t, os.MkdirAll(parent, 0o755))
	blocker := filepath.Join(parent, "host=b")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	a, err := archive.NewArchiveWriter(archive.ArchiveConfig{Dir: dir, SegmentBytes: 4 << 10, MemoryBytes: 64 << 10})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	line := func() string { // incompressible: a frame is about as large
		b := make([]byte, 1000)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b) + "\n"
	}
	seq := uint64(0)
	var werr error
	for seq < 1000 {
		host := []string{"a", "b"}[seq%2]
		if werr = a.Write(ctx, chunk(host, "/"+host, "f", int64(seq/2+1), line()), seq+1); werr != nil {
			break
		}
		seq++
	}
	var pe *parquet.PartitionError
	require.ErrorAs(t, werr, &pe, "waiting segments past 3/4 of MemoryBytes: Write fails")
	require.Equal(t, blocker, pe.Dir)
	require.Greater(t, seq, uint64(20), "Write went on while the full segments could wait")
	require.Equal(t, uint64(1), a.Committed(), "below the blocked partition's first chunk, 2")

	require.NoError(t, os.Remove(blocker))
	host := []string{"a", "b"}[seq%2]
	require.NoError(t, a.Write(ctx, chunk(host, "/"+host, "f", int64(seq/2+1), line()), seq+1))
	seq++
	require.NoError(t, a.Close(ctx))
	require.Equal(t, seq, a.Committed())
	segs, err := archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	next := map[string]uint64{"a": 1, "b": 2}
	var chunks int
	for _, s := range segs {
		h := s.Partition.Host
		require.Equal(t, next[h], s.FirstSeq, "%s's segments in stream order, contiguous", h)
		next[h] = s.LastSeq + 2
		chunks += s.Chunks
	}
	require.Equal(t, int(seq), chunks, "each chunk once")
}
