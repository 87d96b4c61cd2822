package archive

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
)

// Archive defaults.
const (
	// DefaultSegmentBytes closes a segment when its compressed frames
	// reach 32 MiB.
	DefaultSegmentBytes = 32 << 20

	// DefaultArchiveMemoryBytes bounds the compressed frames buffered in
	// all open segments together, with the blocks kept for the next
	// segments. It was 48 MiB when a segment's frames were one slice
	// doubled as it filled: half of that was spare room, which the budget
	// counted, so segments were committed at about half their size.
	DefaultArchiveMemoryBytes = 32 << 20
)

// ArchiveConfig configures an [ArchiveWriter]. Zero fields take defaults.
type ArchiveConfig struct {
	// Dir is the archive root: partitions, its manifest and its lock.
	// Required. One ArchiveWriter owns it at a time.
	Dir string

	// SegmentBytes closes a segment when its compressed size reaches it.
	SegmentBytes int64

	// SegmentAge closes a segment this long after its first chunk, at the
	// next [ArchiveWriter.CommitDue]. Default five minutes (the Parquet writer's DefaultPartAge).
	SegmentAge time.Duration

	// MemoryBytes bounds the memory held by all open segments (their
	// compressed frames and the spare room of their blocks) and by the
	// blocks kept for reuse.
	MemoryBytes int64

	// FrameBytes is the size from which the chunks gathered in a segment
	// are compressed into one zstd frame; default [DefaultFrameBytes]. A
	// chunk at least that large gets a frame of its own; 1 gives every
	// chunk its own.
	FrameBytes int

	// Level is the zstd encoder level; default zstd.SpeedDefault (about
	// zstd level 3, zstd's own default). zstd.SpeedBetterCompression
	// (about level 7) makes an archive 4-6% smaller on the public samples
	// (a fifth on the generated corpus) for 2-2.5 times the archive's CPU:
	// it was the default, and the largest item of `sessionpipe run`'s CPU.
	// zstd.SpeedFastest makes it 4-6% larger for 1.3-1.5 times less of the
	// archive's CPU, a few percent of `run`'s: not worth it for an archive
	// kept for years (BenchmarkArchive_Level).
	Level zstd.EncoderLevel

	// Logger receives commits (Debug) and recovery (Info); nil discards.
	Logger *slog.Logger

	// Bucket, when set, is where the archive lives instead of a local
	// directory (Dir is then only its name in messages): see the package
	// documentation, "Commit protocol in a bucket".
	Bucket *objstore.Bucket
}

func (c ArchiveConfig) withDefaults() ArchiveConfig {
	if c.SegmentBytes <= 0 {
		c.SegmentBytes = DefaultSegmentBytes
	}
	if c.SegmentAge <= 0 {
		c.SegmentAge = commit.DefaultPartAge
	}
	if c.FrameBytes <= 0 {
		c.FrameBytes = DefaultFrameBytes
	}
	if c.MemoryBytes <= 0 {
		c.MemoryBytes = max(DefaultArchiveMemoryBytes, c.SegmentBytes)
	}
	if c.Level == 0 {
		c.Level = zstd.SpeedDefault
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// archiveWindow is the zstd window of the archive's frames. A frame holds
// at most about 1 MiB (one batch message's original lines, unless one
// line is longer, or chunks gathered up to DefaultFrameBytes), so a larger
// window would find nothing more to match, while the encoder's history
// buffer is as large as the window (8 MiB by default) and lives as long
// as the writer.
const archiveWindow = 2 << 20

// DefaultFrameBytes is the size from which a segment's chunks are
// compressed into a frame (ArchiveConfig.FrameBytes). A backfill's
// chunks (a batch message's lines, up to 1 MiB) are larger and get a
// frame each; a live session's, one or a few appended lines, are
// gathered until the frame reaches it (or the segment commits), and share
// it. One frame per line of the public Claude Code, Codex and pi samples
// compressed them 2.05 times at zstd's default level, frames of 128 KiB 5.17
// times, whole files 5.96 times (benchmarks/RESULTS.md, "live archive
// frames").
const DefaultFrameBytes = 128 << 10

// Chunk is the index record of one raw chunk (or one part of it) in a
// segment: where its frame is, and where its bytes were in their file.
type Chunk struct {
	Seq      uint64     `json:"seq"`
	Host     string     `json:"host"`
	Path     string     `json:"path"`
	Format   string     `json:"format,omitempty"`
	File     string     `json:"file"`
	Offset   int64      `json:"offset"`
	End      int64      `json:"end"`
	Line     int64      `json:"line"`
	Lines    int64      `json:"lines"`
	Holes    []bus.Hole `json:"holes,omitempty"`
	Sessions []string   `json:"sessions,omitempty"`
	TS       time.Time  `json:"ts,omitzero"`
	Redacted int64      `json:"redacted,omitempty"`
	Part     int        `json:"part,omitempty"`
	Parts    int        `json:"parts,omitempty"`

	// FrameOffset and FrameBytes locate the chunk's zstd frame in the
	// segment file; Bytes is the size of its data once decompressed.
	FrameOffset int64 `json:"frame_offset"`
	FrameBytes  int64 `json:"frame_bytes"`
	Bytes       int64 `json:"bytes"`

	// A frame shared by several chunks (live appends gathered up to
	// DefaultFrameBytes) decompresses to FrameData bytes, of which the chunk's
	// are the Bytes at FrameAt; both are zero for a frame of its own.
	// Earlier versions read no shared frame: they report such a chunk as
	// damaged (its frame holds more bytes than the index says), never
	// restore it wrong.
	FrameAt   int64 `json:"frame_at,omitempty"`
	FrameData int64 `json:"frame_data,omitempty"`
}

// Segment is the manifest record of one committed archive segment.
type Segment struct {
	Path      string           `json:"path"`
	Partition commit.Partition `json:"partition"`
	Chunks    int              `json:"chunks"`
	Bytes     int64            `json:"bytes"`     // size of the segment file
	RawBytes  int64            `json:"raw_bytes"` // its chunks' data, decompressed
	SHA256    string           `json:"sha256"`
	FirstSeq  uint64           `json:"first_seq"`
	LastSeq   uint64           `json:"last_seq"`
	MinTS     time.Time        `json:"min_ts,omitzero"`
	MaxTS     time.Time        `json:"max_ts,omitzero"`
	Committed time.Time        `json:"committed"`
}

// ArchiveStats counts what an [ArchiveWriter] did since it was opened.
type ArchiveStats struct {
	Chunks   int64 // chunks taken
	Skipped  int64 // chunks skipped: already committed, or handed over twice
	Segments int64 // segments committed
	RawBytes int64 // original bytes in committed segments
	Bytes    int64 // bytes of committed segments
	Removed  int64 // leftovers removed at open
	// FailedCommits counts the segments whose commit failed for their
	// partition (a *PartitionError): each stays open and is tried again
	// at the next commit; the other partitions commit.
	FailedCommits int64
}

// ArchiveWriter writes raw chunks (the original lines of transcript
// files, see [bus.RawChunk]) as the byte-exact cold archive, with the
// commit protocol of parquet.Writer: one open segment per partition, committed
// by size, age, memory, [ArchiveWriter.Flush] and [ArchiveWriter.Close]
// (temporary file, fsync, rename, fsync, manifest); a caller acknowledges
// up to [ArchiveWriter.Committed]. See the package documentation,
// "Archive". Not safe for concurrent use.
type ArchiveWriter struct {
	cfg  ArchiveConfig
	log  *slog.Logger
	lock *dirlock.Lock
	enc  *zstd.Encoder

	scratch []byte    // a chunk's frame, compressed before it is appended
	blocks  blockPool // frame blocks kept for reuse (see frameBuf)
	// chunksAtDue is stats.Chunks at the last CommitDue: a writer that
	// took none since lets its kept blocks go.
	chunksAtDue int64
	// spare is the buffer of the last frame gathered (see frame), for
	// the next segment that gathers chunks.
	spare []byte

	segments       []Segment
	manifest       []byte // the manifest file's content: segments as JSON lines
	manifestWrites int    // the manifest files written (for the tests)
	high           map[commit.Partition]uint64
	open           map[commit.Partition]*segment
	buffered       int64
	handed         uint64
	dirs           map[string]bool
	stats          ArchiveStats
	closed         bool
	// waiting holds, by first sequence, the segments closed in Write
	// whose commit failed for their partition (see commit): tried again,
	// before the later segments of their partition, at each commit.
	waiting []*segment

	// remote is the manifest object when the archive is in a bucket;
	// failed stops the writer as Writer.failed does (a conflict with
	// another writer, or a manifest write of unknown fate).
	remote *commit.RemoteManifest[Segment]
	failed error
}

// segment is an open segment: its frames, compressed, and their index.
// The chunks of index[framed:] wait in pending, uncompressed, for the
// frame they will share (see DefaultFrameBytes).
type segment struct {
	partition   commit.Partition
	opened      time.Time
	first, last uint64
	frames      frameBuf
	index       []Chunk
	pending     []byte
	framed      int
	raw         int64
	minTS       time.Time
	maxTS       time.Time
}

// NewArchiveWriter opens the archive root cfg.Dir (creating it), takes
// its lock, reads its manifest and removes what a crash left: temporary
// files, and segments the manifest does not list.
func NewArchiveWriter(cfg ArchiveConfig) (*ArchiveWriter, error) {
	if cfg.Dir == "" {
		return nil, &commit.ConfigError{Field: "archive_dir", Value: cfg.Dir, Err: commit.ErrInvalidConfig, Why: "required"}
	}
	cfg = cfg.withDefaults()
	if cfg.Bucket != nil {
		return newRemoteArchiveWriter(cfg)
	}
	lock, err := dirlock.Acquire(cfg.Dir, "transcript archive")
	if err != nil {
		return nil, err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(cfg.Level), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true),
		zstd.WithWindowSize(archiveWindow))
	if err != nil {
		lock.Release()
		return nil, err
	}
	a := &ArchiveWriter{
		cfg: cfg, log: cfg.Logger.With(commit.KeyComponent, "archive"), lock: lock, enc: enc,
		high: make(map[commit.Partition]uint64), open: make(map[commit.Partition]*segment), dirs: make(map[string]bool),
	}
	if a.segments, err = ReadArchiveManifest(cfg.Dir); err != nil {
		lock.Release()
		return nil, err
	}
	for _, s := range a.segments {
		a.high[s.Partition] = max(a.high[s.Partition], s.LastSeq)
	}
	if err := a.recover(); err != nil {
		lock.Release()
		return nil, err
	}
	if a.manifest, err = commit.AppendLines(nil, a.segments); err != nil {
		lock.Release()
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, commit.ManifestName)); errors.Is(err, fs.ErrNotExist) {
		if err := commit.WriteFileAtomic(cfg.Dir, commit.ManifestName, a.manifest); err != nil {
			lock.Release()
			return nil, err
		}
	}
	return a, nil
}

// ChunkPartition returns the archive partition of a chunk: its format,
// the UTC date of its timestamp and its host.
func ChunkPartition(c *bus.RawChunk) commit.Partition {
	p := commit.Partition{Format: c.Format, Host: c.Host}
	if !c.TS.IsZero() {
		p.Date = c.TS.UTC().Format(time.DateOnly)
	}
	return p
}

// Write takes the chunk c with its stream sequence into its partition's
// open segment: compressed as a zstd frame of its own when it holds at
// least ArchiveConfig.FrameBytes, else gathered with the next ones into a
// shared frame. Chunks must come in
// stream order; one handed over before, or that a committed segment of
// its partition holds, is skipped.
func (a *ArchiveWriter) Write(ctx context.Context, c *bus.RawChunk, seq uint64) error {
	if a.closed {
		return commit.ErrClosed
	}
	if a.failed != nil {
		return a.failed
	}
	if seq == 0 {
		return commit.ErrInvalidSeq
	}
	p := ChunkPartition(c)
	if seq <= a.handed || seq <= a.high[p] {
		a.stats.Skipped++
		a.handed = max(a.handed, seq)
		return nil
	}
	s := a.open[p]
	if s != nil && int64(s.frames.n) >= a.cfg.SegmentBytes {
		if err := a.commit(ctx, s); err != nil {
			return err
		}
		s = a.open[p]
	}
	size := int64(len(c.Data))
	for a.buffered+size > a.cfg.MemoryBytes && len(a.open) > 0 {
		// Free a quarter of the budget beyond what this chunk needs, in
		// one commit: one manifest write for several segments.
		if err := a.commit(ctx, a.largest(a.buffered+size-a.cfg.MemoryBytes+a.cfg.MemoryBytes/4)...); err != nil {
			return err
		}
		s = a.open[p]
	}
	if s == nil {
		s = &segment{partition: p, opened: time.Now(), first: seq}
		a.open[p] = s
	}
	if size >= int64(a.cfg.FrameBytes) {
		a.frame(s, s.pending) // the chunks gathered before get their frame, this one its own
	}
	held := cap(s.pending)
	if s.pending == nil && size < int64(a.cfg.FrameBytes) {
		s.pending, a.spare = a.spare, nil
	}
	s.index = append(s.index, Chunk{
		Seq: seq, Host: c.Host, Path: c.Path, Format: c.Format, File: c.File,
		Offset: c.Offset, End: c.End, Line: c.Line, Lines: c.Lines, Holes: c.Holes,
		Sessions: slices.Clone(c.Sessions), TS: c.TS, Redacted: c.Redacted, Part: c.Part, Parts: c.Parts,
		FrameAt: int64(len(s.pending)), Bytes: size,
	})
	if size >= int64(a.cfg.FrameBytes) {
		a.frame(s, c.Data) // a frame of its own, without a copy
	} else {
		s.pending = append(s.pending, c.Data...)
		a.buffered += int64(cap(s.pending) - held)
		a.blocks.trim(a.cfg.MemoryBytes - a.buffered)
		if len(s.pending) >= a.cfg.FrameBytes {
			a.frame(s, s.pending)
		}
	}
	s.last = seq
	s.raw += size
	if !c.TS.IsZero() {
		if s.minTS.IsZero() || c.TS.Before(s.minTS) {
			s.minTS = c.TS
		}
		if c.TS.After(s.maxTS) {
			s.maxTS = c.TS
		}
	}
	a.handed = seq
	a.stats.Chunks++
	return nil
}

// frame compresses data, the bytes of the chunks s.index[s.framed:], as
// one zstd frame appended to s's frames, and records it in their index.
func (a *ArchiveWriter) frame(s *segment, data []byte) {
	if s.framed == len(s.index) {
		return
	}
	at := s.frames.n
	a.scratch = a.enc.EncodeAll(data, a.scratch[:0])
	a.buffered += int64(s.frames.append(a.scratch, &a.blocks, int(min(a.cfg.SegmentBytes, math.MaxInt32)))) // the memory held, spare room included
	a.blocks.trim(a.cfg.MemoryBytes - a.buffered)
	shared := len(s.index)-s.framed > 1
	for i := s.framed; i < len(s.index); i++ {
		c := &s.index[i]
		c.FrameOffset, c.FrameBytes = int64(at), int64(s.frames.n-at)
		if shared {
			c.FrameData = int64(len(data))
		} else {
			c.FrameAt = 0
		}
	}
	s.framed = len(s.index)
	if len(s.pending) > 0 {
		a.buffered -= int64(cap(s.pending))
		// The next frame's starts small again (a live segment gathers
		// little), unless it takes the spare: one buffer of at most two
		// frames, kept for whichever segment gathers next, so that a
		// backfill of small files does not grow a buffer for each frame
		// (BenchmarkArchive_LiveLines).
		if c := cap(s.pending); c <= 2*a.cfg.FrameBytes && c > cap(a.spare) {
			a.spare = s.pending[:0]
		}
		s.pending = nil
	}
}

// Advance tells the writer that every message up to seq was handed over.
func (a *ArchiveWriter) Advance(seq uint64) { a.handed = max(a.handed, seq) }

// Committed returns the highest sequence S such that every chunk handed
// over up to S is in a committed segment.
func (a *ArchiveWriter) Committed() uint64 {
	s := a.handed
	for _, seg := range a.open {
		s = min(s, seg.first-1)
	}
	for _, seg := range a.waiting {
		s = min(s, seg.first-1)
	}
	return s
}

// Highest returns the highest sequence of a chunk in the archive's
// committed segments (0: none).
func (a *ArchiveWriter) Highest() uint64 {
	var h uint64
	for _, s := range a.high {
		h = max(h, s)
	}
	return h
}

// Stats returns the counters.
func (a *ArchiveWriter) Stats() ArchiveStats { return a.stats }

// Segments returns the committed segments, in commit order; the slice is
// the writer's own.
func (a *ArchiveWriter) Segments() []Segment { return a.segments }

// CommitDue commits the segments open SegmentAge or longer, and those
// whose commit failed before. A segment that cannot be committed costs
// only its partition (see commitSegments).
func (a *ArchiveWriter) CommitDue(ctx context.Context, now time.Time) error {
	if a.closed {
		return commit.ErrClosed
	}
	if a.failed != nil {
		return a.failed
	}
	if a.stats.Chunks == a.chunksAtDue {
		// Nothing written since the last call: an idle writer keeps no
		// blocks, nor a spare gathering buffer, for segments that may
		// not come.
		a.blocks = blockPool{}
		a.spare = nil
	}
	a.chunksAtDue = a.stats.Chunks
	var due []*segment
	for _, s := range a.sorted() {
		if now.Sub(s.opened) >= a.cfg.SegmentAge || slices.Contains(a.waiting, s) {
			due = append(due, s)
		}
	}
	if len(due) == 0 {
		return nil
	}
	return a.commitSegments(ctx, due)
}

// Flush commits every open segment.
func (a *ArchiveWriter) Flush(ctx context.Context) error {
	if a.closed {
		return commit.ErrClosed
	}
	if a.failed != nil {
		return a.failed
	}
	if len(a.open) == 0 && len(a.waiting) == 0 {
		return nil
	}
	return a.commitSegments(ctx, a.sorted())
}

// Close flushes and releases the archive root.
func (a *ArchiveWriter) Close(ctx context.Context) error {
	if a.closed {
		return nil
	}
	err := a.Flush(ctx)
	a.closed = true
	a.enc.Close()
	if e := a.lock.Release(); err == nil {
		err = e
	}
	return err
}

// largest returns the open segments, the largest first, as many as hold
// need bytes of the budget (all of them if they hold less).
func (a *ArchiveWriter) largest(need int64) []*segment {
	segs := make([]*segment, 0, len(a.open))
	for _, s := range a.open {
		segs = append(segs, s)
	}
	slices.SortFunc(segs, func(x, y *segment) int {
		return cmp.Compare(y.frames.n+len(y.pending), x.frames.n+len(x.pending))
	})
	for i, s := range segs {
		if need -= int64(s.frames.held + cap(s.pending)); need <= 0 {
			return segs[:i+1]
		}
	}
	return segs
}

// sorted returns the open and the waiting segments by first sequence.
func (a *ArchiveWriter) sorted() []*segment {
	out := make([]*segment, 0, len(a.open)+len(a.waiting))
	for _, s := range a.open {
		out = append(out, s)
	}
	out = append(out, a.waiting...)
	slices.SortFunc(out, func(x, y *segment) int { return compareSeq(x.first, y.first) })
	return out
}

func compareSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Segment file footer: the index is the content of a zstd skippable
// frame at the end of the file, ending with its length and a tag, so that
// `zstd -d` skips it and a reader finds it from the end. Under indexTag
// the index JSON is compressed (a zstd frame of its own: a live segment's
// index, one record per appended line, was about half of the segment) and
// chunks may share frames (Chunk.FrameData); under indexTagPlain, what
// sessionpipe wrote before, it is plain JSON and every chunk has its own
// frame. Readers read both.
const (
	skippableMagic = 0x184D2A5E // a zstd skippable frame (0x184D2A50 to 0x184D2A5F)
	indexTag       = "SPX2"
	indexTagPlain  = "SPX1"
	footerBytes    = 8 // uint32 length of the index, then its tag
)

// segmentName returns the file name of a segment of chunks first..last.
func segmentName(first, last uint64) string {
	return fmt.Sprintf("seg-%d-%d.jsonl.zst", first, last)
}

// commit commits the open segments segs (see commitSegments), closed in
// Write (full, or the memory budget needs their room), with one write of
// the manifest. When that fails for their partitions only (each a
// *commit.PartitionError), the segments not committed wait for the next
// commit in a.waiting and commit returns nil (logging why), as
// parquet.Writer's commit does: Write goes on with the other partitions.
// Once the waiting segments would hold more than three quarters of
// MemoryBytes, the error is returned instead.
func (a *ArchiveWriter) commit(ctx context.Context, segs ...*segment) error {
	slices.SortFunc(segs, func(x, y *segment) int { return compareSeq(x.first, y.first) })
	err := a.commitSegments(ctx, segs)
	if err == nil || ctx.Err() != nil || !commit.OnlyPartitionErrors(err) {
		return err
	}
	var held int64
	for _, o := range a.waiting {
		held += int64(o.frames.held + cap(o.pending))
	}
	for _, s := range segs {
		if a.open[s.partition] == s {
			held += int64(s.frames.held + cap(s.pending)) // not committed, still open
		}
	}
	if held > a.cfg.MemoryBytes/4*3 {
		return err
	}
	for _, s := range segs {
		if a.open[s.partition] == s {
			delete(a.open, s.partition)
			a.waiting = append(a.waiting, s)
		}
	}
	slices.SortFunc(a.waiting, func(x, y *segment) int { return compareSeq(x.first, y.first) })
	a.log.Warn("archive partitions cannot be committed; their chunks are kept and tried again at the next commit", commit.KeyError, err.Error())
	return nil
}

// withWaiting returns open with the waiting segments of their partitions
// added, by first sequence.
func (a *ArchiveWriter) withWaiting(open []*segment) []*segment {
	if len(a.waiting) == 0 {
		return open
	}
	out := slices.Clone(open)
	for _, o := range a.waiting {
		if !slices.Contains(out, o) && slices.ContainsFunc(open, func(s *segment) bool { return s.partition == o.partition }) {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(x, y *segment) int { return compareSeq(x.first, y.first) })
	return out
}

// commitSegments writes each segment as a file (atomically, fsynced) and
// records them all with one write of the manifest, as parquet's
// Commit.Run does for Parquet files: a periodic commit of hundreds of
// quiet partitions costs one manifest write, not one per segment. A
// segment that cannot be written (a file where its partition's directory
// belongs) costs only its partition: it stays open, to be tried again at
// the next commit, a *commit.PartitionError is returned for it (several
// joined) and counted in Stats.FailedCommits, and the other segments are
// committed. A partition's segments are committed in stream order: after
// one that failed, its later ones wait too (a restart skips what its
// committed segments reach). The waiting segments of the segments'
// partitions are committed with them, first. Cancellation stops the
// batch and is returned as is; those written before it are recorded.
func (a *ArchiveWriter) commitSegments(ctx context.Context, open []*segment) error {
	open = a.withWaiting(open)
	var segs []Segment
	var written []*segment
	var errs []error
	failed := make(map[commit.Partition]bool)
	for _, s := range open {
		if err := ctx.Err(); err != nil {
			errs = append(errs, context.Cause(ctx))
			break
		}
		if failed[s.partition] {
			continue
		}
		seg, err := a.writeSegment(ctx, s)
		if err != nil {
			failed[s.partition] = true
			a.stats.FailedCommits++
			errs = append(errs, &commit.PartitionError{Partition: s.partition, Dir: filepath.Join(a.cfg.Dir, filepath.FromSlash(s.partition.Dir())),
				FirstSeq: s.first, LastSeq: s.last, Err: err})
			continue
		}
		segs = append(segs, seg)
		written = append(written, s)
	}
	werr := errors.Join(errs...)
	if len(errs) == 1 {
		werr = errs[0] // a cancellation as is
	}
	if len(segs) == 0 {
		return werr
	}
	// The manifest's encoding grows in place (the writer's own; its
	// length is kept when the write fails), so that a commit encodes only
	// the new segments.
	if a.remote != nil {
		if err := a.recordRemote(ctx, segs); err != nil {
			return errors.Join(werr, err)
		}
	} else {
		data, err := commit.AppendLines(a.manifest, segs)
		if err != nil {
			return errors.Join(werr, err)
		}
		if err := commit.WriteFileAtomic(a.cfg.Dir, commit.ManifestName, data); err != nil {
			return errors.Join(werr, err) // the files stay unlisted: removed at the next open, or renamed over by a retry
		}
		a.manifest = data
		a.segments = append(a.segments, segs...)
		a.manifestWrites++
	}
	for i, seg := range segs {
		s := written[i]
		if a.open[s.partition] == s {
			delete(a.open, s.partition)
		} else if j := slices.Index(a.waiting, s); j >= 0 {
			a.waiting = slices.Delete(a.waiting, j, j+1)
		}
		a.buffered -= int64(s.frames.held)
		s.frames.release(&a.blocks, a.cfg.MemoryBytes-a.buffered)
		a.high[s.partition] = max(a.high[s.partition], s.last)
		a.stats.Segments++
		a.stats.RawBytes += s.raw
		a.stats.Bytes += seg.Bytes
		a.log.Debug("committed", commit.KeyFile, seg.Path, "chunks", seg.Chunks, commit.KeyBytes, seg.Bytes, commit.KeyFirstSeq, seg.FirstSeq, commit.KeyLastSeq, seg.LastSeq)
	}
	return werr
}

// writeSegment writes s as a segment file, atomically, and describes it.
func (a *ArchiveWriter) writeSegment(ctx context.Context, s *segment) (Segment, error) {
	a.frame(s, s.pending) // the chunks still gathered
	rel := s.partition.Dir()
	if a.remote == nil {
		if err := commit.Mkdirs(a.cfg.Dir, rel, a.dirs); err != nil {
			return Segment{}, err
		}
	}
	dir := filepath.Join(a.cfg.Dir, filepath.FromSlash(rel))
	name := segmentName(s.first, s.last)
	plain, err := json.Marshal(s.index)
	if err != nil {
		return Segment{}, fmt.Errorf("encode segment index: %w", err)
	}
	index := a.enc.EncodeAll(plain, nil)
	var foot bytes.Buffer
	foot.Grow(8 + len(index) + footerBytes)
	binary.Write(&foot, binary.LittleEndian, uint32(skippableMagic))
	binary.Write(&foot, binary.LittleEndian, uint32(len(index)+footerBytes))
	foot.Write(index)
	binary.Write(&foot, binary.LittleEndian, uint32(len(index)))
	foot.WriteString(indexTag)

	// The file is the frames' blocks, then the footer.
	data := append(slices.Clip(s.frames.blocks), foot.Bytes())
	size := int64(s.frames.n + foot.Len())
	h := sha256.New()
	for _, b := range data {
		h.Write(b)
	}
	if a.remote != nil {
		// Under its final name: see uploadPart.
		body := io.NewSectionReader(buffersAt(data), 0, size)
		if err := a.cfg.Bucket.Upload(ctx, path.Join(rel, name), body, size); err != nil {
			return Segment{}, fmt.Errorf("upload: %w", err)
		}
	} else if err := commit.WriteFileAtomic(dir, name, data...); err != nil {
		return Segment{}, err
	}
	return Segment{
		Path: path.Join(rel, name), Partition: s.partition, Chunks: len(s.index),
		Bytes: size, RawBytes: s.raw, SHA256: hex.EncodeToString(h.Sum(nil)),
		FirstSeq: s.first, LastSeq: s.last, MinTS: s.minTS, MaxTS: s.maxTS, Committed: time.Now().UTC(),
	}, nil
}

// ReadArchiveManifest reads the segments listed in the archive root dir;
// a directory without a manifest lists none.
func ReadArchiveManifest(dir string) ([]Segment, error) {
	p := filepath.Join(dir, commit.ManifestName)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read archive manifest: %w", err)
	}
	var segs []Segment
	for n, line := range bytes.Split(data, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var s Segment
		if err := json.Unmarshal(line, &s); err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %v", commit.ErrManifest, p, n+1, err)
		}
		segs = append(segs, s)
	}
	return segs, nil
}

// recover removes temporary files and unlisted segments, as
// parquet.Writer's recover does for Parquet files.
func (a *ArchiveWriter) recover() error {
	root := a.cfg.Dir
	listed := make(map[string]bool, len(a.segments))
	for _, s := range a.segments {
		listed[s.Path] = true
	}
	var remove []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		base := d.Name()
		if commit.IsTmp(base) || commit.IsSegmentName(base) && strings.Count(rel, "/") == 3 && !listed[rel] {
			remove = append(remove, rel)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recover %s: %w", root, err)
	}
	if len(a.segments) == 0 && len(remove) > 0 {
		if _, err := os.Stat(filepath.Join(root, commit.ManifestName)); errors.Is(err, fs.ErrNotExist) {
			for _, r := range remove {
				if !commit.IsTmp(path.Base(r)) {
					return fmt.Errorf("%w: %s holds segments (%s, ...) but no %s: not removing them", commit.ErrManifest, root, r, commit.ManifestName)
				}
			}
		}
	}
	for _, rel := range remove {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("remove leftover %s: %w", p, err)
		}
		if err := commit.SyncDir(filepath.Dir(p)); err != nil {
			return err
		}
		a.stats.Removed++
		a.log.Info("removed leftover of an interrupted commit", commit.KeyFile, rel)
	}
	return nil
}
