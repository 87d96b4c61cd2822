package parquet

import (
	"context"
	"os"

	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
)

// fileCommitter is the committer of the Parquet manifest.
var fileCommitter = commit.Committer[File]{
	Same: func(a, b File) bool { return a.Path == b.Path && a.SHA256 == b.SHA256 },
	Overlaps: func(l, o File) bool {
		return l.Partition == o.Partition && l.FirstSeq <= o.LastSeq && o.FirstSeq <= l.LastSeq
	},
}

// uploadFile uploads the local file p as rel.
func uploadFile(ctx context.Context, b *objstore.Bucket, rel, p string, size int64) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return b.Upload(ctx, rel, f, size)
}

// ReadBucketManifest reads the Parquet manifest of an output in a bucket
// (as [ReadManifest] for a directory); none is an empty manifest.
func ReadBucketManifest(ctx context.Context, b *objstore.Bucket) (*Manifest, error) {
	rm, err := commit.LoadRemoteManifest[File](ctx, b, ManifestName)
	if err != nil {
		return nil, err
	}
	return &Manifest{Files: rm.Items}, nil
}
