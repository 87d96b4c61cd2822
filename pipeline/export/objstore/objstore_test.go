package objstore_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/s3test"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
)

// Wrong credentials and a missing bucket are clear errors at start.
func TestBucket_CheckAtStart(t *testing.T) {
	srv := s3test.Start(t)
	require.NoError(t, srv.Bucket("p").Check(t.Context()))

	cfg := srv.Config("test", "p")
	cfg.Credentials = credentials.NewStaticCredentialsProvider(s3test.AccessKey, "wrong", "")
	b, err := objstore.Open(t.Context(), cfg)
	require.NoError(t, err)
	err = b.Check(t.Context())
	require.ErrorContains(t, err, "check the credentials")

	b, err = objstore.Open(t.Context(), srv.Config("no-such-bucket", "p"))
	require.NoError(t, err)
	err = b.Check(t.Context())
	require.ErrorContains(t, err, "the bucket does not exist")
}

// The conditional writes the manifests rely on: If-None-Match: * creates
// once; If-Match on a stale ETag loses.
func TestBucket_ConditionalPut(t *testing.T) {
	b := s3test.Start(t).Bucket("p")
	ctx := t.Context()
	e1, err := b.Put(ctx, "m", []byte("one"), objstore.Cond{IfNoneMatch: true})
	require.NoError(t, err)
	_, err = b.Put(ctx, "m", []byte("two"), objstore.Cond{IfNoneMatch: true})
	require.ErrorIs(t, err, objstore.ErrPrecondition)
	e2, err := b.Put(ctx, "m", []byte("two"), objstore.Cond{IfMatch: e1})
	require.NoError(t, err)
	_, err = b.Put(ctx, "m", []byte("three"), objstore.Cond{IfMatch: e1})
	require.ErrorIs(t, err, objstore.ErrPrecondition, "a stale ETag loses")
	data, etag, err := b.Get(ctx, "m")
	require.NoError(t, err)
	require.Equal(t, "two", string(data))
	require.Equal(t, e2, etag)
	_, _, err = b.Get(ctx, "nothing")
	require.ErrorIs(t, err, objstore.ErrNotExist)
}

// A large object goes as a multipart upload; one whose completion fails
// is aborted (no parts left behind, no object).
func TestBucket_MultipartUpload(t *testing.T) {
	srv := s3test.Start(t)
	cfg := srv.Config("test", "p")
	cfg.PartBytes = 5 << 20
	b, err := objstore.Open(t.Context(), cfg)
	require.NoError(t, err)
	data := make([]byte, 12<<20)
	rand.Read(data)
	require.NoError(t, b.Upload(t.Context(), "big", bytes.NewReader(data), int64(len(data))))
	got, _, err := b.Get(t.Context(), "big")
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got))
	require.Positive(t, b.Requests()["UploadPart"])

	// Completion always fails: the upload is aborted.
	cfg.Endpoint = srv.Proxy(func(r *http.Request) int {
		if r.Method == http.MethodPost && r.URL.Query().Has("uploadId") {
			return http.StatusInternalServerError
		}
		return 0
	})
	fb, err := objstore.Open(t.Context(), cfg)
	require.NoError(t, err)
	err = fb.Upload(t.Context(), "failed", bytes.NewReader(data), int64(len(data)))
	require.Error(t, err)
	_, _, err = b.Get(t.Context(), "failed")
	require.ErrorIs(t, err, objstore.ErrNotExist)
	ups, err := b.Uploads(t.Context())
	require.NoError(t, err)
	require.Empty(t, ups, "aborted on failure")
}

// An object in an archive tier is an *ArchivedError naming it and how to
// thaw it.
func TestBucket_Archived(t *testing.T) {
	srv := s3test.Start(t)
	_, err := srv.Bucket("p").Put(t.Context(), "cold", []byte("x"), objstore.Cond{})
	require.NoError(t, err)
	cfg := srv.Config("test", "p")
	cfg.Endpoint = srv.Proxy(func(r *http.Request) int {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/cold") {
			return http.StatusForbidden
		}
		return 0
	})
	b, err := objstore.Open(t.Context(), cfg)
	require.NoError(t, err)
	_, _, err = b.Get(t.Context(), "cold")
	var ae *objstore.ArchivedError
	require.True(t, errors.As(err, &ae), "%v", err)
	require.ErrorIs(t, err, objstore.ErrArchived)
	require.ErrorContains(t, err, "s3://test/p/cold is in an archive tier")
	require.ErrorContains(t, err, "restore-object --bucket test --key p/cold")
}
