package archive

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// TestRestore_HoldsOnlyFilesBeingRebuilt: a restore writes each file as
// soon as its last chunk is read and lets its lines go, so it holds the
// files still being appended to, not the archive. Here 60 files are read
// one after another in three chunks each, while one long-lived file gets
// a chunk between every two: a restore holds two files at a time, where
// it held all 61 (1.7 GB of memory for an archive of 790 MB of 20,000
// sessions). Every file comes back byte for byte, in the order of their
// paths.
func TestRestore_HoldsOnlyFilesBeingRebuilt(t *testing.T) {
	dir := t.TempDir()
	a, err := NewArchiveWriter(ArchiveConfig{Dir: dir, SegmentBytes: 4 << 10})
	require.NoError(t, err)
	ts := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	want := map[string]string{}
	seq := uint64(0)
	lines := map[string]int64{}
	write := func(path, file string, text string) {
		seq++
		n := int64(strings.Count(text, "\n"))
		c := &bus.RawChunk{Host: "h", Path: path, Format: "pi", File: file, Offset: int64(len(want[path])),
			End: int64(len(want[path]) + len(text)), Line: lines[path] + 1, Lines: n, TS: ts, Data: []byte(text)}
		require.NoError(t, a.Write(t.Context(), c, seq))
		want[path] += text
		lines[path] += n
	}
	for i := range 60 {
		path := fmt.Sprintf("/home/u/s%02d.jsonl", i)
		for j := range 3 {
			write(path, fmt.Sprintf("1:%d", i+10), fmt.Sprintf("{\"file\":%d,\"chunk\":%d}\n{\"n\":%d}\n", i, j, i*j))
			write("/home/u/long.jsonl", "1:1", fmt.Sprintf("{\"long\":%d}\n", i*3+j))
		}
	}
	require.NoError(t, a.Close(t.Context()))

	peak := 0
	testHookHeld = func(files int) { peak = max(peak, files) }
	t.Cleanup(func() { testHookHeld = nil })
	out := t.TempDir()
	restored, err := Restore(t.Context(), RestoreConfig{Archive: dir, Out: out})
	require.NoError(t, err)
	require.Len(t, restored, 61)
	require.LessOrEqual(t, peak, 2, "files held at once")
	for i, r := range restored {
		if i > 0 {
			require.Less(t, restored[i-1].Path, r.Path, "sorted by path")
		}
		got, err := os.ReadFile(filepath.Join(out, "h", r.Path))
		require.NoError(t, err)
		require.Equal(t, want[r.Path], string(got), r.Path)
	}
}
