package archive_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// requireEmptyDir fails unless dir holds nothing but the names keep.
func requireEmptyDir(t *testing.T, dir string, keep ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, keep, names, "written outside the restore directory: %s", dir)
}

// The host names "." and ".." (and the empty one) are escaped like any
// other: restoring them writes below -out, never in its parent.
func TestRestore_DotHosts(t *testing.T) {
	dir := t.TempDir()
	archiveAll(t, dir,
		chunk("..", "/p/a.jsonl", "1:1", 1, "a\n"),
		chunk(".", "/p/b.jsonl", "1:2", 1, "b\n"),
		chunk("", "/p/c.jsonl", "1:3", 1, "c\n"),
	)
	parent := t.TempDir()
	out := filepath.Join(parent, "inner")
	files, _ := restoreAll(t, dir, archive.RestoreConfig{Out: out})
	require.Equal(t, map[string]string{
		"%2E%2E/p/a.jsonl": "a\n",
		"%2E/p/b.jsonl":    "b\n",
		"NULL/p/c.jsonl":   "c\n",
	}, files)
	requireEmptyDir(t, parent, "inner")
}

// A symbolic link under -out that leads out of it is never followed,
// with or without Force: the restore of that file fails, and nothing is
// written where the link points.
func TestRestore_SymlinksUnderOut(t *testing.T) {
	arch := t.TempDir()
	archiveAll(t, arch, chunk("h", "/p/a.jsonl", "1:1", 1, "new\n"))
	for _, force := range []bool{false, true} {
		name := map[bool]string{false: "NoForce", true: "Force"}[force]
		t.Run("DirectoryLink/"+name, func(t *testing.T) {
			out, outside := t.TempDir(), t.TempDir()
			require.NoError(t, os.Symlink(outside, filepath.Join(out, "h")))
			_, err := archive.Restore(t.Context(), archive.RestoreConfig{Archive: arch, Out: out, Force: force})
			require.Error(t, err)
			requireEmptyDir(t, outside)
		})
		t.Run("LinkAtTheFile/"+name, func(t *testing.T) {
			out, outside := t.TempDir(), t.TempDir()
			victim := filepath.Join(outside, "victim")
			require.NoError(t, os.WriteFile(victim, []byte("keep\n"), 0o644))
			require.NoError(t, os.MkdirAll(filepath.Join(out, "h", "p"), 0o755))
			link := filepath.Join(out, "h", "p", "a.jsonl")
			require.NoError(t, os.Symlink(victim, link))
			_, err := archive.Restore(t.Context(), archive.RestoreConfig{Archive: arch, Out: out, Force: force})
			if force {
				// The link itself is replaced by the file, inside -out.
				require.NoError(t, err)
				fi, err := os.Lstat(link)
				require.NoError(t, err)
				require.True(t, fi.Mode().IsRegular())
				data, err := os.ReadFile(link)
				require.NoError(t, err)
				require.Equal(t, "new\n", string(data))
			} else {
				require.ErrorContains(t, err, "use -force")
			}
			data, err := os.ReadFile(victim)
			require.NoError(t, err)
			require.Equal(t, "keep\n", string(data))
			requireEmptyDir(t, outside, "victim")
		})
		t.Run("LinkAtTheTemporaryName/"+name, func(t *testing.T) {
			out, outside := t.TempDir(), t.TempDir()
			victim := filepath.Join(outside, "victim")
			require.NoError(t, os.WriteFile(victim, []byte("keep\n"), 0o644))
			require.NoError(t, os.MkdirAll(filepath.Join(out, "h", "p"), 0o755))
			require.NoError(t, os.Symlink(victim, filepath.Join(out, "h", "p", ".a.jsonl.tmp")))
			files, _ := restoreAll(t, arch, archive.RestoreConfig{Out: out, Force: force})
			require.Equal(t, map[string]string{"h/p/a.jsonl": "new\n"}, files)
			data, err := os.ReadFile(victim)
			require.NoError(t, err)
			require.Equal(t, "keep\n", string(data))
		})
	}
}

// restoreDamaged restores archive into a new directory, expecting a
// *RestoreError; it returns the files written (relative path: content),
// what Restore returned, and the error.
func restoreDamaged(t *testing.T, arch string) (map[string]string, []archive.Restored, *archive.RestoreError) {
	t.Helper()
	out := t.TempDir()
	got, err := archive.Restore(t.Context(), archive.RestoreConfig{Archive: arch, Out: out})
	var re *archive.RestoreError
	require.ErrorAs(t, err, &re)
	require.ErrorIs(t, err, archive.ErrSegment)
	files := map[string]string{}
	for _, r := range got {
		rel, err := filepath.Rel(out, r.Out)
		require.NoError(t, err)
		data, err := os.ReadFile(r.Out)
		require.NoError(t, err)
		files[filepath.ToSlash(rel)] = string(data)
	}
	return files, got, re
}

// restoredOf returns the record of the file at path in rs.
func restoredOf(t *testing.T, rs []archive.Restored, path string) archive.Restored {
	t.Helper()
	for _, r := range rs {
		if r.Path == path {
			return r
		}
	}
	require.Failf(t, "not restored", "%s not in %+v", path, rs)
	return archive.Restored{}
}

// Forged line numbers allocate nothing by what they claim: a chunk whose
// lines its own span cannot hold is damage, and a chunk far into a file
// whose start was never archived costs its own lines only.
func TestRestore_ForgedLineNumbers(t *testing.T) {
	far := func(line int64, data string) *bus.RawChunk {
		c := chunk("h", "/p/far.jsonl", "1:9", line, data)
		c.Offset, c.End = line-1, line-1+int64(len(data))
		return c
	}
	ok := t.Run("FarIntoTheFile", func(t *testing.T) {
		dir := t.TempDir()
		archiveAll(t, dir, chunk("h", "/p/a.jsonl", "1:1", 1, "a\n"), far(4_000_000, "x\n"))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		files, got := restoreAll(t, dir, archive.RestoreConfig{})
		runtime.ReadMemStats(&after)
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20), "bytes allocated for a 2-byte chunk at line 4e6")
		require.Equal(t, "x\n", files["h/p/far.jsonl"])
		require.Equal(t, int64(4_000_000-1), restoredOf(t, got, "/p/far.jsonl").Holes)

		dir = t.TempDir()
		archiveAll(t, dir, chunk("h", "/p/a.jsonl", "1:1", 1, "a\n"), far(1e12, "x\n"))
		files, got = restoreAll(t, dir, archive.RestoreConfig{})
		require.Equal(t, "x\n", files["h/p/far.jsonl"])
		require.Equal(t, int64(1e12-1), restoredOf(t, got, "/p/far.jsonl").Holes)
	})
	if !ok {
		return // a restorer that allocates by line numbers would try 10^12 lines below
	}
	t.Run("BeyondItsSpan", func(t *testing.T) {
		dir := t.TempDir()
		forged := chunk("h", "/p/forged.jsonl", "1:9", 1e12, "x\n") // 2 bytes, line 10^12
		archiveAll(t, dir, chunk("h", "/p/a.jsonl", "1:1", 1, "a\n"), forged)
		files, _, re := restoreDamaged(t, dir)
		require.Equal(t, map[string]string{"h/p/a.jsonl": "a\n"}, files)
		require.Len(t, re.Damage, 1)
		require.Equal(t, uint64(2), re.Damage[0].Seq)
		require.Equal(t, "/p/forged.jsonl", re.Damage[0].Path)
		require.ErrorContains(t, re.Damage[0], "cannot end by offset")
		require.Len(t, re.Lost, 1)
		require.Equal(t, "/p/forged.jsonl", re.Lost[0].Path)
	})
}

// dated returns c with its timestamp on the given day of November 2026:
// chunks of different days are in different segments.
func dated(c *bus.RawChunk, day int) *bus.RawChunk {
	c.TS = time.Date(2026, 11, day, 9, 0, 0, 0, time.UTC)
	return c
}

// threeSegments archives files a (days 1 and 3), b (day 2) and c (day 3),
// one segment a day, and returns the segment files by day.
func threeSegments(t *testing.T, dir string) map[int]string {
	t.Helper()
	// A frame per chunk, so that a damaged frame costs one chunk
	// (TestRestore_DamagedSharedFrame has them share).
	archiveWith(t, archive.ArchiveConfig{Dir: dir, FrameBytes: 1},
		dated(chunk("h", "/p/a.jsonl", "1:1", 1, "a1\n", "a2\n"), 1),
		dated(chunk("h", "/p/b.jsonl", "1:2", 1, "b1\n"), 2),
		dated(chunk("h", "/p/a.jsonl", "1:1", 3, "a3\n"), 3),
		dated(chunk("h", "/p/c.jsonl", "1:3", 1, "c1\n", "c2\n"), 3),
	)
	segs, err := archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	require.Len(t, segs, 3)
	byDay := map[int]string{}
	for _, s := range segs {
		day, err := time.Parse(time.DateOnly, s.Partition.Date)
		require.NoError(t, err)
		byDay[day.Day()] = filepath.Join(dir, filepath.FromSlash(s.Path))
	}
	return byDay
}

// One damaged piece of an archive costs what it held, not the restore:
// everything else is written, and the error names the segment, the chunk
// and the files affected.
func TestRestore_DamagedArchive(t *testing.T) {
	t.Run("FlippedByteInAFrame", func(t *testing.T) {
		dir := t.TempDir()
		seg := threeSegments(t, dir)[3]
		index, err := archive.ReadSegmentIndex(seg)
		require.NoError(t, err)
		require.Len(t, index, 2)
		data, err := os.ReadFile(seg)
		require.NoError(t, err)
		c := index[1] // file c's chunk
		data[c.FrameOffset+c.FrameBytes/2] ^= 0x40
		require.NoError(t, os.WriteFile(seg, data, 0o644))

		files, got, re := restoreDamaged(t, dir)
		require.Equal(t, map[string]string{"h/p/a.jsonl": "a1\na2\na3\n", "h/p/b.jsonl": "b1\n"}, files)
		require.Len(t, re.Damage, 2, "%v", re)
		require.Equal(t, seg, re.Damage[0].Segment) // its checksum
		require.Zero(t, re.Damage[0].Seq)
		require.Equal(t, seg, re.Damage[1].Segment) // the chunk
		require.Equal(t, c.Seq, re.Damage[1].Seq)
		require.Equal(t, "/p/c.jsonl", re.Damage[1].Path)
		require.Len(t, re.Lost, 1)
		require.Equal(t, "/p/c.jsonl", re.Lost[0].Path)
		require.True(t, restoredOf(t, got, "/p/a.jsonl").Suspect, "a was restored from the segment whose checksum differs")
		require.False(t, restoredOf(t, got, "/p/b.jsonl").Suspect)
	})
	t.Run("MissingSegment", func(t *testing.T) {
		dir := t.TempDir()
		seg := threeSegments(t, dir)[1]
		require.NoError(t, os.Remove(seg))
		files, got, re := restoreDamaged(t, dir)
		// a's lines 1 and 2 are lost with the segment of day 1.
		require.Equal(t, map[string]string{"h/p/a.jsonl": "a3\n", "h/p/b.jsonl": "b1\n", "h/p/c.jsonl": "c1\nc2\n"}, files)
		require.Len(t, re.Damage, 1)
		require.Equal(t, seg, re.Damage[0].Segment)
		require.ErrorIs(t, re.Damage[0], os.ErrNotExist)
		a := restoredOf(t, got, "/p/a.jsonl")
		require.Equal(t, int64(2), a.Holes)
		require.True(t, a.Suspect, "a lacks the lines the lost segment may have held")
		require.False(t, restoredOf(t, got, "/p/b.jsonl").Suspect)
	})
	t.Run("TruncatedIndex", func(t *testing.T) {
		dir := t.TempDir()
		seg := threeSegments(t, dir)[2]
		fi, err := os.Stat(seg)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(seg, fi.Size()-3))
		files, _, re := restoreDamaged(t, dir)
		require.Equal(t, map[string]string{"h/p/a.jsonl": "a1\na2\na3\n", "h/p/c.jsonl": "c1\nc2\n"}, files)
		require.Len(t, re.Damage, 2, "%v", re) // its size, then its index
		require.ErrorContains(t, re.Damage[1], "no index footer")
	})
	t.Run("ForgedIndex", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			forge func(c *archive.Chunk)
			want  string
		}{
			{"HugeFrame", func(c *archive.Chunk) { c.FrameBytes = 1 << 40 }, "outside the"},
			{"HugeData", func(c *archive.Chunk) { c.Bytes = 1 << 40 }, "bytes of data"},
			{"DataLargerThanSaid", func(c *archive.Chunk) { c.Bytes = 1 }, "the index says 1"},
			{"MoreLinesThanData", func(c *archive.Chunk) { c.Lines, c.End = 1e9, 1e10 }, "complete lines"},
			{"HoleOutOfLines", func(c *archive.Chunk) { c.Holes = []bus.Hole{{Line: 1e9}} }, "hole at line"},
			{"PartOutOfParts", func(c *archive.Chunk) { c.Part, c.Parts = 7, 2 }, "part 7 of 2"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				dir := t.TempDir()
				seg := threeSegments(t, dir)[3]
				forgeIndex(t, dir, seg, func(index []archive.Chunk) { tc.forge(&index[1]) })
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				files, _, re := restoreDamaged(t, dir)
				runtime.ReadMemStats(&after)
				require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20))
				require.Equal(t, map[string]string{"h/p/a.jsonl": "a1\na2\na3\n", "h/p/b.jsonl": "b1\n"}, files)
				require.Len(t, re.Damage, 1, "%v", re)
				require.ErrorContains(t, re.Damage[0], tc.want)
				require.Equal(t, "/p/c.jsonl", re.Lost[0].Path)
			})
		}
	})
	t.Run("BadManifestLine", func(t *testing.T) {
		dir := t.TempDir()
		threeSegments(t, dir)
		p := filepath.Join(dir, parquet.ManifestName)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		lines := strings.SplitAfter(string(data), "\n")
		lines[1] = "{not json\n"
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644))
		files, _, re := restoreDamaged(t, dir)
		require.Len(t, files, 2)
		require.Len(t, re.Damage, 1)
		require.ErrorIs(t, re.Damage[0], parquet.ErrManifest)
	})
}

// A chunk sent in parts of which one is damaged is missing whole; the
// file's lines before it are restored.
func TestRestore_DamagedPart(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("z", 100) + "\n"
	p1 := chunk("h", "/p/f.jsonl", "2:1", 2, big)
	p2, p3 := *p1, *p1
	p1.Data, p1.Part, p1.Parts = []byte(big[:30]), 1, 3
	p2.Data, p2.Part, p2.Parts = []byte(big[30:60]), 2, 3
	p3.Data, p3.Part, p3.Parts = []byte(big[60:]), 3, 3
	p1.End = 200
	p2.End, p3.End = p1.End, p1.End
	archiveWith(t, archive.ArchiveConfig{Dir: dir, FrameBytes: 1}, chunk("h", "/p/f.jsonl", "2:1", 1, "first\n"), p1, &p2, &p3)
	segs, err := archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	require.Len(t, segs, 1)
	seg := filepath.Join(dir, filepath.FromSlash(segs[0].Path))
	forgeIndex(t, dir, seg, func(index []archive.Chunk) { index[2].Bytes++ }) // part 2 says one byte more

	files, got, re := restoreDamaged(t, dir)
	require.Equal(t, map[string]string{"h/p/f.jsonl": "first\n"}, files)
	require.Len(t, re.Damage, 1, "%v", re)
	require.Equal(t, uint64(3), re.Damage[0].Seq)
	require.Equal(t, 1, got[0].Damaged)
	require.Equal(t, []archive.Restored{got[0]}, re.Affected)
}

// forgeIndex rewrites the index of the segment seg of the archive dir
// with edit, and the manifest's record of it, as a forger would: the
// segment matches its checksum, only its claims are false.
func forgeIndex(t *testing.T, dir, seg string, edit func([]archive.Chunk)) {
	t.Helper()
	writeIndex(t, dir, seg, false, edit)
}

// writeIndex rewrites the footer of the segment seg of the archive dir
// with its index edited by edit, compressed under the tag SPX2, or plain
// JSON under SPX1 (as sessionpipe wrote segments before shared frames),
// and the manifest's record of it.
func writeIndex(t *testing.T, dir, seg string, plain bool, edit func([]archive.Chunk)) {
	t.Helper()
	index, err := archive.ReadSegmentIndex(seg)
	require.NoError(t, err)
	data, err := os.ReadFile(seg)
	require.NoError(t, err)
	framesEnd := int64(len(data))
	for _, c := range index {
		framesEnd = c.FrameOffset + c.FrameBytes // the frames are in order
	}
	edit(index)
	js, err := json.Marshal(index)
	require.NoError(t, err)
	tag := "SPX1"
	if !plain {
		enc, err := zstd.NewWriter(nil)
		require.NoError(t, err)
		js, tag = enc.EncodeAll(js, nil), "SPX2"
		require.NoError(t, enc.Close())
	}
	// The footer: a zstd skippable frame holding the index, its length
	// and the tag (see the package documentation, "Archive").
	var foot bytes.Buffer
	binary.Write(&foot, binary.LittleEndian, uint32(0x184D2A5E))
	binary.Write(&foot, binary.LittleEndian, uint32(len(js)+8))
	foot.Write(js)
	binary.Write(&foot, binary.LittleEndian, uint32(len(js)))
	foot.WriteString(tag)
	data = append(data[:framesEnd:framesEnd], foot.Bytes()...)
	require.NoError(t, os.WriteFile(seg, data, 0o644))

	segs, err := archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	var manifest bytes.Buffer
	for _, s := range segs {
		if filepath.Join(dir, filepath.FromSlash(s.Path)) == seg {
			sum := sha256.Sum256(data)
			s.SHA256, s.Bytes = hex.EncodeToString(sum[:]), int64(len(data))
		}
		line, err := json.Marshal(s)
		require.NoError(t, err)
		manifest.Write(append(line, '\n'))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, parquet.ManifestName), manifest.Bytes(), 0o644))
}

// A segment written before shared frames (index plain JSON, tag SPX1, a
// frame per chunk) is read and restored as before; one whose plain index
// claims a shared frame is refused.
func TestRestore_PlainIndex(t *testing.T) {
	dir := t.TempDir()
	archiveWith(t, archive.ArchiveConfig{Dir: dir, FrameBytes: 1},
		chunk("h", "/p/a.jsonl", "1:1", 1, "a1\n", "a2\n"), chunk("h", "/p/b.jsonl", "1:2", 1, "b1\n"))
	segs, err := archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	seg := filepath.Join(dir, filepath.FromSlash(segs[0].Path))
	writeIndex(t, dir, seg, true, func([]archive.Chunk) {})
	data, err := os.ReadFile(seg)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(data, []byte("SPX1")))
	files, _ := restoreAll(t, dir, archive.RestoreConfig{})
	require.Equal(t, map[string]string{"h/p/a.jsonl": "a1\na2\n", "h/p/b.jsonl": "b1\n"}, files)

	writeIndex(t, dir, seg, true, func(index []archive.Chunk) { index[1].FrameData = 10 })
	_, err = archive.ReadSegmentIndex(seg)
	require.ErrorContains(t, err, "shared frame")
}

// The errors of a damaged archive say what they are.
func TestSegmentError_Error(t *testing.T) {
	e := &archive.SegmentError{Segment: "a/seg-1-2.jsonl.zst", Seq: 2, Host: "h", Path: "/p/\x1b[2Jx", Line: 3, Lines: 2, Err: errors.New("bad")}
	require.Equal(t, `a/seg-1-2.jsonl.zst: chunk 2 of "/p/\x1b[2Jx" on "h" (lines 3-4): bad`, e.Error())
	require.ErrorIs(t, e, archive.ErrSegment)
	whole := &archive.SegmentError{Segment: "a/seg\r-1-2.jsonl.zst", Err: os.ErrNotExist}
	require.Equal(t, `"a/seg\r-1-2.jsonl.zst": file does not exist`, whole.Error())
}
