package archive_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
)

// liveChunks returns the lines of the transcripts as a live session
// sends them, one chunk per line, the files interleaved.
func liveChunks(t *testing.T, paths ...string) (chunks []*bus.RawChunk, files map[string]string) {
	t.Helper()
	files = map[string]string{}
	var lines [][]string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		files["h/p/"+filepath.Base(p)] = string(data)
		ls := strings.SplitAfter(string(data), "\n")
		if ls[len(ls)-1] == "" {
			ls = ls[:len(ls)-1]
		}
		lines = append(lines, ls)
	}
	offsets := make([]int64, len(paths))
	for i := 0; ; i++ {
		more := false
		for f, ls := range lines {
			if i >= len(ls) {
				continue
			}
			more = true
			c := chunk("h", "/p/"+filepath.Base(paths[f]), "1:"+string(rune('a'+f)), int64(i+1), ls[i])
			c.Offset, c.End = offsets[f], offsets[f]+int64(len(ls[i]))
			offsets[f] = c.End
			chunks = append(chunks, c)
		}
		if !more {
			return chunks, files
		}
	}
}

// archiveSize returns the bytes of the archive's segments.
func archiveSize(t *testing.T, dir string) int64 {
	t.Helper()
	segs, err := archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	var n int64
	for _, s := range segs {
		n += s.Bytes
	}
	return n
}

// The lines of live sessions, one chunk each, share frames: the archive
// is smaller by half and more than a frame per line, a segment is still
// the lines in stream order to any zstd reader, and restore gives every
// file back byte for byte.
func TestArchive_SharedFrames(t *testing.T) {
	chunks, files := liveChunks(t,
		"../../../testdata/corpus/claude-code/claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
		"../../../testdata/corpus/codex/localpush/sessions/rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl",
		"../../../testdata/corpus/pi/pi-mono/session.jsonl",
	)
	shared, own := t.TempDir(), t.TempDir()
	archiveWith(t, archive.ArchiveConfig{Dir: shared}, chunks...)
	archiveWith(t, archive.ArchiveConfig{Dir: own, FrameBytes: 1}, chunks...)
	ratio := float64(archiveSize(t, own)) / float64(archiveSize(t, shared))
	t.Logf("%d chunks: a frame each %d bytes, shared frames %d bytes (%.2fx)", len(chunks), archiveSize(t, own), archiveSize(t, shared), ratio)
	require.Greater(t, ratio, 1.5, "shared frames compress better")

	segs, err := archive.ReadArchiveManifest(shared)
	require.NoError(t, err)
	require.Len(t, segs, 1)
	seg := filepath.Join(shared, filepath.FromSlash(segs[0].Path))
	index, err := archive.ReadSegmentIndex(seg)
	require.NoError(t, err)
	require.Len(t, index, len(chunks))
	frames := map[int64]int{}
	var want bytes.Buffer
	for i, c := range index {
		frames[c.FrameOffset]++
		require.Positive(t, c.FrameData, "chunk %d", i)
		require.LessOrEqual(t, c.FrameAt+c.Bytes, c.FrameData)
		want.Write(chunks[i].Data)
	}
	require.Less(t, len(frames), len(chunks)/10, "lines gathered into frames")

	require.Equal(t, want.String(), plainZstd(t, seg), "a segment is its lines in stream order")

	got, _ := restoreAll(t, shared, archive.RestoreConfig{})
	require.Equal(t, files, got)

	// A backfill's chunks, larger than a frame, keep a frame each: the
	// segment is as it was.
	big := t.TempDir()
	var large []*bus.RawChunk
	for _, c := range chunks[:3] {
		d := bytes.Repeat(c.Data, archive.DefaultFrameBytes/len(c.Data)+1)
		l := chunk("h", c.Path+".big", c.File+"b", 1, string(d))
		l.Lines = int64(bytes.Count(d, []byte("\n")))
		large = append(large, l)
	}
	archiveWith(t, archive.ArchiveConfig{Dir: big}, large...)
	segs, err = archive.ReadArchiveManifest(big)
	require.NoError(t, err)
	index, err = archive.ReadSegmentIndex(filepath.Join(big, filepath.FromSlash(segs[0].Path)))
	require.NoError(t, err)
	for _, c := range index {
		require.Zero(t, c.FrameData)
		require.Zero(t, c.FrameAt)
	}
}

// A damaged shared frame costs the chunks it holds, reported, and
// nothing else; an index entry that places a chunk outside its shared
// frame is refused before anything is read.
func TestRestore_DamagedSharedFrame(t *testing.T) {
	t.Run("FlippedByte", func(t *testing.T) {
		dir := t.TempDir()
		archiveWith(t, archive.ArchiveConfig{Dir: dir, FrameBytes: 8},
			dated(chunk("h", "/p/a.jsonl", "1:1", 1, "a1\n"), 1),
			dated(chunk("h", "/p/b.jsonl", "1:2", 1, "b1\n"), 1),
			dated(chunk("h", "/p/a.jsonl", "1:1", 2, "a2\n"), 1), // 9 bytes gathered: the first frame
			dated(chunk("h", "/p/c.jsonl", "1:3", 1, "c1\n"), 1),
		)
		segs, err := archive.ReadArchiveManifest(dir)
		require.NoError(t, err)
		seg := filepath.Join(dir, filepath.FromSlash(segs[0].Path))
		index, err := archive.ReadSegmentIndex(seg)
		require.NoError(t, err)
		require.Len(t, index, 4)
		require.Equal(t, index[0].FrameOffset, index[2].FrameOffset, "a1, b1 and a2 share a frame")
		require.NotEqual(t, index[0].FrameOffset, index[3].FrameOffset)
		data, err := os.ReadFile(seg)
		require.NoError(t, err)
		data[index[0].FrameOffset+index[0].FrameBytes/2] ^= 0x40
		require.NoError(t, os.WriteFile(seg, data, 0o644))

		files, _, re := restoreDamaged(t, dir)
		require.Equal(t, map[string]string{"h/p/c.jsonl": "c1\n"}, files)
		var seqs []uint64
		for _, d := range re.Damage {
			seqs = append(seqs, d.Seq)
		}
		require.Equal(t, []uint64{0, 1, 2, 3}, seqs, "the segment's checksum, then each chunk of the frame: %v", re)
	})
	t.Run("ForgedFrameAt", func(t *testing.T) {
		dir := t.TempDir()
		archiveAll(t, dir, chunk("h", "/p/a.jsonl", "1:1", 1, "a1\n"), chunk("h", "/p/b.jsonl", "1:2", 1, "b1\n"))
		segs, err := archive.ReadArchiveManifest(dir)
		require.NoError(t, err)
		seg := filepath.Join(dir, filepath.FromSlash(segs[0].Path))
		forgeIndex(t, dir, seg, func(index []archive.Chunk) { index[1].FrameAt = index[1].FrameData })
		files, _, re := restoreDamaged(t, dir)
		require.Equal(t, map[string]string{"h/p/a.jsonl": "a1\n"}, files)
		require.Len(t, re.Damage, 1, "%v", re)
		require.Equal(t, uint64(2), re.Damage[0].Seq)
		require.Contains(t, re.Damage[0].Error(), "shared frame")
	})
}

// BenchmarkArchive_LiveLines archives the public Claude Code, Codex and pi
// samples as live sessions send them (a chunk per line, the files
// interleaved), with a frame per chunk (frame=own, what sessionpipe did
// before) and with shared frames: the CPU per input byte, and the
// archive's size against the input (ratio, larger is better).
//
//	go test ./pipeline/export/archive -run '^$' -bench LiveLines -count 6
func BenchmarkArchive_LiveLines(b *testing.B) {
	t := &testing.T{}
	chunks, _ := liveChunks(t,
		"../../../testdata/corpus/claude-code/claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
		"../../../testdata/corpus/codex/localpush/sessions/rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl",
		"../../../testdata/corpus/pi/pi-mono/session.jsonl",
	)
	if t.Failed() || len(chunks) == 0 {
		b.Fatal("samples not read")
	}
	var in int64
	for _, c := range chunks {
		in += int64(len(c.Data))
	}
	for _, bc := range []struct {
		name  string
		frame int
	}{{"frame=own", 1}, {"frame=shared", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(in)
			benchArchive(b, chunks, in, archive.ArchiveConfig{FrameBytes: bc.frame})
		})
	}
}

// A chunk of at least FrameBytes arriving while smaller ones wait gets a
// frame of its own, and theirs is closed first; chunks of partitions that
// interleave restore byte for byte.
func TestArchive_SharedFramesMixed(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 200) + "\n"
	var chunks []*bus.RawChunk
	files := map[string]string{}
	for i := range 30 {
		for _, host := range []string{"h1", "h2", "h3"} {
			line := fmt.Sprintf("%s line %d\n", host, i)
			if i == 10 {
				line = big
			}
			c := chunk(host, "/p/f.jsonl", "1:1", int64(i+1), line)
			prev := files[host+"/p/f.jsonl"]
			c.Offset, c.End = int64(len(prev)), int64(len(prev)+len(line))
			files[host+"/p/f.jsonl"] = prev + line
			chunks = append(chunks, c)
		}
	}
	archiveWith(t, archive.ArchiveConfig{Dir: dir, FrameBytes: 128}, chunks...)
	segs, err := archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	require.Len(t, segs, 3)
	for _, sg := range segs {
		index, err := archive.ReadSegmentIndex(filepath.Join(dir, filepath.FromSlash(sg.Path)))
		require.NoError(t, err)
		require.Len(t, index, 30)
		require.Zero(t, index[10].FrameData, "the large chunk has its own frame")
		require.NotEqual(t, index[9].FrameOffset, index[10].FrameOffset)
		require.NotEqual(t, index[10].FrameOffset, index[11].FrameOffset)
		require.Positive(t, index[9].FrameData, "the small ones before it share theirs")
	}
	got, _ := restoreAll(t, dir, archive.RestoreConfig{})
	require.Equal(t, files, got)
}

// A forged index whose chunks disagree about their shared frame (one
// claims it larger than another found it) is damage, not a crash.
func TestRestore_ForgedSharedFrameSize(t *testing.T) {
	dir := t.TempDir()
	archiveAll(t, dir, chunk("h", "/p/a.jsonl", "1:1", 1, "a1\n"), chunk("h", "/p/a.jsonl", "1:1", 2, "a2\n"),
		chunk("h", "/p/b.jsonl", "1:2", 1, "b1\n"))
	segs, err := archive.ReadArchiveManifest(dir)
	require.NoError(t, err)
	seg := filepath.Join(dir, filepath.FromSlash(segs[0].Path))
	forgeIndex(t, dir, seg, func(index []archive.Chunk) {
		require.Equal(t, index[0].FrameOffset, index[1].FrameOffset)
		index[1].FrameData, index[1].FrameAt = 4000, 3000
	})
	files, _, re := restoreDamaged(t, dir)
	require.Equal(t, map[string]string{"h/p/a.jsonl": "a1\n", "h/p/b.jsonl": "b1\n"}, files, "a's second line is lost, nothing else")
	require.Len(t, re.Damage, 1, "%v", re)
	require.Equal(t, uint64(2), re.Damage[0].Seq)
}

// backfillChunks returns each transcript as a backfill sends it: runs of
// whole lines up to 1 MiB (a batch message's original lines), a chunk
// each.
func backfillChunks(t *testing.T, paths ...string) []*bus.RawChunk {
	t.Helper()
	var chunks []*bus.RawChunk
	for f, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		var off, line int64
		for len(data) > 0 {
			n := len(data)
			if n > 1<<20 {
				n = bytes.LastIndexByte(data[:1<<20], '\n') + 1
				if n == 0 { // one line longer than 1 MiB: a chunk of its own
					n = bytes.IndexByte(data, '\n') + 1
				}
				if n == 0 {
					n = len(data) // the last line, without its end
				}
			}
			lines := strings.SplitAfter(string(data[:n]), "\n")
			if lines[len(lines)-1] == "" {
				lines = lines[:len(lines)-1]
			}
			c := chunk("h", "/p/"+filepath.Base(p), "1:"+string(rune('a'+f)), line+1, lines...)
			c.Offset, c.End = off, off+int64(n)
			chunks = append(chunks, c)
			off, line, data = off+int64(n), line+int64(len(lines)), data[n:]
		}
	}
	return chunks
}

// benchSamples are the public samples the archive benchmarks read.
var benchSamples = []string{
	"../../../testdata/corpus/claude-code/claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
	"../../../testdata/corpus/codex/localpush/sessions/rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl",
	"../../../testdata/corpus/pi/pi-mono/session.jsonl",
	"../../../testdata/corpus/pi/pi-mono/large-session.jsonl",
}

// BenchmarkArchive_Level archives the public Claude Code, Codex and pi
// samples at each zstd level, as live sessions send them (a chunk per
// line, shared frames) and as a backfill does (chunks of up to 1 MiB): the
// CPU per input byte, and the archive's size against the input (ratio).
//
//	go test ./pipeline/export/archive -run '^$' -bench Level -count 6
func BenchmarkArchive_Level(b *testing.B) {
	t := &testing.T{}
	live, _ := liveChunks(t, benchSamples...)
	backfill := backfillChunks(t, benchSamples...)
	if t.Failed() || len(live) == 0 || len(backfill) == 0 {
		b.Fatal("samples not read")
	}
	for _, shape := range []struct {
		name   string
		chunks []*bus.RawChunk
	}{{"live", live}, {"backfill", backfill}} {
		var in int64
		for _, c := range shape.chunks {
			in += int64(len(c.Data))
		}
		for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression} {
			b.Run(shape.name+"/level="+level.String(), func(b *testing.B) {
				b.SetBytes(in)
				benchArchive(b, shape.chunks, in, archive.ArchiveConfig{Level: level})
			})
		}
	}
}

// benchArchive archives chunks (in bytes in all) into a new archive with
// cfg at each iteration, and reports the archive's size against in.
func benchArchive(b *testing.B, chunks []*bus.RawChunk, in int64, cfg archive.ArchiveConfig) {
	b.ReportAllocs()
	var size int64
	for b.Loop() {
		cfg.Dir = b.TempDir()
		a, err := archive.NewArchiveWriter(cfg)
		if err != nil {
			b.Fatal(err)
		}
		for i, c := range chunks {
			if err := a.Write(b.Context(), c, uint64(i+1)); err != nil {
				b.Fatal(err)
			}
		}
		if err := a.Close(b.Context()); err != nil {
			b.Fatal(err)
		}
		size = a.Stats().Bytes
	}
	b.ReportMetric(float64(in)/float64(size), "ratio")
}

// BenchmarkArchive_Segments archives the public samples' backfill chunks
// eight times over into segments of 2 MiB under a 4 MiB budget, so that
// segments fill and commit one after the other as in a long backfill: the
// bytes allocated per input byte show whether committed segments' memory
// is taken again (frame blocks) or allocated anew.
//
//	go test ./pipeline/export/archive -run '^$' -bench Segments -count 6
func BenchmarkArchive_Segments(b *testing.B) {
	t := &testing.T{}
	one := backfillChunks(t, benchSamples...)
	if t.Failed() || len(one) == 0 {
		b.Fatal("samples not read")
	}
	var chunks []*bus.RawChunk
	var in int64
	for range 8 {
		for _, c := range one {
			chunks = append(chunks, c)
			in += int64(len(c.Data))
		}
	}
	b.SetBytes(in)
	benchArchive(b, chunks, in, archive.ArchiveConfig{SegmentBytes: 2 << 20, MemoryBytes: 4 << 20})
}
