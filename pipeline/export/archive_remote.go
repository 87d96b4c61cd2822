package export

import (
	"context"
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// newRemoteArchiveWriter opens an ArchiveWriter on cfg.Bucket, as
// newRemoteWriter opens a Writer: the manifest read (created empty where
// the prefix holds nothing), no lock, leftovers left to [CompactBucket].
func newRemoteArchiveWriter(cfg ArchiveConfig) (*ArchiveWriter, error) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteOpTimeout)
	defer cancel()
	rm, err := loadRemoteManifest[Segment](ctx, cfg.Bucket, ManifestName)
	if err != nil {
		return nil, err
	}
	if err := createRemoteManifest(ctx, rm, segmentCommitter, isSegmentName); err != nil {
		return nil, err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(cfg.Level), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true),
		zstd.WithWindowSize(archiveWindow))
	if err != nil {
		return nil, err
	}
	a := &ArchiveWriter{
		cfg: cfg, log: cfg.Logger.With(KeyComponent, "archive"), enc: enc,
		high: make(map[Partition]uint64), open: make(map[Partition]*segment), dirs: make(map[string]bool),
		remote: rm, segments: rm.items,
	}
	for _, s := range a.segments {
		a.high[s.Partition] = max(a.high[s.Partition], s.LastSeq)
	}
	return a, nil
}

// recordRemote lists segs in the archive's manifest object with one
// conditional write, as Writer.recordRemote does.
func (a *ArchiveWriter) recordRemote(ctx context.Context, segs []Segment) error {
	if err := a.remote.commit(ctx, segs, segmentCommitter); err != nil {
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotDurable) {
			a.failed = fmt.Errorf("archive writer stopped, restart to recover: %w", err)
			a.log.Error("archive manifest change failed for good: the writer stops; a restart recovers from the bucket", KeyError, err.Error())
			return a.failed
		}
		return err
	}
	a.segments = a.remote.items
	for _, s := range a.segments {
		a.high[s.Partition] = max(a.high[s.Partition], s.LastSeq)
	}
	return nil
}
