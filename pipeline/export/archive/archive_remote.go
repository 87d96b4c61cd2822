package archive

import (
	"context"
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"

	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
)

// newRemoteArchiveWriter opens an ArchiveWriter on cfg.Bucket, as
// newRemoteWriter opens a Writer: the manifest read (created empty where
// the prefix holds nothing), no lock, leftovers left to parquet.CompactBucket.
func newRemoteArchiveWriter(cfg ArchiveConfig) (*ArchiveWriter, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commit.RemoteOpTimeout)
	defer cancel()
	rm, err := commit.LoadRemoteManifest[Segment](ctx, cfg.Bucket, commit.ManifestName)
	if err != nil {
		return nil, err
	}
	if err := commit.CreateRemoteManifest(ctx, rm, segmentCommitter, commit.IsSegmentName); err != nil {
		return nil, err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(cfg.Level), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true),
		zstd.WithWindowSize(archiveWindow))
	if err != nil {
		return nil, err
	}
	a := &ArchiveWriter{
		cfg: cfg, log: cfg.Logger.With(commit.KeyComponent, "archive"), enc: enc,
		high: make(map[commit.Partition]uint64), open: make(map[commit.Partition]*segment), dirs: make(map[string]bool),
		remote: rm, segments: rm.Items,
	}
	for _, s := range a.segments {
		a.high[s.Partition] = max(a.high[s.Partition], s.LastSeq)
	}
	return a, nil
}

// recordRemote lists segs in the archive's manifest object with one
// conditional write, as Writer.recordRemote does.
func (a *ArchiveWriter) recordRemote(ctx context.Context, segs []Segment) error {
	if err := a.remote.Commit(ctx, segs, segmentCommitter); err != nil {
		if errors.Is(err, commit.ErrConflict) || errors.Is(err, commit.ErrNotDurable) {
			a.failed = fmt.Errorf("archive writer stopped, restart to recover: %w", err)
			a.log.Error("archive manifest change failed for good: the writer stops; a restart recovers from the bucket", commit.KeyError, err.Error())
			return a.failed
		}
		return err
	}
	a.segments = a.remote.Items
	for _, s := range a.segments {
		a.high[s.Partition] = max(a.high[s.Partition], s.LastSeq)
	}
	return nil
}

// segmentCommitter is the committer of the archive manifest.
var segmentCommitter = commit.Committer[Segment]{
	Same: func(a, b Segment) bool { return a.Path == b.Path && a.SHA256 == b.SHA256 },
	Overlaps: func(l, o Segment) bool {
		return l.Partition == o.Partition && l.FirstSeq <= o.LastSeq && o.FirstSeq <= l.LastSeq
	},
}

// ReadBucketArchiveManifest reads the segments listed in an archive in a
// bucket (as [ReadArchiveManifest] for a directory).
func ReadBucketArchiveManifest(ctx context.Context, b *objstore.Bucket) ([]Segment, error) {
	rm, err := commit.LoadRemoteManifest[Segment](ctx, b, commit.ManifestName)
	if err != nil {
		return nil, err
	}
	return rm.Items, nil
}
