package archive_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
)

// archiveAll writes chunks with sequences 1..n into a new archive and
// closes it.
func archiveAll(t *testing.T, dir string, chunks ...*bus.RawChunk) {
	t.Helper()
	archiveWith(t, archive.ArchiveConfig{Dir: dir}, chunks...)
}

// archiveWith is archiveAll with the writer's configuration cfg.
func archiveWith(t *testing.T, cfg archive.ArchiveConfig, chunks ...*bus.RawChunk) {
	t.Helper()
	a, err := archive.NewArchiveWriter(cfg)
	require.NoError(t, err)
	for i, c := range chunks {
		require.NoError(t, a.Write(t.Context(), c, uint64(i+1)))
	}
	require.NoError(t, a.Close(t.Context()))
	require.Equal(t, uint64(len(chunks)), a.Committed(), "every chunk committed")
}

// plainZstd returns what a plain zstd reader reads from the file at p.
func plainZstd(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	zr, err := zstd.NewReader(f)
	require.NoError(t, err)
	defer zr.Close()
	plain, err := io.ReadAll(zr)
	require.NoError(t, err)
	return string(plain)
}

// Restore follows what happened to a file: appends, a re-send after a
// restart, a rewrite read again from the start, a rename, an inode reused
// by another file.
func TestRestore_FileHistory(t *testing.T) {
	dir := t.TempDir()
	archiveAll(t, dir,
		chunk("h", "/p/a.jsonl", "1:1", 1, "a1\n", "a2\n"),
		chunk("h", "/p/a.jsonl", "1:1", 3, "a3\n"),
		chunk("h", "/p/a.jsonl", "1:1", 2, "a2\n", "a3\n", "a4\n"), // re-sent after a restart, one more
		chunk("h", "/p/b.jsonl", "1:2", 1, "b1\n", "b2\n"),
		chunk("h", "/p/b.jsonl", "1:2", 1, "B1\n"), // rewritten shorter, read again
		chunk("h", "/p/b.jsonl", "1:2", 2, "B2\n"),
		chunk("h", "/p/c.jsonl", "1:3", 1, "c1\n"),
		chunk("h", "/p/c-renamed.jsonl", "1:3", 2, "c2\n"), // renamed while followed
		chunk("h", "/p/d.jsonl", "1:4", 1, "d1\n"),
		chunk("h", "/p/e.jsonl", "1:4", 1, "e1\n"), // d deleted, its inode reused by e
	)
	files, _ := restoreAll(t, dir, archive.RestoreConfig{})
	require.Equal(t, map[string]string{
		"h/p/a.jsonl":         "a1\na2\na3\na4\n",
		"h/p/b.jsonl":         "B1\nB2\n",
		"h/p/c-renamed.jsonl": "c1\nc2\n",
		"h/p/d.jsonl":         "d1\n",
		"h/p/e.jsonl":         "e1\n",
	}, files)

	only, _ := restoreAll(t, dir, archive.RestoreConfig{Session: "s-1:2"})
	require.Equal(t, map[string]string{"h/p/b.jsonl": "B1\nB2\n"}, only)
	none, _ := restoreAll(t, dir, archive.RestoreConfig{Since: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)})
	require.Empty(t, none)
	none, _ = restoreAll(t, dir, archive.RestoreConfig{Host: "other"})
	require.Empty(t, none)
}

// A host or path chosen to escape — "../..", slashes, NUL — stays inside
// its partition and inside the restore directory.
func TestArchive_HostilePartitionsAndPaths(t *testing.T) {
	dir := t.TempDir()
	archiveAll(t, dir,
		chunk("../../etc", "/../../../etc/passwd", "9:9", 1, "x\n"),
		chunk("a/b=c\x00d", "relative/../../up.jsonl", "9:8", 1, "y\n"),
	)
	segs, err := archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	require.Len(t, segs, 2)
	for _, s := range segs {
		require.Equal(t, 3, strings.Count(s.Path, "/"), "three partition levels, then the segment: %s", s.Path)
		require.NotContains(t, strings.Split(s.Path, "/"), "..")
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(s.Path)))
		require.NoError(t, err)
	}
	out := t.TempDir()
	files, got := restoreAll(t, dir, archive.RestoreConfig{Out: out})
	require.Len(t, got, 2)
	for rel := range files {
		require.NotContains(t, strings.Split(rel, "/"), "..", rel)
	}
	require.Equal(t, "x\n", files["..%2F..%2Fetc/etc/passwd"])
	require.Equal(t, "y\n", files["a%2Fb%3Dc%00d/up.jsonl"])
}

// Lines too long to archive are holes: the rest is restored, and the
// holes are counted.
func TestRestore_HolesAndParts(t *testing.T) {
	dir := t.TempDir()
	c := chunk("h", "/p/f.jsonl", "2:1", 1, "l1\n", "l3\n")
	c.Lines = 3
	c.Holes = []bus.Hole{{Line: 2, Offset: 3, End: 100}}
	big := strings.Repeat("z", 100) + "\n"
	p1 := chunk("h", "/p/f.jsonl", "2:1", 4, big)
	p2 := *p1
	p1.Data, p1.Part, p1.Parts = []byte(big[:40]), 1, 2
	p2.Data, p2.Part, p2.Parts = []byte(big[40:]), 2, 2
	archiveAll(t, dir, c, p1, &p2)
	files, got := restoreAll(t, dir, archive.RestoreConfig{})
	require.Equal(t, "l1\nl3\n"+big, files["h/p/f.jsonl"])
	require.Equal(t, int64(1), got[0].Holes)
	require.Equal(t, int64(3), got[0].Lines)
}

// What a crash leaves (a temporary file, a segment renamed but not
// recorded) is removed at the next open; `zstd -d` reads a segment as the
// lines it holds.
func TestArchive_RecoveryAndPlainZstd(t *testing.T) {
	dir := t.TempDir()
	archiveAll(t, dir, chunk("h", "/p/a.jsonl", "1:1", 1, "one\n", "two\n"))
	segs, err := archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	require.Len(t, segs, 1)
	seg := filepath.Join(dir, filepath.FromSlash(segs[0].Path))
	partDir := filepath.Dir(seg)
	require.NoError(t, os.WriteFile(filepath.Join(partDir, ".seg-5-6.jsonl.zst.tmp"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(partDir, "seg-7-8.jsonl.zst"), []byte("x"), 0o644))
	a, err := archive.NewArchiveWriter(archive.ArchiveConfig{Dir: dir})
	require.NoError(t, err)
	require.Equal(t, int64(2), a.Stats().Removed)
	// A redelivered chunk is skipped: its partition's segment holds it.
	require.NoError(t, a.Write(t.Context(), chunk("h", "/p/a.jsonl", "1:1", 1, "one\n", "two\n"), 1))
	require.Equal(t, int64(1), a.Stats().Skipped)
	require.NoError(t, a.Close(t.Context()))
	entries, err := os.ReadDir(partDir)
	require.NoError(t, err)
	require.Len(t, entries, 1)

	// Any zstd reader reads a segment as the lines it holds: frames one
	// after the other, the index frame skipped (as `zstd -d` does).
	require.Equal(t, "one\ntwo\n", plainZstd(t, seg))
	if bin, err := exec.LookPath("zstd"); err == nil {
		out, err := exec.Command(bin, "-dc", seg).Output()
		require.NoError(t, err)
		require.Equal(t, "one\ntwo\n", string(out))
	}
	index, err := archive.ReadSegmentIndex(seg)
	require.NoError(t, err)
	require.Len(t, index, 1)
	require.Equal(t, "/p/a.jsonl", index[0].Path)
	data, err := os.ReadFile(seg)
	require.NoError(t, err)
	require.Equal(t, segs[0].Bytes, int64(len(data)))
	require.Equal(t, segs[0].SHA256, fmt.Sprintf("%x", sha256.Sum256(data)))
}
