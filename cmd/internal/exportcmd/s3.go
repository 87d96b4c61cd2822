package exportcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// S3Config returns the objstore configuration of the bucket loc names.
func S3Config(s *cli.S3, loc string) objstore.Config {
	return objstore.Config{
		URL: loc, Endpoint: s.Endpoint, Region: s.Region, PathStyle: s.PathStyle, Profile: s.Profile,
		SSE: s.SSE, SSEKMSKeyID: s.SSEKMSKeyID, StorageClass: s.StorageClass,
	}
}

// OpenBucket opens the bucket loc names and checks that it exists and the
// credentials may use it (an error saying which at start); a local
// directory gives nil, nil.
func OpenBucket(ctx context.Context, s *cli.S3, loc string) (*objstore.Bucket, error) {
	if !objstore.IsURL(loc) {
		return nil, nil
	}
	var cfg objstore.Config
	if s != nil {
		cfg = S3Config(s, loc)
	} else {
		cfg = objstore.Config{URL: loc}
	}
	b, err := objstore.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := b.Check(cctx); err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	return b, nil
}

// Outputs opens, with the flags s (nil: the defaults), the Parquet output out and the archive arch (arch "" for
// none), each a directory or a bucket, into the writers' configurations.
func Outputs(ctx context.Context, s *cli.S3, out, arch string) (parquet.Config, archive.ArchiveConfig, error) {
	pc := parquet.Config{Dir: out}
	ac := archive.ArchiveConfig{Dir: arch}
	var err error
	if pc.Bucket, err = OpenBucket(ctx, s, out); err != nil {
		return pc, ac, err
	}
	if s != nil {
		pc.SpoolDir = s.Spool
	}
	if arch != "" {
		if ac.Bucket, err = OpenBucket(ctx, s, arch); err != nil {
			return pc, ac, err
		}
	}
	return pc, ac, nil
}
