// Package objstore is the exporter's view of an S3-compatible bucket (AWS
// S3, Cloudflare R2, GCS interoperability, Ceph, SeaweedFS, MinIO,
// versitygw): whole-object reads and ranged reads, conditional writes
// (If-Match, If-None-Match), multipart uploads for large objects (aborted
// on failure), listings and deletes, all below one key prefix.
//
// It knows nothing of Parquet or manifests: package export builds its
// commit protocol on [Bucket.Put] with a [Cond]. Credentials come from the
// AWS SDK's standard chain (environment, shared config and profiles, web
// identity, instance roles) unless Config.Credentials is set.
package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// Defaults of a [Config]'s zero fields.
const (
	// DefaultPartBytes is the size of a multipart upload's parts; an
	// object up to it is sent with one PUT.
	DefaultPartBytes = 16 << 20

	// DefaultMaxAttempts is how many times a request is tried (5xx,
	// throttling, connection errors), with exponential backoff and
	// jitter up to DefaultMaxBackoff between attempts.
	DefaultMaxAttempts = 6

	// DefaultMaxBackoff bounds the wait between two attempts.
	DefaultMaxBackoff = 5 * time.Second

	// DefaultRegion is used when neither Config.Region nor the SDK's
	// chain names one (S3-compatible servers ignore it).
	DefaultRegion = "us-east-1"
)

// Sentinel errors. Match them with [errors.Is].
var (
	// ErrNotExist is returned for an object that does not exist.
	ErrNotExist = errors.New("objstore: no such object")

	// ErrPrecondition is returned by a conditional [Bucket.Put] that lost:
	// the object changed since its ETag was read (If-Match), or exists
	// (If-None-Match: *). Read it again and decide again.
	ErrPrecondition = errors.New("objstore: precondition failed")

	// ErrNotURL is returned by [ParseURL] for a location that is not
	// s3://bucket[/prefix].
	ErrNotURL = errors.New("objstore: not an s3:// URL")

	// ErrArchived is wrapped by an *[ArchivedError].
	ErrArchived = errors.New("objstore: object is in an archive storage class")
)

// ArchivedError is returned when an object cannot be read because it was
// moved to an archive tier (S3 Glacier Flexible Retrieval or Deep
// Archive, or an Intelligent-Tiering archive tier) and is not restored.
type ArchivedError struct {
	Bucket, Key  string
	StorageClass string // as listed, when known
}

// Error names the object and how to thaw it.
func (e *ArchivedError) Error() string {
	class := e.StorageClass
	if class == "" {
		class = "an archive tier"
	}
	return fmt.Sprintf("s3://%s/%s is in %s and must be restored before it can be read: "+
		"aws s3api restore-object --bucket %s --key %s --restore-request '{\"Days\":7,\"GlacierJobParameters\":{\"Tier\":\"Standard\"}}' "+
		"(hours; Bulk is cheaper, Expedited faster), then run this again", e.Bucket, e.Key, class, e.Bucket, e.Key)
}

// Unwrap returns [ErrArchived].
func (e *ArchivedError) Unwrap() error { return ErrArchived }

// Config configures [Open].
type Config struct {
	// URL is s3://bucket/prefix; the prefix may be empty. Required.
	URL string

	// Endpoint is the S3 API's base URL for a server other than AWS
	// (https://<account>.r2.cloudflarestorage.com, http://127.0.0.1:7070).
	Endpoint string

	// Region; default the SDK chain's (AWS_REGION, the profile), else
	// [DefaultRegion].
	Region string

	// PathStyle addresses the bucket as <endpoint>/<bucket>/key instead of
	// <bucket>.<endpoint>/key (most self-hosted servers need it).
	PathStyle bool

	// Profile selects a shared config profile (~/.aws/config); empty:
	// AWS_PROFILE or default.
	Profile string

	// SSE is the server-side encryption of written objects: "" (the
	// bucket's default), "AES256" or "aws:kms" (with SSEKMSKeyID).
	SSE         string
	SSEKMSKeyID string

	// StorageClass of written data objects (STANDARD, STANDARD_IA,
	// INTELLIGENT_TIERING, ...); empty: the bucket's default. Manifests
	// and the position are always written STANDARD: they are read at
	// every start and rewritten at every commit.
	StorageClass string

	// PartBytes is the multipart part size; default [DefaultPartBytes].
	PartBytes int64

	// MaxAttempts and MaxBackoff configure the retries of each request;
	// defaults [DefaultMaxAttempts], [DefaultMaxBackoff].
	MaxAttempts int
	MaxBackoff  time.Duration

	// Credentials, when set, replaces the SDK's chain (tests, or keys
	// given on the command line).
	Credentials aws.CredentialsProvider

	// HTTPClient, when set, sends the requests (tests inject faults).
	HTTPClient *http.Client
}

// Bucket is an S3 bucket below a key prefix. Keys given to its methods
// are relative to the prefix, with slashes. It is safe for concurrent use.
type Bucket struct {
	cfg    Config
	client *s3.Client
	up     *manager.Uploader
	name   string
	prefix string // "" or ending in "/"
	reqs   requestCounter
}

// ParseURL splits s3://bucket/prefix into the bucket and the prefix (no
// leading or trailing slash). It returns [ErrNotURL] for anything else.
func ParseURL(s string) (bucket, prefix string, err error) {
	if !IsURL(s) {
		return "", "", fmt.Errorf("%w: %q", ErrNotURL, s)
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("%w: %q: want s3://bucket/prefix", ErrNotURL, s)
	}
	return u.Host, strings.Trim(u.Path, "/"), nil
}

// IsURL reports whether s names a bucket (s3://...) rather than a local
// directory.
func IsURL(s string) bool { return strings.HasPrefix(s, "s3://") }

// Open returns the bucket cfg.URL names, with its client configured. It
// sends no request: call [Bucket.Check] to learn at start that the
// bucket is missing or the credentials wrong.
func Open(ctx context.Context, cfg Config) (*Bucket, error) {
	name, prefix, err := ParseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.PartBytes <= 0 {
		cfg.PartBytes = DefaultPartBytes
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	var opts []func(*awsconfig.LoadOptions) error
	if cfg.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(cfg.Profile))
	}
	if cfg.Region != "" {
		opts = append(opts, awsconfig.WithRegion(cfg.Region))
	}
	if cfg.Credentials != nil {
		opts = append(opts, awsconfig.WithCredentialsProvider(cfg.Credentials))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, awsconfig.WithHTTPClient(cfg.HTTPClient))
	}
	opts = append(opts, awsconfig.WithRetryer(func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = cfg.MaxAttempts
			o.MaxBackoff = cfg.MaxBackoff
			// Throttling is waited out, not failed fast: the exporter holds
			// its data until the bucket takes it.
			o.RateLimiter = noRateLimit{}
		})
	}))
	ac, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	if ac.Region == "" {
		ac.Region = DefaultRegion
	}
	b := &Bucket{cfg: cfg, name: name}
	if prefix != "" {
		b.prefix = prefix + "/"
	}
	b.client = s3.NewFromConfig(ac, func(o *s3.Options) {
		o.UsePathStyle = cfg.PathStyle
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		// Checksums only when the API requires them: several S3-compatible
		// servers reject the newer default trailing checksums.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		o.APIOptions = append(o.APIOptions, b.reqs.middleware)
	})
	b.up = manager.NewUploader(b.client, func(u *manager.Uploader) {
		u.PartSize = cfg.PartBytes
		u.Concurrency = 4
	})
	return b, nil
}

// URL returns s3://bucket/prefix.
func (b *Bucket) URL() string { return "s3://" + b.name + "/" + strings.TrimSuffix(b.prefix, "/") }

// Name returns the bucket's name.
func (b *Bucket) Name() string { return b.name }

// Prefix returns the key prefix ("" or ending in "/").
func (b *Bucket) Prefix() string { return b.prefix }

// Config returns the configuration the bucket was opened with.
func (b *Bucket) Config() Config { return b.cfg }

// Key returns the full key of rel.
func (b *Bucket) Key(rel string) string { return b.prefix + rel }

// ObjectURL returns s3://bucket/<prefix><rel>.
func (b *Bucket) ObjectURL(rel string) string { return "s3://" + b.name + "/" + b.prefix + rel }

// Requests returns how many HTTP requests the bucket sent, by operation
// (PutObject, GetObject, ...), retries included.
func (b *Bucket) Requests() map[string]int64 { return b.reqs.snapshot() }

// Check verifies at start that the bucket exists and the credentials may
// list and write it: a HeadBucket, then a listing of one key below the
// prefix. Its error says which.
func (b *Bucket) Check(ctx context.Context) error {
	if _, err := b.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &b.name}); err != nil {
		return fmt.Errorf("bucket %s: %w", b.name, describe(err))
	}
	_, err := b.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: &b.prefix, MaxKeys: aws.Int32(1)})
	if err != nil {
		return fmt.Errorf("list %s: %w", b.URL(), describe(err))
	}
	return nil
}

// Cond is the precondition of a [Bucket.Put].
type Cond struct {
	// IfMatch writes only over the version with this ETag.
	IfMatch string
	// IfNoneMatch writes only if the object does not exist.
	IfNoneMatch bool
}

// Object is a listed object.
type Object struct {
	Key          string // relative to the prefix
	Size         int64
	ETag         string
	LastModified time.Time
	StorageClass string
}

// Get reads the whole object rel and its ETag. A missing object is
// [ErrNotExist]; one in an archive tier an *[ArchivedError].
func (b *Bucket) Get(ctx context.Context, rel string) ([]byte, string, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.name, Key: aws.String(b.Key(rel))})
	if err != nil {
		return nil, "", b.mapErr(rel, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", b.ObjectURL(rel), err)
	}
	return data, aws.ToString(out.ETag), nil
}

// ReadAt reads len(p) bytes of rel at off (a ranged GET).
func (b *Bucket) ReadAt(ctx context.Context, rel string, p []byte, off int64) error {
	if len(p) == 0 {
		return nil
	}
	rng := fmt.Sprintf("bytes=%d-%d", off, off+int64(len(p))-1)
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.name, Key: aws.String(b.Key(rel)), Range: &rng})
	if err != nil {
		return b.mapErr(rel, err)
	}
	defer out.Body.Close()
	if _, err := io.ReadFull(out.Body, p); err != nil {
		return fmt.Errorf("read %s at %d: %w", b.ObjectURL(rel), off, err)
	}
	return nil
}

// Head returns rel's size, ETag and storage class.
func (b *Bucket) Head(ctx context.Context, rel string) (Object, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.name, Key: aws.String(b.Key(rel))})
	if err != nil {
		return Object{}, b.mapErr(rel, err)
	}
	o := Object{Key: rel, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), StorageClass: string(out.StorageClass)}
	if out.LastModified != nil {
		o.LastModified = *out.LastModified
	}
	if archived(o.StorageClass) && (out.Restore == nil || !strings.Contains(*out.Restore, `ongoing-request="false"`)) {
		return o, &ArchivedError{Bucket: b.name, Key: b.Key(rel), StorageClass: o.StorageClass}
	}
	return o, nil
}

// Put writes data as rel with cond and returns its ETag. A lost
// precondition is [ErrPrecondition]. Metadata objects (manifests, the
// position) go through Put; data objects through [Bucket.Upload].
func (b *Bucket) Put(ctx context.Context, rel string, data []byte, cond Cond) (string, error) {
	in := &s3.PutObjectInput{
		Bucket: &b.name, Key: aws.String(b.Key(rel)), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	if cond.IfMatch != "" {
		in.IfMatch = aws.String(cond.IfMatch)
	}
	if cond.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	b.encrypt(in)
	out, err := b.client.PutObject(ctx, in)
	if err != nil {
		return "", b.mapErr(rel, err)
	}
	return aws.ToString(out.ETag), nil
}

// Upload writes size bytes of r as the data object rel, in the
// configured storage class: one PUT up to Config.PartBytes, else a
// multipart upload (aborted when it fails; one a crash interrupted stays
// invisible until [Bucket.AbortUploads] removes it). An object appears
// whole or not at all.
func (b *Bucket) Upload(ctx context.Context, rel string, r io.ReadSeeker, size int64) error {
	in := &s3.PutObjectInput{Bucket: &b.name, Key: aws.String(b.Key(rel)), Body: r}
	if size <= b.cfg.PartBytes {
		in.ContentLength = aws.Int64(size)
	}
	if b.cfg.StorageClass != "" {
		in.StorageClass = types.StorageClass(b.cfg.StorageClass)
	}
	b.encrypt(in)
	if _, err := b.up.Upload(ctx, in); err != nil {
		return b.mapErr(rel, err)
	}
	return nil
}

func (b *Bucket) encrypt(in *s3.PutObjectInput) {
	if b.cfg.SSE != "" {
		in.ServerSideEncryption = types.ServerSideEncryption(b.cfg.SSE)
		if b.cfg.SSEKMSKeyID != "" {
			in.SSEKMSKeyId = aws.String(b.cfg.SSEKMSKeyID)
		}
	}
}

// Delete removes rel; a missing object is not an error.
func (b *Bucket) Delete(ctx context.Context, rel string) error {
	_, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.name, Key: aws.String(b.Key(rel))})
	if err != nil {
		if err := b.mapErr(rel, err); !errors.Is(err, ErrNotExist) {
			return err
		}
	}
	return nil
}

// List yields the objects whose relative key starts with sub, in key
// order; a listing error ends it.
func (b *Bucket) List(ctx context.Context, sub string) iter.Seq2[Object, error] {
	return func(yield func(Object, error) bool) {
		p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: aws.String(b.prefix + sub)})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				yield(Object{}, fmt.Errorf("list %s: %w", b.ObjectURL(sub), describe(err)))
				return
			}
			for _, o := range page.Contents {
				obj := Object{
					Key: strings.TrimPrefix(aws.ToString(o.Key), b.prefix), Size: aws.ToInt64(o.Size),
					ETag: aws.ToString(o.ETag), StorageClass: string(o.StorageClass),
				}
				if o.LastModified != nil {
					obj.LastModified = *o.LastModified
				}
				if !yield(obj, nil) {
					return
				}
			}
		}
	}
}

// Upload is a multipart upload in progress below the prefix.
type Upload struct {
	Key       string // relative
	ID        string
	Initiated time.Time
}

// Uploads lists the multipart uploads in progress below the prefix:
// those a crash interrupted, or a writer's running now.
func (b *Bucket) Uploads(ctx context.Context) ([]Upload, error) {
	var ups []Upload
	in := &s3.ListMultipartUploadsInput{Bucket: &b.name, Prefix: &b.prefix}
	for {
		out, err := b.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return ups, fmt.Errorf("list multipart uploads of %s: %w", b.URL(), describe(err))
		}
		for _, u := range out.Uploads {
			up := Upload{Key: strings.TrimPrefix(aws.ToString(u.Key), b.prefix), ID: aws.ToString(u.UploadId)}
			if u.Initiated != nil {
				up.Initiated = *u.Initiated
			}
			ups = append(ups, up)
		}
		if !aws.ToBool(out.IsTruncated) {
			return ups, nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}

// Abort aborts the multipart upload u, removing its parts.
func (b *Bucket) Abort(ctx context.Context, u Upload) error {
	_, err := b.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &b.name, Key: aws.String(b.Key(u.Key)), UploadId: &u.ID})
	if err != nil {
		if err := b.mapErr(u.Key, err); !errors.Is(err, ErrNotExist) {
			return err
		}
	}
	return nil
}

// mapErr maps the SDK's errors onto the sentinels.
func (b *Bucket) mapErr(rel string, err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchKey", "NotFound", "NoSuchUpload":
			return fmt.Errorf("%s: %w", b.ObjectURL(rel), ErrNotExist)
		case "PreconditionFailed", "ConditionalRequestConflict":
			return fmt.Errorf("%s: %w", b.ObjectURL(rel), ErrPrecondition)
		case "InvalidObjectState":
			return &ArchivedError{Bucket: b.name, Key: b.Key(rel)}
		}
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case http.StatusNotFound:
			return fmt.Errorf("%s: %w", b.ObjectURL(rel), ErrNotExist)
		case http.StatusPreconditionFailed:
			return fmt.Errorf("%s: %w", b.ObjectURL(rel), ErrPrecondition)
		}
	}
	return fmt.Errorf("%s: %w", b.ObjectURL(rel), describe(err))
}

// describe adds what an operator should check to the errors that say
// the bucket or the credentials are wrong.
func describe(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchBucket":
			return fmt.Errorf("%w (the bucket does not exist: create it, or check the name and -s3-endpoint)", err)
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "Forbidden":
			return fmt.Errorf("%w (check the credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, the instance role, and the bucket policy)", err)
		}
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case http.StatusNotFound:
			return fmt.Errorf("%w (the bucket does not exist: create it, or check the name and -s3-endpoint)", err)
		case http.StatusForbidden:
			return fmt.Errorf("%w (check the credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, the instance role, and the bucket policy)", err)
		}
	}
	return err
}

// archived reports whether objects of the storage class must be restored
// before they are read.
func archived(class string) bool {
	switch class {
	case string(types.StorageClassGlacier), string(types.StorageClassDeepArchive):
		return true
	}
	return false
}

// Base returns the last element of a relative key.
func Base(rel string) string { return path.Base(rel) }

// noRateLimit lets the standard retryer retry without its client-side
// token bucket, which gives up after a burst of failures.
type noRateLimit struct{}

func (noRateLimit) GetToken(context.Context, uint) (func() error, error) { return noop, nil }
func (noRateLimit) AddTokens(uint) error                                 { return nil }

func noop() error { return nil }
