package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
)

// RestoreConfig says what [Restore] gives back.
type RestoreConfig struct {
	Archive string    // archive root
	Out     string    // files are written at <Out>/<host>/<original path>, never outside Out
	Host    string    // only this host's files; "" all
	Session string    // only the files holding this session; "" all
	Since   time.Time // only files with chunks dated on or after it (UTC date); zero: all
	// Until: only what was archived up to it (UTC date, inclusive): the
	// files with chunks dated on or before it, as they were then (later
	// segments are not read); zero: all.
	Until  time.Time
	Force  bool // overwrite files that exist under Out
	Logger *slog.Logger

	// Bucket, when set, is where the archive is (Archive is then only its
	// name in messages): segments are read with ranged GETs, their index
	// frames first, so that a selection by host, date or session reads
	// only the index of each segment of the selected partitions and the
	// frames of the selected files. See the package documentation,
	// "Commit protocol in a bucket".
	Bucket *objstore.Bucket
}

// Restored describes one file [Restore] wrote, or one it could not (in
// [RestoreError.Lost], Out empty).
type Restored struct {
	Host  string
	Path  string // original path
	Out   string // where it was written
	Lines int64  // lines written
	Bytes int64
	// Holes counts the lines left out before the file's last restored
	// line: too long to archive, never archived (or archived in a
	// partition that Since skipped), or held by a damaged chunk.
	Holes int64
	// Damaged counts the chunks of the file that could not be used (each
	// one in [RestoreError.Damage]): their lines are missing.
	Damaged int
	// Suspect reports that the file may lack lines, or hold lines, that
	// no check could tell: a segment of its host that could not be read at
	// all was of its partition or covered its sequences, or a segment it
	// was restored from does not match the manifest's checksum.
	Suspect bool
}

// SegmentError is a piece of an archive that [Restore] could not use:
// a whole segment (Seq 0: missing, its index unreadable, or its content
// not the manifest's), a manifest line, or one chunk of a segment. It
// matches [ErrSegment] with [errors.Is], and Err.
type SegmentError struct {
	Segment string // the segment file, or manifest:line
	Seq     uint64 // the chunk's stream sequence; 0: the whole segment
	Host    string // the chunk's host and original path, when known
	Path    string
	Line    int64 // the chunk's first line and line count, when known
	Lines   int64
	Err     error
}

// Error reads "segment: chunk S of "path" on "host" (lines L-M): why",
// quoting what came from the archive.
func (e *SegmentError) Error() string {
	var b strings.Builder
	b.WriteString(quoteUnprintable(e.Segment))
	if e.Seq != 0 {
		fmt.Fprintf(&b, ": chunk %d", e.Seq)
		if e.Path != "" || e.Host != "" {
			fmt.Fprintf(&b, " of %q on %q", e.Path, e.Host)
		}
		if e.Lines > 0 {
			fmt.Fprintf(&b, " (lines %d-%d)", e.Line, e.Line+e.Lines-1)
		}
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns [ErrSegment] and Err.
func (e *SegmentError) Unwrap() []error { return []error{ErrSegment, e.Err} }

// RestoreError is returned by [Restore], with the files it wrote, when
// parts of the archive could not be used. Everything else was restored;
// the files listed lack what the damaged parts held.
type RestoreError struct {
	Damage   []*SegmentError // every piece that could not be used, in the order found
	Affected []Restored      // files written with Damaged > 0 or Suspect
	Lost     []Restored      // files known from an index of which no line could be restored: not written
}

func (e *RestoreError) Error() string {
	s := fmt.Sprintf("archive damaged: %d pieces could not be used, %d files restored incomplete or suspect, %d not restored",
		len(e.Damage), len(e.Affected), len(e.Lost))
	if len(e.Damage) > 0 {
		s += "; first: " + e.Damage[0].Error()
	}
	return s
}

// Unwrap returns the damage, each a *[SegmentError].
func (e *RestoreError) Unwrap() []error {
	errs := make([]error, len(e.Damage))
	for i, d := range e.Damage {
		errs[i] = d
	}
	return errs
}

// Restore writes back every archived file the filters select, as it was
// last read by the tailer: the complete lines of the file, byte for byte
// (except the spans a redaction rule replaced, and lines too long to
// archive, which are left out and counted as holes). A file read again
// after it was rewritten is given back as rewritten; one that was renamed,
// at its last path. Each file is written through a temporary name, under
// cfg.Out only: the host is escaped as a partition value ("." and ".." too)
// and the path cleaned, and a symbolic link under cfg.Out that leads out
// of it is refused (an error), never followed.
//
// What the archive claims is checked before it is used: a segment that is
// missing, whose index is unreadable or whose chunk index claims the
// impossible (a frame outside the file, more data or lines than its bytes
// hold), or a chunk whose frame does not decompress to what its index
// says, is skipped and everything else restored; Restore then returns the
// files it wrote and a *[RestoreError] naming each damaged piece and the
// files it affects. A file it cannot write stops it, with that error.
func Restore(ctx context.Context, cfg RestoreConfig) ([]Restored, error) {
	var segs []Segment
	var bad []*SegmentError
	var root *os.Root
	if cfg.Bucket != nil {
		var err error
		if segs, bad, err = bucketManifestLines(ctx, cfg.Bucket); err != nil {
			return nil, err
		}
	} else {
		var err error
		if segs, bad, err = readManifestLines(cfg.Archive); err != nil {
			return nil, err
		}
		if len(segs) == 0 && len(bad) == 0 {
			if _, err := os.Stat(filepath.Join(cfg.Archive, commit.ManifestName)); err != nil {
				return nil, fmt.Errorf("%s is not an archive (no %s): %w", cfg.Archive, commit.ManifestName, err)
			}
		}
		if root, err = os.OpenRoot(cfg.Archive); err != nil {
			return nil, err
		}
		defer root.Close()
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxChunkBytes))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	rs := &restorer{
		cfg: cfg, log: cfg.Logger, root: root, dec: dec, damage: bad,
		open: map[*segmentRef]segmentReader{}, current: map[string]*rebuilt{},
	}
	if rs.log == nil {
		rs.log = slog.New(slog.DiscardHandler)
	}
	if !cfg.Since.IsZero() {
		rs.since = cfg.Since.UTC().Format(time.DateOnly)
	}
	if !cfg.Until.IsZero() {
		rs.until = cfg.Until.UTC().Format(time.DateOnly)
	}
	defer rs.closeSegments()
	rs.ctx = ctx
	chunks, err := rs.indexes(ctx, segs)
	if err != nil {
		return nil, err
	}
	if cfg.Bucket != nil && cfg.Session != "" {
		chunks = filesOfSession(chunks, cfg.Session)
	}
	defer func() {
		if rs.out != nil {
			rs.out.Close()
		}
	}()
	if err := rs.rebuild(ctx, chunks); err != nil {
		return rs.written, err
	}
	return rs.write(ctx)
}

// restorer holds one [Restore]'s state.
type restorer struct {
	cfg   RestoreConfig
	log   *slog.Logger
	root  *os.Root // the archive
	out   *os.Root // cfg.Out, opened at the first file written
	dec   *zstd.Decoder
	since string // cfg.Since as a partition date, "" without
	until string // cfg.Until as a partition date, "" without

	open map[*segmentRef]segmentReader // segments open for reading frames
	// shared holds, for each open segment, the last frame shared by
	// several chunks that was read, decompressed: its chunks come one
	// after another in the segment (chunks are read in stream order,
	// and the segments of several partitions interleave).
	shared  map[*segmentRef]sharedFrame
	ctx     context.Context // of a bucket's reads
	damage  []*SegmentError
	lost    []Segment // segments none of whose chunks are known
	current map[string]*rebuilt
	done    []*rebuilt // rebuilt to the end, to be written
	// lastChunk is, for each file (fileKey), the index of its last chunk
	// among those rebuild reads: past it, nothing changes the file, which
	// is written at once and its lines let go. A restore holds the files
	// being rebuilt, not the archive (it held all of it: 1.7 GB of memory
	// for an archive of 790 MB).
	lastChunk map[string]int
	written   []Restored // files written: in the order written, sorted by host and path once all are
	affected  []Restored // of those, the ones with Damaged > 0 or Suspect
	lostFiles []Restored // files of which no line could be restored
}

// segmentRef is a segment whose index was read.
type segmentRef struct {
	rel     string // in the archive root
	name    string // as shown: the archive root joined
	suspect bool   // its content is not the manifest's
	bytes   int64  // its size, as the manifest says (a bucket's)
}

// located is a chunk of the index of a segment.
type located struct {
	Chunk
	seg *segmentRef
	bad error // what its index entry claims is impossible
}

// rebuilt is one file being rebuilt: its lines as runs of consecutive
// lines (a file restored from its line 10^6 on costs nothing for the
// lines before), ascending and apart.
type rebuilt struct {
	host, path, file string
	runs             []lineRun
	sessions         map[string]bool
	dated            bool
	damaged          int
	suspect          bool
	first, last      uint64 // sequences of its chunks
	partitions       map[commit.Partition]bool
}

// lineRun is lines first, first+1, ...; a nil line is a hole.
type lineRun struct {
	first int64
	lines [][]byte
}

// indexes reads the index of every segment the filters select and checks
// each chunk it lists; a segment that cannot be read is damage.
func (rs *restorer) indexes(ctx context.Context, segs []Segment) ([]located, error) {
	var all []located
	var archived []*objstore.ArchivedError
	for _, s := range segs {
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		if rs.cfg.Host != "" && s.Partition.Host != rs.cfg.Host {
			continue
		}
		if rs.since != "" && s.Partition.Date != "" && s.Partition.Date < rs.since {
			continue
		}
		if rs.until != "" && s.Partition.Date != "" && s.Partition.Date > rs.until {
			continue
		}
		ref := &segmentRef{rel: filepath.FromSlash(s.Path), name: filepath.Join(rs.cfg.Archive, filepath.FromSlash(s.Path))}
		var index []Chunk
		var framesEnd int64
		var err error
		if rs.cfg.Bucket != nil {
			ref.rel, ref.name, ref.bytes = s.Path, rs.cfg.Bucket.ObjectURL(s.Path), s.Bytes
			index, framesEnd, err = rs.readBucketIndex(ctx, ref)
			var ae *objstore.ArchivedError
			if errors.As(err, &ae) {
				archived = append(archived, ae)
				continue
			}
		} else {
			index, framesEnd, err = rs.readIndex(ref, s)
		}
		if err != nil {
			err = fmt.Errorf("%w; its chunks (sequences %d-%d) are lost, and which files they held is unknown", err, s.FirstSeq, s.LastSeq)
			rs.damage = append(rs.damage, &SegmentError{Segment: ref.name, Err: err})
			rs.lost = append(rs.lost, s)
			continue
		}
		for _, c := range index {
			all = append(all, located{Chunk: c, seg: ref, bad: c.check(framesEnd)})
		}
	}
	if len(archived) > 0 {
		return nil, &ArchivedSegmentsError{Objects: archived}
	}
	slices.SortStableFunc(all, func(a, b located) int { return compareSeq(a.Seq, b.Seq) })
	return all, nil
}

// readIndex opens the segment s, compares it with the manifest's record
// (a mismatch is damage, but the chunks that pass their own checks are
// used) and reads its index.
func (rs *restorer) readIndex(ref *segmentRef, s Segment) ([]Chunk, int64, error) {
	f, err := rs.root.Open(ref.rel)
	if err != nil {
		return nil, 0, fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !info.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("not a regular file (%s)", info.Mode().Type())
	}
	size := info.Size()
	if s.SHA256 != "" || s.Bytes > 0 {
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil {
			return nil, 0, fmt.Errorf("read: %w", err)
		}
		if sum := hex.EncodeToString(h.Sum(nil)); s.SHA256 != "" && sum != s.SHA256 || s.Bytes > 0 && size != s.Bytes {
			ref.suspect = true
			rs.damage = append(rs.damage, &SegmentError{Segment: ref.name, Err: fmt.Errorf(
				"differs from the manifest's record (%d bytes, sha256 %.12s…; manifest: %d bytes, %.12s…); its chunks that pass their own checks are used",
				size, sum, s.Bytes, s.SHA256)})
		}
	}
	return readSegmentIndex(f, size)
}

// rebuild rebuilds each file line by line, in stream order: a chunk
// replaces the lines from its first one on (a re-send after a restart
// gives the same lines again; a rewrite read from the start gives new
// ones). A damaged chunk is reported and its lines are missing.
func (rs *restorer) rebuild(ctx context.Context, all []located) error {
	pending := map[string]*pendingChunk{} // chunks split in parts, by partKey
	rs.lastChunk = make(map[string]int)
	for i := range all {
		rs.lastChunk[fileKey(&all[i])] = i
	}
	for i := range all {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if err := rs.rebuildChunk(all, i, pending); err != nil {
			return err
		}
	}
	unfinished := slices.SortedFunc(maps.Values(pending), func(a, b *pendingChunk) int { return compareSeq(a.first.Seq, b.first.Seq) })
	for _, p := range unfinished {
		rs.report(p.first, fmt.Errorf("parts %d to %d of %d missing", p.next, p.first.Parts, p.first.Parts))
		rs.damageFile(p.first)
	}
	for _, r := range rs.current {
		rs.done = append(rs.done, r)
	}
	clear(rs.current)
	return nil
}

// testHookHeld, when set, is told how many files a restore holds after
// each chunk.
var testHookHeld func(files int)

// pendingChunk is a chunk split in parts whose parts are being gathered.
type pendingChunk struct {
	first  *located
	next   int
	data   []byte
	failed bool
}

// rebuildChunk puts the chunk all[i] into its file, then writes the files
// whose last chunk it was.
func (rs *restorer) rebuildChunk(all []located, i int, pending map[string]*pendingChunk) error {
	rs.putChunk(&all[i], pending)
	if testHookHeld != nil {
		testHookHeld(len(rs.current) + len(rs.done))
	}
	key := fileKey(&all[i])
	if r := rs.current[key]; r != nil && rs.lastChunk[key] == i && !pendingOf(pending, &all[i]) {
		delete(rs.current, key)
		rs.done = append(rs.done, r)
	}
	for _, r := range rs.done {
		if err := rs.finish(r); err != nil {
			return err
		}
	}
	clear(rs.done)
	rs.done = rs.done[:0]
	return nil
}

// putChunk puts the lines of the chunk l into its file: a chunk in parts
// once its last part is read; a damaged one as missing lines.
func (rs *restorer) putChunk(l *located, pending map[string]*pendingChunk) {
	if l.bad != nil {
		rs.report(l, fmt.Errorf("index entry: %w", l.bad))
		rs.fileOf(l).damaged++
		return
	}
	data, err := rs.frame(l)
	if err != nil {
		rs.report(l, err)
	}
	if l.Parts > 1 {
		k := partKey(l)
		p := pending[k]
		switch {
		case l.Part == 1:
			// An unfinished copy of the same span is superseded: the
			// tailer sent the chunk again (past the duplicate window).
			p = &pendingChunk{first: l}
			pending[k] = p
		case p == nil:
			p = &pendingChunk{first: l, failed: true}
			pending[k] = p
			rs.report(l, fmt.Errorf("parts 1 to %d of %d missing", l.Part-1, l.Parts))
		case p.next != l.Part && !p.failed:
			p.failed = true
			rs.report(l, fmt.Errorf("part %d of %d where part %d was due", l.Part, l.Parts, p.next))
		}
		p.next = l.Part + 1
		p.failed = p.failed || err != nil
		if !p.failed {
			p.data = append(p.data, data...)
		}
		if l.Part < l.Parts {
			return
		}
		delete(pending, k)
		if p.failed {
			rs.damageFile(l)
			return
		}
		data = p.data
	} else if err != nil {
		rs.damageFile(l)
		return
	}
	lines, err := l.splitLines(data)
	if err != nil {
		rs.report(l, err)
		rs.damageFile(l)
		return
	}
	rs.fileOf(l).put(l.Line, lines)
}

// fileKey identifies the file a chunk belongs to: its host and identity.
func fileKey(l *located) string { return l.Host + "\x00" + l.File }

// pendingOf reports whether a chunk in parts of the file of l is still
// being gathered (its missing parts are reported at the end, against the
// file).
func pendingOf(pending map[string]*pendingChunk, l *located) bool {
	for _, p := range pending {
		if p.first.Host == l.Host && p.first.File == l.File {
			return true
		}
	}
	return false
}

// partKey identifies the chunk a part belongs to.
func partKey(l *located) string {
	return l.Host + "\x00" + l.File + "\x00" + strconv.FormatInt(l.Offset, 10) + "-" + strconv.FormatInt(l.End, 10) +
		"\x00" + strconv.FormatInt(l.Line, 10)
}

// report records that the chunk l could not be used.
func (rs *restorer) report(l *located, err error) {
	e := &SegmentError{Segment: l.seg.name, Seq: l.Seq, Host: l.Host, Path: l.Path, Err: err}
	if l.bad == nil {
		e.Line, e.Lines = l.Line, l.Lines
	}
	rs.damage = append(rs.damage, e)
}

// damageFile records a damaged chunk against its file: the file's lines
// from the chunk's first one on are not known as last read.
func (rs *restorer) damageFile(l *located) {
	r := rs.fileOf(l)
	r.damaged++
	r.cut(l.Line)
}

// fileOf returns the file the chunk l belongs to, its host and file
// identity, noting what the chunk says of it.
func (rs *restorer) fileOf(l *located) *rebuilt {
	key := fileKey(l)
	r := rs.current[key]
	if r != nil && l.bad == nil && l.Line == 1 && r.path != l.Path && len(r.runs) > 0 {
		// The file's identity was reused by another file.
		rs.done = append(rs.done, r)
		r = nil
	}
	if r == nil {
		r = &rebuilt{host: l.Host, file: l.File, path: l.Path, sessions: map[string]bool{}, first: l.Seq, partitions: map[commit.Partition]bool{}}
		rs.current[key] = r
	}
	if l.bad == nil || r.path == "" {
		r.path = l.Path
	}
	for _, s := range l.Sessions {
		r.sessions[s] = true
	}
	if day := l.TS.UTC().Format(time.DateOnly); l.TS.IsZero() ||
		(rs.since == "" || day >= rs.since) && (rs.until == "" || day <= rs.until) {
		r.dated = true
	}
	r.last = l.Seq
	r.partitions[chunkPartition(&l.Chunk)] = true
	r.suspect = r.suspect || l.seg.suspect
	return r
}

// chunkPartition returns the partition of a chunk of an index (as
// [ChunkPartition] does for a raw chunk).
func chunkPartition(c *Chunk) commit.Partition {
	p := commit.Partition{Format: c.Format, Host: c.Host}
	if !c.TS.IsZero() {
		p.Date = c.TS.UTC().Format(time.DateOnly)
	}
	return p
}

// cut drops the lines from line on.
func (r *rebuilt) cut(line int64) {
	for len(r.runs) > 0 {
		last := &r.runs[len(r.runs)-1]
		if last.first >= line {
			clear(last.lines)
			r.runs = r.runs[:len(r.runs)-1]
			continue
		}
		if k := line - last.first; k < int64(len(last.lines)) {
			clear(last.lines[k:])
			last.lines = last.lines[:k]
		}
		return
	}
}

// gapped reports whether lines before the last known one are unknown
// (holes, lines too long to archive, are known).
func (r *rebuilt) gapped() bool {
	next := int64(1)
	for _, run := range r.runs {
		if run.first != next {
			return true
		}
		next = run.first + int64(len(run.lines))
	}
	return false
}

// put replaces the lines from line on by lines.
func (r *rebuilt) put(line int64, lines [][]byte) {
	r.cut(line)
	if n := len(r.runs); n > 0 && r.runs[n-1].first+int64(len(r.runs[n-1].lines)) == line {
		r.runs[n-1].lines = append(r.runs[n-1].lines, lines...)
		return
	}
	r.runs = append(r.runs, lineRun{first: line, lines: lines})
}

// maxOpenSegments bounds the segment files open at once for reading frames.
const maxOpenSegments = 64

// frame returns the data of the chunk l, read and decompressed from its
// segment; l was checked, so nothing it claims allocates past the limits.
func (rs *restorer) frame(l *located) ([]byte, error) {
	f := rs.open[l.seg]
	if f == nil {
		if len(rs.open) >= maxOpenSegments {
			rs.closeSegments()
		}
		if rs.cfg.Bucket != nil {
			f = &bucketReader{ctx: rs.ctx, b: rs.cfg.Bucket, rel: l.seg.rel, size: l.seg.bytes}
		} else {
			file, err := rs.root.Open(l.seg.rel)
			if err != nil {
				return nil, fmt.Errorf("open: %w", err)
			}
			f = file
		}
		rs.open[l.seg] = f
	}
	if sf, ok := rs.shared[l.seg]; ok && l.FrameData > 0 && sf.at == l.FrameOffset && sf.bytes == l.FrameBytes && int64(len(sf.data)) == l.FrameData {
		return l.slice(sf.data), nil
	}
	want := l.Bytes
	if l.FrameData > 0 {
		want = l.FrameData
	}
	buf := make([]byte, l.FrameBytes)
	if _, err := f.ReadAt(buf, l.FrameOffset); err != nil {
		return nil, fmt.Errorf("read frame at %d: %w", l.FrameOffset, err)
	}
	out, err := rs.dec.DecodeAll(buf, make([]byte, 0, min(want, 8*l.FrameBytes+4096)))
	if err != nil {
		return nil, fmt.Errorf("frame at %d: %w", l.FrameOffset, err)
	}
	if int64(len(out)) != want {
		return nil, fmt.Errorf("frame at %d holds %d bytes, the index says %d", l.FrameOffset, len(out), want)
	}
	if l.FrameData > 0 {
		if rs.shared == nil {
			rs.shared = make(map[*segmentRef]sharedFrame)
		}
		rs.shared[l.seg] = sharedFrame{at: l.FrameOffset, bytes: l.FrameBytes, data: out}
		return l.slice(out), nil
	}
	return out, nil
}

// sharedFrame is a frame shared by several chunks, decompressed: where
// it is in its segment, its size there, and its data.
type sharedFrame struct {
	at, bytes int64
	data      []byte
}

// slice returns the chunk's bytes of its shared frame's data (checked:
// they are within it).
func (l *located) slice(frame []byte) []byte {
	return frame[l.FrameAt : l.FrameAt+l.Bytes : l.FrameAt+l.Bytes]
}

func (rs *restorer) closeSegments() {
	for ref, f := range rs.open {
		f.Close()
		delete(rs.open, ref)
	}
	clear(rs.shared)
}

// write writes the files left when every chunk was read (their last
// chunk's parts were missing) and reports what was written, sorted by
// host and path, and the damage.
func (rs *restorer) write(ctx context.Context) ([]Restored, error) {
	for _, r := range rs.done {
		if err := ctx.Err(); err != nil {
			return rs.written, context.Cause(ctx)
		}
		if err := rs.finish(r); err != nil {
			return rs.written, err
		}
	}
	rs.done = nil
	byPath := func(a, b Restored) int { return strings.Compare(a.Host+"\x00"+a.Path, b.Host+"\x00"+b.Path) }
	slices.SortStableFunc(rs.written, byPath)
	if len(rs.damage) > 0 {
		slices.SortStableFunc(rs.affected, byPath)
		slices.SortStableFunc(rs.lostFiles, byPath)
		return rs.written, &RestoreError{Damage: rs.damage, Affected: rs.affected, Lost: rs.lostFiles}
	}
	return rs.written, nil
}

// finish writes the file r if the filters select it, and lets its lines
// go.
func (rs *restorer) finish(r *rebuilt) error {
	defer func() { r.runs = nil }()
	// A segment whose chunks are unknown may have held lines of the files
	// of its host that share its partition, whose sequences span its own,
	// or that lack lines between their first and last restored ones.
	for _, s := range rs.lost {
		if r.host == s.Partition.Host && (r.partitions[s.Partition] || r.first <= s.LastSeq && s.FirstSeq <= r.last || r.gapped()) {
			r.suspect = true
		}
	}
	if rs.cfg.Session != "" && !r.sessions[rs.cfg.Session] || !r.dated {
		return nil
	}
	res := Restored{Host: r.host, Path: r.path, Damaged: r.damaged, Suspect: r.suspect}
	var b bytes.Buffer
	next := int64(1)
	for _, run := range r.runs {
		res.Holes += run.first - next
		for _, l := range run.lines {
			if l == nil {
				res.Holes++
				continue
			}
			b.Write(l)
			res.Lines++
		}
		next = run.first + int64(len(run.lines))
	}
	res.Bytes = int64(b.Len())
	if res.Lines == 0 && r.damaged > 0 {
		rs.lostFiles = append(rs.lostFiles, res)
		return nil
	}
	rel, err := restorePath(r.host, r.path)
	if err != nil {
		return err
	}
	res.Out = filepath.Join(rs.cfg.Out, rel)
	if err := rs.writeFile(rel, b.Bytes()); err != nil {
		return err
	}
	if res.Holes > 0 {
		rs.log.Warn("restored with lines missing (too long to archive, never read, or damaged)", "file", res.Out, "missing", res.Holes)
	}
	if res.Damaged > 0 || res.Suspect {
		rs.affected = append(rs.affected, res)
	}
	rs.written = append(rs.written, res)
	return nil
}

// restorePath returns where the file at p of host is restored, relative
// to the restore directory: <host>/<p>, host escaped as a partition value
// (and "." and ".." as %2E) and p cleaned, so that neither can leave it.
func restorePath(host, p string) (string, error) {
	rel, ok := cleanPath(p)
	if !ok {
		return "", fmt.Errorf("restore: archived file of %q has no usable path %q", host, p)
	}
	return filepath.Join(hostDir(host), rel), nil
}

// cleanPath returns p as a relative path: NUL bytes dropped, cleaned as
// if absolute (no "..", no volume); ok is false when nothing is left.
func cleanPath(p string) (rel string, ok bool) {
	clean := filepath.Clean("/" + filepath.FromSlash(strings.ReplaceAll(p, "\x00", "")))
	if vol := filepath.VolumeName(clean); vol != "" {
		clean = clean[len(vol):]
	}
	rel = strings.TrimLeft(clean, string(filepath.Separator))
	return rel, rel != "" && rel != "."
}

// usablePath reports whether an archived file's path p leaves a file name
// to restore it at.
func usablePath(p string) bool {
	_, ok := cleanPath(p)
	return ok
}

// hostDir returns the directory name of host's files: commit.EscapeValue's,
// with "." and ".." (which it keeps) escaped as "%2E" each.
func hostDir(host string) string {
	v := commit.EscapeValue(host)
	if v == "." || v == ".." {
		return strings.Repeat("%2E", len(v))
	}
	return v
}

// writeFile writes data at rel under cfg.Out through a temporary file,
// inside cfg.Out only: directories are created, and the files opened,
// through an [os.Root], which refuses a path that a symbolic link or ".."
// leads out of it. The final rename replaces a symbolic link at rel
// itself (with Force), never its target.
func (rs *restorer) writeFile(rel string, data []byte) error {
	if rs.out == nil {
		if err := os.MkdirAll(rs.cfg.Out, 0o755); err != nil {
			return err
		}
		root, err := os.OpenRoot(rs.cfg.Out)
		if err != nil {
			return err
		}
		rs.out = root
	}
	root, dst := rs.out, filepath.Join(rs.cfg.Out, rel)
	if !rs.cfg.Force {
		if _, err := root.Lstat(rel); err == nil {
			return fmt.Errorf("restore: %s exists (use -force to overwrite)", quoteUnprintable(dst))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("restore: %w", err)
		}
	}
	dir := filepath.Dir(rel)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("restore: create directory: %w", err)
	}
	tmp := filepath.Join(dir, commit.TmpName(filepath.Base(rel)))
	if err := root.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("restore: remove leftover: %w", err)
	}
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = root.Rename(tmp, rel)
	}
	if err != nil {
		root.Remove(tmp)
		return fmt.Errorf("restore: write %s: %w", quoteUnprintable(dst), err)
	}
	d, err := root.Open(dir)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	err = d.Sync()
	if e := d.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("restore: sync directory of %s: %w", quoteUnprintable(dst), err)
	}
	return nil
}

// quoteUnprintable returns s, Go-quoted when it holds a character that is
// not printable (a control character, invalid UTF-8), so that an error
// naming a path from an archive cannot drive a terminal.
func quoteUnprintable(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 || r >= 0x7f && r < 0xa0 {
			return strconv.Quote(s)
		}
	}
	return s
}
