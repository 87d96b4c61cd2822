package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
)

// One flipped byte in one segment costs the chunk it hit: restore writes
// every other file, lists the damaged piece and the file it affected,
// and exits 1.
func TestRestore_DamagedArchive(t *testing.T) {
	arch := t.TempDir()
	a, err := archive.NewArchiveWriter(archive.ArchiveConfig{Dir: arch})
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
	segs, err := archive.ReadArchiveManifest(arch)
	require.NoError(t, err)
	require.Len(t, segs, 3)
	seg := filepath.Join(arch, filepath.FromSlash(segs[1].Path)) // sb.jsonl's
	index, err := archive.ReadSegmentIndex(seg)
	require.NoError(t, err)
	data, err := os.ReadFile(seg)
	require.NoError(t, err)
	data[index[0].FrameOffset+index[0].FrameBytes/2] ^= 0x40
	require.NoError(t, os.WriteFile(seg, data, 0o644))

	out := t.TempDir()
	code, stdout, stderr := runCommand(t, "restore", "-archive", arch, "-out", out)
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

// -since and -until select by the date lines were archived: a file with a
// line in the range is restored, with what was archived up to -until (a
// later segment is not read: the file as it was then).
func TestRestore_SinceAndUntil(t *testing.T) {
	arch := t.TempDir()
	a, err := archive.NewArchiveWriter(archive.ArchiveConfig{Dir: arch})
	require.NoError(t, err)
	line := "{\"n\":1}\n"
	var seq uint64
	write := func(name string, day int, off int64) {
		seq++
		c := &bus.RawChunk{
			Host: "laptop", Path: "/home/u/" + name, Format: "pi", File: "1:" + name, Offset: off,
			End: off + int64(len(line)), Line: off/int64(len(line)) + 1, Lines: 1, TS: time.Date(2026, 11, day, 9, 0, 0, 0, time.UTC), Data: []byte(line),
		}
		require.NoError(t, a.Write(t.Context(), c, seq))
	}
	write("early.jsonl", 1, 0)
	write("grows.jsonl", 2, 0)
	write("grows.jsonl", 4, int64(len(line)))
	write("late.jsonl", 5, 0)
	require.NoError(t, a.Close(t.Context()))

	restored := func(args ...string) map[string]string {
		out := t.TempDir()
		code, _, stderr := runCommand(t, append([]string{"restore", "-archive", arch, "-out", out}, args...)...)
		require.Equal(t, exitOK, code, stderr)
		got := map[string]string{}
		entries, _ := os.ReadDir(filepath.Join(out, "laptop", "home", "u"))
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(out, "laptop", "home", "u", e.Name()))
			require.NoError(t, err)
			got[e.Name()] = string(b)
		}
		return got
	}
	require.Equal(t, map[string]string{"early.jsonl": line, "grows.jsonl": line + line, "late.jsonl": line}, restored())
	require.Equal(t, map[string]string{"early.jsonl": line, "grows.jsonl": line}, restored("-until", "2026-11-03"))
	require.Equal(t, map[string]string{"grows.jsonl": line}, restored("-since", "2026-11-02", "-until", "2026-11-03"))
	code, _, stderr := runCommand(t, "restore", "-archive", arch, "-out", t.TempDir(), "-since", "2026-11-03", "-until", "2026-11-02")
	require.Equal(t, exitUsage, code, stderr)
}
