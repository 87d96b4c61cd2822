package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
)

// segmentReader is an open segment: a local file or an object.
type segmentReader interface {
	io.ReaderAt
	io.Closer
}

// ArchivedSegmentsError is returned by [Restore] when segments it needs
// are in an archive storage class (S3 Glacier Flexible Retrieval, Deep
// Archive) and not restored: it names each and how to thaw them; nothing
// was written.
type ArchivedSegmentsError struct {
	Objects []*objstore.ArchivedError
}

// Error names the first objects and the thaw command.
func (e *ArchivedSegmentsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "restore: %d segments are in an archive storage class and must be thawed first (restore-object, then run this again; see docs/s3.md)", len(e.Objects))
	for i, o := range e.Objects {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(e.Objects)-i)
			break
		}
		b.WriteString("; ")
		b.WriteString(o.Error())
	}
	return b.String()
}

// Unwrap returns [objstore.ErrArchived].
func (e *ArchivedSegmentsError) Unwrap() error { return objstore.ErrArchived }

// bucketManifestLines reads an archive manifest object as
// readManifestLines reads the file: bad lines reported, not fatal. A
// prefix without one is not an archive.
func bucketManifestLines(ctx context.Context, b *objstore.Bucket) ([]Segment, []*SegmentError, error) {
	data, _, err := b.Get(ctx, commit.ManifestName)
	if errors.Is(err, objstore.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s is not an archive (no %s): %w", b.URL(), commit.ManifestName, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read archive manifest: %w", err)
	}
	segs, bad := decodeManifestLines(data, b.ObjectURL(commit.ManifestName))
	return segs, bad, nil
}

// readBucketIndex reads a segment's index from its footer with two
// ranged GETs (its length and tag, then the index), never the frames.
// The whole object is not read, so its checksum is not compared with the
// manifest's: each frame's own checksum (zstd) and the index checks
// still hold.
func (rs *restorer) readBucketIndex(ctx context.Context, ref *segmentRef) ([]Chunk, int64, error) {
	r := &bucketReader{ctx: ctx, b: rs.cfg.Bucket, rel: ref.rel, size: ref.bytes, window: -1}
	index, end, err := readSegmentIndex(r, ref.bytes)
	if r.err != nil {
		return nil, 0, r.err // as is: an *objstore.ArchivedError is told apart
	}
	return index, end, err
}

// bucketWindow is how much a frame read fetches at once: frames are read
// in stream order, so the next ones are usually in the same window.
const bucketWindow = 4 << 20

// bucketReader reads an object with ranged GETs, keeping the last window
// read.
type bucketReader struct {
	ctx    context.Context
	b      *objstore.Bucket
	rel    string
	size   int64
	window int64 // bytes fetched per GET beyond what is asked; -1 exactly what is asked
	buf    []byte
	off    int64
	err    error // the first GET's error, as is
}

// ReadAt reads from the cached window, else fetches one.
func (r *bucketReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > r.size {
		return 0, fmt.Errorf("read %d bytes at %d of %s: past its %d bytes", len(p), off, r.rel, r.size)
	}
	if off >= r.off && off+int64(len(p)) <= r.off+int64(len(r.buf)) {
		return copy(p, r.buf[off-r.off:]), nil
	}
	n := int64(len(p))
	if r.window >= 0 {
		n = min(max(n, bucketWindow), r.size-off)
	}
	buf := make([]byte, n)
	if err := r.b.ReadAt(r.ctx, r.rel, buf, off); err != nil {
		if r.err == nil {
			r.err = err
		}
		return 0, err
	}
	r.buf, r.off = buf, off
	return copy(p, buf), nil
}

// Close drops the window.
func (r *bucketReader) Close() error { r.buf = nil; return nil }

// filesOfSession keeps the chunks of the files (host and file identity)
// that hold session in any chunk: a restore of one session reads the
// frames of its files only. Restore's own filter still decides which
// files are written.
func filesOfSession(all []located, session string) []located {
	keep := map[string]bool{}
	for i := range all {
		for _, s := range all[i].Sessions {
			if s == session {
				keep[all[i].Host+"\x00"+all[i].File] = true
			}
		}
	}
	out := all[:0]
	for _, l := range all {
		if keep[l.Host+"\x00"+l.File] {
			out = append(out, l)
		}
	}
	return out
}
