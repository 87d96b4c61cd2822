package app

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
)

// S3 holds the flags of outputs kept in an S3-compatible bucket
// (-out s3://bucket/prefix, -archive-dir s3://bucket/prefix). The
// credentials are the AWS SDK's standard chain: AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws, web identity, the
// instance role.
type S3 struct {
	Endpoint     string
	Region       string
	PathStyle    bool
	Profile      string
	SSE          string
	SSEKMSKeyID  string
	StorageClass string
	Spool        string
}

// Register adds the -s3-* flags to fs.
func (s *S3) Register(fs *flag.FlagSet, env Env) {
	fs.StringVar(&s.Endpoint, "s3-endpoint", orDefault(env("SESSIONPIPE_S3_ENDPOINT"), env("AWS_ENDPOINT_URL_S3")), "S3 API endpoint of a server other than AWS, e.g. http://seaweedfs:8333 (env SESSIONPIPE_S3_ENDPOINT or AWS_ENDPOINT_URL_S3)")
	fs.StringVar(&s.Region, "s3-region", env("SESSIONPIPE_S3_REGION"), "bucket region (env SESSIONPIPE_S3_REGION; default AWS_REGION or the profile's, else us-east-1)")
	fs.BoolVar(&s.PathStyle, "s3-path-style", envBool(env("SESSIONPIPE_S3_PATH_STYLE"), false), "path-style addressing, endpoint/bucket/key (env SESSIONPIPE_S3_PATH_STYLE; most self-hosted servers need it)")
	fs.StringVar(&s.Profile, "s3-profile", env("SESSIONPIPE_S3_PROFILE"), "shared config profile (env SESSIONPIPE_S3_PROFILE; default AWS_PROFILE)")
	fs.StringVar(&s.SSE, "s3-sse", env("SESSIONPIPE_S3_SSE"), "server-side encryption of written objects: AES256 or aws:kms (env SESSIONPIPE_S3_SSE; default the bucket's)")
	fs.StringVar(&s.SSEKMSKeyID, "s3-sse-kms-key-id", env("SESSIONPIPE_S3_SSE_KMS_KEY_ID"), "KMS key of -s3-sse aws:kms (env SESSIONPIPE_S3_SSE_KMS_KEY_ID)")
	fs.StringVar(&s.StorageClass, "s3-storage-class", env("SESSIONPIPE_S3_STORAGE_CLASS"), "storage class of Parquet files and archive segments, e.g. STANDARD_IA (env SESSIONPIPE_S3_STORAGE_CLASS; default the bucket's)")
	fs.StringVar(&s.Spool, "s3-spool", env("SESSIONPIPE_S3_SPOOL"), "local directory where a Parquet file is encoded before its upload (env SESSIONPIPE_S3_SPOOL; default the system's temporary directory)")
}

// Config returns the objstore configuration of the bucket loc names.
func (s *S3) Config(loc string) objstore.Config {
	return objstore.Config{
		URL: loc, Endpoint: s.Endpoint, Region: s.Region, PathStyle: s.PathStyle, Profile: s.Profile,
		SSE: s.SSE, SSEKMSKeyID: s.SSEKMSKeyID, StorageClass: s.StorageClass,
	}
}

// Open opens the bucket loc names and checks that it exists and the
// credentials may use it (an error saying which at start); a local
// directory gives nil, nil.
func (s *S3) Open(ctx context.Context, loc string) (*objstore.Bucket, error) {
	if !objstore.IsURL(loc) {
		return nil, nil
	}
	var cfg objstore.Config
	if s != nil {
		cfg = s.Config(loc)
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

// Outputs opens the Parquet output out and the archive (archive "" for
// none), each a directory or a bucket, into the writers' configurations.
func (s *S3) Outputs(ctx context.Context, out, archive string) (export.Config, export.ArchiveConfig, error) {
	pc := export.Config{Dir: out}
	ac := export.ArchiveConfig{Dir: archive}
	var err error
	if pc.Bucket, err = s.Open(ctx, out); err != nil {
		return pc, ac, err
	}
	if s != nil {
		pc.SpoolDir = s.Spool
	}
	if archive != "" {
		if ac.Bucket, err = s.Open(ctx, archive); err != nil {
			return pc, ac, err
		}
	}
	return pc, ac, nil
}
