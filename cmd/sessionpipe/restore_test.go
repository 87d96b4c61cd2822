package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
)

// One flipped byte in one segment costs the chunk it hit: restore writes
// every other file, lists the damaged piece and the file it affected,
// and exits 1.
func TestRestore_DamagedArchive(t *testing.T) {
	archive := t.TempDir()
	a, err := export.NewArchiveWriter(export.ArchiveConfig{Dir: archive})
	require.NoError(t, err)
	for i, day := range []int{1, 2, 3} {
		data := strings.Repeat("{\"n\":1}\n", 3)
		c := &bus.RawChunk{
			Host: "laptop", Path: "/home/u/s" + string(rune('a'+i)) + ".jsonl", Format: "pi", File: "1:" + string(rune('1'+i)),
			End: int64(len(data)), Line: 1, Lines: 3, TS: time.Date(2026, 11, day, 9, 0, 0, 0, time.UTC), Data: []byte(data),
		}
		require.NoError(t, a.Write(t.Context(), c, uint64(i+1)))
	}
	require.NoError(t, a.Close(t.Context()))
	segs, err := export.ReadArchiveManifest(archive)
	require.NoError(t, err)
	require.Len(t, segs, 3)
	seg := filepath.Join(archive, filepath.FromSlash(segs[1].Path)) // sb.jsonl's
	index, err := export.ReadSegmentIndex(seg)
	require.NoError(t, err)
	data, err := os.ReadFile(seg)
	require.NoError(t, err)
	data[index[0].FrameOffset+index[0].FrameBytes/2] ^= 0x40
	require.NoError(t, os.WriteFile(seg, data, 0o644))

	out := t.TempDir()
	code, stdout, stderr := runCommand(t, "restore", "-archive", archive, "-out", out)
	require.Equal(t, exitError, code, stderr)
	for _, f := range []string{"sa.jsonl", "sc.jsonl"} {
		got, err := os.ReadFile(filepath.Join(out, "laptop", "home", "u", f))
		require.NoError(t, err)
		require.Equal(t, strings.Repeat("{\"n\":1}\n", 3), string(got))
		require.Contains(t, stdout, f)
	}
	require.NoFileExists(t, filepath.Join(out, "laptop", "home", "u", "sb.jsonl"))
	require.Contains(t, stderr, "restored 2 files")
	require.Contains(t, stderr, seg+`: chunk 2 of "/home/u/sb.jsonl" on "laptop" (lines 1-3)`)
	require.Contains(t, stderr, "files not restored (no line of them could be read):\n  laptop\t/home/u/sb.jsonl\n")
	require.Contains(t, stderr, "sessionpipe: restore: the archive is damaged")
}
