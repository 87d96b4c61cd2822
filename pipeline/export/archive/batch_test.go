package archive_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// TestArchive_BatchSkipsUnwritableSegment: as for Parquet, a segment
// that cannot be written costs only its partition: the others committed
// with it are listed, it stays open and is committed later, and every
// file's lines can be restored.
func TestArchive_BatchSkipsUnwritableSegment(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	a, err := archive.NewArchiveWriter(archive.ArchiveConfig{Dir: dir})
	require.NoError(t, err)
	for i, host := range []string{"a", "b", "c"} {
		c := chunk(host, "/p/"+host+".jsonl", "1:1", 1, fmt.Sprintf("line of %s\n", host))
		require.NoError(t, a.Write(ctx, c, uint64(i+1)))
	}
	blocked := filepath.Join(dir, "format=pi", "date=2026-11-24", "host=b")
	require.NoError(t, os.MkdirAll(filepath.Dir(blocked), 0o755))
	require.NoError(t, os.WriteFile(blocked, []byte("in the way"), 0o644))

	require.ErrorAs(t, a.Flush(ctx), new(*parquet.PartitionError))
	segs, err := archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	require.Len(t, segs, 2)
	require.Equal(t, "format=pi/date=2026-11-24/host=a/seg-1-1.jsonl.zst", segs[0].Path)
	require.Equal(t, "format=pi/date=2026-11-24/host=c/seg-3-3.jsonl.zst", segs[1].Path)
	require.Equal(t, uint64(1), a.Committed())

	require.NoError(t, os.Remove(blocked))
	require.NoError(t, a.Close(ctx))
	require.Equal(t, uint64(3), a.Committed())
	segs, err = archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	require.Len(t, segs, 3)
	files, _ := restoreAll(t, dir, archive.RestoreConfig{})
	require.Equal(t, map[string]string{
		"a/p/a.jsonl": "line of a\n",
		"b/p/b.jsonl": "line of b\n",
		"c/p/c.jsonl": "line of c\n",
	}, files)
}
