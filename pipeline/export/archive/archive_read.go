package archive

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
)

// ErrSegment reports an archive segment, or a chunk of one, that cannot
// be read or does not hold what its index claims. [Restore] skips it,
// restores everything else and reports it in a *[RestoreError].
var ErrSegment = errors.New("export: bad archive segment")

// Limits on what a segment's index may claim; a reader allocates nothing
// larger. They are far above what the [ArchiveWriter] writes: a chunk
// part is at most a NATS message (64 MiB at most), an index a few hundred
// bytes per chunk of a segment closed at [DefaultSegmentBytes].
const (
	// maxChunkBytes bounds the decompressed data of one chunk (or part).
	maxChunkBytes = 256 << 20
	// maxIndexBytes bounds the JSON index in a segment's footer.
	maxIndexBytes = 256 << 20
)

// ReadSegmentIndex returns the chunk index of the segment file at p,
// read from its footer. It fails with [ErrSegment] when the footer is
// missing or malformed; it does not check the chunks (see [Restore]).
func ReadSegmentIndex(p string) ([]Chunk, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	index, _, err := readSegmentIndex(f, info.Size())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSegment, p, err)
	}
	return index, nil
}

// readSegmentIndex reads the index of a segment of size bytes from its
// footer: the last zstd frame, skippable, holding the index JSON, its
// length and [indexTag]. It returns the index and where the frames before
// it end. Every length is checked against size before anything is
// allocated by it.
func readSegmentIndex(r io.ReaderAt, size int64) (index []Chunk, framesEnd int64, err error) {
	if size < 8+footerBytes {
		return nil, 0, fmt.Errorf("%d bytes: too short for an index", size)
	}
	var foot [footerBytes]byte
	if _, err := r.ReadAt(foot[:], size-footerBytes); err != nil {
		return nil, 0, fmt.Errorf("read footer: %w", err)
	}
	n := int64(binary.LittleEndian.Uint32(foot[:4]))
	tag := string(foot[4:])
	if tag != indexTag && tag != indexTagPlain || n > size-8-footerBytes || n > maxIndexBytes {
		return nil, 0, errors.New("no index footer")
	}
	framesEnd = size - footerBytes - n - 8
	var head [8]byte
	if _, err := r.ReadAt(head[:], framesEnd); err != nil {
		return nil, 0, fmt.Errorf("read index frame header: %w", err)
	}
	if binary.LittleEndian.Uint32(head[:4]) != skippableMagic || int64(binary.LittleEndian.Uint32(head[4:])) != n+footerBytes {
		return nil, 0, errors.New("index frame header does not match its footer")
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, framesEnd+8); err != nil {
		return nil, 0, fmt.Errorf("read index: %w", err)
	}
	if tag == indexTag {
		if buf, err = decodeIndex(buf); err != nil {
			return nil, 0, fmt.Errorf("index: %w", err)
		}
	}
	if err := json.Unmarshal(buf, &index); err != nil {
		return nil, 0, fmt.Errorf("index: %w", err)
	}
	if tag == indexTagPlain {
		for i := range index {
			if index[i].FrameAt != 0 || index[i].FrameData != 0 {
				return nil, 0, fmt.Errorf("index: chunk %d in a shared frame, in a segment of frames of their own", i)
			}
		}
	}
	return index, framesEnd, nil
}

// indexDecoder decompresses segment indexes, at most maxIndexBytes each;
// one for the process (DecodeAll may be called concurrently), made at
// the first index read rather than one per segment.
var indexDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxIndexBytes))
})

// decodeIndex decompresses a segment's index.
func decodeIndex(b []byte) ([]byte, error) {
	dec, err := indexDecoder()
	if err != nil {
		return nil, err
	}
	return dec.DecodeAll(b, nil)
}

// check reports what is impossible in what c claims, for a chunk of a
// segment whose frames end at framesEnd: its frame outside them, sizes
// past the limits, line numbers that the bytes of its span cannot hold
// (every line takes at least its terminator), holes out of order or out
// of its lines, a part out of its parts, a path that leaves no file name.
func (c *Chunk) check(framesEnd int64) error {
	switch {
	case c.Seq == 0:
		return errors.New("sequence 0")
	case !usablePath(c.Path):
		return fmt.Errorf("no usable path %q", c.Path)
	case c.Bytes < 0 || c.Bytes > maxChunkBytes:
		return fmt.Errorf("%d bytes of data (at most %d)", c.Bytes, maxChunkBytes)
	case c.FrameOffset < 0 || c.FrameBytes <= 0 || c.FrameOffset > framesEnd-c.FrameBytes:
		return fmt.Errorf("frame of %d bytes at %d outside the %d bytes of frames", c.FrameBytes, c.FrameOffset, framesEnd)
	case c.FrameData == 0 && c.FrameAt != 0:
		return fmt.Errorf("data at %d of a frame of its own", c.FrameAt)
	case c.FrameData < 0 || c.FrameData > maxChunkBytes || c.FrameAt < 0 || c.FrameData > 0 && c.FrameAt > c.FrameData-c.Bytes:
		return fmt.Errorf("%d bytes at %d of a shared frame of %d", c.Bytes, c.FrameAt, c.FrameData)
	case c.FrameBytes > max(c.Bytes, c.FrameData)+max(c.Bytes, c.FrameData)/128+1024:
		return fmt.Errorf("frame of %d bytes for %d bytes of data", c.FrameBytes, max(c.Bytes, c.FrameData))
	case c.Offset < 0 || c.End < c.Offset || c.Line < 1 || c.Lines < 0:
		return fmt.Errorf("span %d-%d, lines %d+%d", c.Offset, c.End, c.Line, c.Lines)
	case c.Lines > c.End-c.Offset || c.Line-1 > c.End-c.Lines:
		return fmt.Errorf("lines %d+%d cannot end by offset %d", c.Line, c.Lines, c.End)
	case int64(len(c.Holes)) > c.Lines:
		return fmt.Errorf("%d holes in %d lines", len(c.Holes), c.Lines)
	case c.Parts < 0 || c.Parts > 1 && (c.Part < 1 || c.Part > c.Parts):
		return fmt.Errorf("part %d of %d", c.Part, c.Parts)
	}
	prev := c.Line - 1
	for _, h := range c.Holes {
		if h.Line <= prev || h.Line >= c.Line+c.Lines {
			return fmt.Errorf("hole at line %d out of order or outside lines %d+%d", h.Line, c.Line, c.Lines)
		}
		prev = h.Line
	}
	return nil
}

// splitLines returns the lines of data as c's lines Line to
// Line+Lines-1: a hole is nil, every other line a copy of its bytes with
// its terminator. data must hold exactly the lines that are not holes,
// each ending with '\n'.
func (c *Chunk) splitLines(data []byte) ([][]byte, error) {
	want := c.Lines - int64(len(c.Holes))
	if got := int64(bytes.Count(data, []byte{'\n'})); got != want || len(data) > 0 && data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("data holds %d complete lines, the index says %d (and %d holes)", got, want, len(c.Holes))
	}
	lines := make([][]byte, 0, c.Lines)
	holes := c.Holes
	for n := range c.Lines {
		if len(holes) > 0 && holes[0].Line == c.Line+n {
			lines = append(lines, nil)
			holes = holes[1:]
			continue
		}
		nl := bytes.IndexByte(data, '\n')
		lines = append(lines, bytes.Clone(data[:nl+1]))
		data = data[nl+1:]
	}
	return lines, nil
}

// readManifestLines reads the segments listed in the archive root dir
// as [ReadArchiveManifest] does, except that a line that does not decode
// is skipped and returned in bad (naming the manifest and the line)
// instead of failing the whole read.
func readManifestLines(dir string) (segs []Segment, bad []*SegmentError, err error) {
	p := filepath.Join(dir, commit.ManifestName)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read archive manifest: %w", err)
	}
	segs, bad = decodeManifestLines(data, p)
	return segs, bad, nil
}

// decodeManifestLines decodes an archive manifest's lines; a line that
// does not decode is returned in bad, naming name and the line.
func decodeManifestLines(data []byte, name string) (segs []Segment, bad []*SegmentError) {
	for n, line := range bytes.Split(data, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var s Segment
		if err := json.Unmarshal(line, &s); err != nil {
			bad = append(bad, &SegmentError{Segment: fmt.Sprintf("%s:%d", name, n+1), Err: fmt.Errorf("%w: %w", commit.ErrManifest, err)})
			continue
		}
		segs = append(segs, s)
	}
	return segs, bad
}
