package doctor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/s3test"
)

// doctor exporter checks an output in a bucket: reachable with its
// manifest; a missing bucket and wrong credentials are failures that say
// so.
func TestDoctor_ExporterBucket(t *testing.T) {
	srv := s3test.Start(t)
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	args := func(out string) []string {
		return []string{"-data-dir", t.TempDir(), "-nats-port", "-1", "-out", out, "-archive-dir", "s3://test/archive",
			"-s3-endpoint", srv.Endpoint, "-s3-path-style", "-s3-region", "us-east-1"}
	}
	checks := doctorChecks(t, "exporter", nil, args("s3://test/parquet")...)
	requireCheck(t, checks, CheckOK, "bucket", "Parquet s3://test/parquet: reachable")
	requireCheck(t, checks, CheckOK, "bucket", "archive s3://test/archive: reachable")
	requireCheck(t, checks, CheckOK, "bucket", "Parquet s3://test/parquet: conditional writes honoured")

	checks = doctorChecks(t, "exporter", nil, args("s3://missing/parquet")...)
	requireCheck(t, checks, CheckFail, "bucket", "the bucket does not exist")

	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
	checks = doctorChecks(t, "exporter", nil, args("s3://test/parquet")...)
	requireCheck(t, checks, CheckFail, "bucket", "Parquet s3://test/parquet")
	c := requireCheck(t, checks, CheckFail, "bucket", "archive s3://test/archive")
	require.Contains(t, c.Message, "check the credentials")
}
