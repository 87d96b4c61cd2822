package cli

import "flag"

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
