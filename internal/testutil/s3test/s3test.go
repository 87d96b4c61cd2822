// Package s3test runs a real S3-compatible server for tests: versitygw
// (Apache-2.0) serving a temporary directory on 127.0.0.1, built once
// with `go build` from the version pinned in ./versitygw/go.mod (a module
// of its own, kept out of sessionpipe's go.mod) into the user's cache
// directory. Set SESSIONPIPE_VERSITYGW to a versitygw binary to skip the
// build. A test that cannot get a server is skipped with the reason,
// never failed.
package s3test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
)

// Version is the versitygw release the tests run.
const Version = "v1.8.0"

// Test credentials of the server's root account.
const (
	AccessKey = "sessionpipe-test"
	SecretKey = "sessionpipe-test-secret"
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Binary returns the path of the versitygw binary, building it at the
// first call.
func Binary() (string, error) {
	buildOnce.Do(func() { buildPath, buildErr = build() })
	return buildPath, buildErr
}

func build() (string, error) {
	if p := os.Getenv("SESSIONPIPE_VERSITYGW"); p != "" {
		return p, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "sessionpipe")
	bin := filepath.Join(dir, "versitygw-"+Version)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("s3test: cannot locate the versitygw module")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, "github.com/versity/versitygw/cmd/versitygw")
	cmd.Dir = filepath.Join(filepath.Dir(self), "versitygw")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("s3test: build versitygw %s: %v\n%s", Version, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// Server is a running versitygw serving a temporary directory.
type Server struct {
	tb       testing.TB
	bin      string
	Dir      string // the served directory (one sub-directory per bucket)
	meta     string // its metadata sidecar
	Addr     string // 127.0.0.1:port
	Endpoint string // http://127.0.0.1:port
	cmd      *exec.Cmd
	exited   chan struct{}
}

// Start starts a server and creates the bucket "test" (tb is skipped when
// no server can be had). It is stopped at the end of the test.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := Binary()
	if err != nil {
		tb.Skipf("no S3 test server: %v", err)
	}
	s := &Server{tb: tb, bin: bin, Dir: tb.TempDir(), meta: tb.TempDir()}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s.Addr = l.Addr().String()
	l.Close()
	s.Endpoint = "http://" + s.Addr
	s.Restart()
	tb.Cleanup(s.Stop)
	s.CreateBucket("test")
	return s
}

// Restart starts the server again on the same address and directory
// (after Stop or Kill).
func (s *Server) Restart() {
	s.tb.Helper()
	var lastErr error
	for try := 0; try < 50; try++ {
		s.cmd = exec.Command(s.bin, "--access", AccessKey, "--secret", SecretKey, "--port", s.Addr, "--quiet",
			"posix", "--sidecar", s.meta, s.Dir)
		s.cmd.Stdout, s.cmd.Stderr = os.Stderr, os.Stderr
		if err := s.cmd.Start(); err != nil {
			s.tb.Fatalf("start versitygw: %v", err)
		}
		s.exited = make(chan struct{})
		cmd, exited := s.cmd, s.exited
		go func() { cmd.Wait(); close(exited) }()
		if lastErr = s.waitReady(exited); lastErr == nil {
			return
		}
		// The port may still be held by the previous run: try again.
		select {
		case <-exited:
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.tb.Fatalf("versitygw did not start on %s: %v", s.Addr, lastErr)
}

// readyTimeout bounds the wait for a started server to answer: generous,
// as a loaded 2-core machine can take long to start a process.
const readyTimeout = 2 * time.Minute

// waitReady waits until the server answers HTTP, checking every 20 ms,
// or returns when it exits or readyTimeout passes.
func (s *Server) waitReady(exited chan struct{}) error {
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Get(s.Endpoint + "/")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("exited")
		case <-deadline.C:
			return fmt.Errorf("not listening after %s: %w", readyTimeout, err)
		case <-tick.C:
		}
	}
}

// Stop stops the server (SIGTERM, then SIGKILL) and waits for it.
func (s *Server) Stop() { s.stop(syscall.SIGTERM) }

// Kill stops the server with SIGKILL: requests in flight fail.
func (s *Server) Kill() { s.stop(syscall.SIGKILL) }

func (s *Server) stop(sig syscall.Signal) {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Config returns an objstore configuration for s3://<bucket>/<prefix> on
// this server.
func (s *Server) Config(bucket, prefix string) objstore.Config {
	return objstore.Config{
		URL: "s3://" + bucket + "/" + prefix, Endpoint: s.Endpoint, PathStyle: true, Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
		MaxAttempts: 4, MaxBackoff: 200 * time.Millisecond,
	}
}

// Bucket opens s3://test/<prefix> on this server.
func (s *Server) Bucket(prefix string) *objstore.Bucket {
	s.tb.Helper()
	b, err := objstore.Open(context.Background(), s.Config("test", prefix))
	if err != nil {
		s.tb.Fatal(err)
	}
	return b
}

// CreateBucket creates a bucket.
func (s *Server) CreateBucket(name string) {
	s.tb.Helper()
	c := s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
	})
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		s.tb.Fatalf("create bucket %s: %v", name, err)
	}
}

// Env returns the environment a child process needs to reach the server
// with the SDK's default chain.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey, "AWS_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true", "SESSIONPIPE_TEST_S3_PORT=" + strconv.Quote(s.Addr)}
}

// Fault decides, for each request a Proxy forwards, whether to fail it
// instead: an HTTP status (503 with an S3 SlowDown error, 500 with
// InternalError, 403 with InvalidObjectState as for an object in Glacier,
// anything else with an empty body), or 0 to forward it. A negative
// status forwards the request, then answers -status instead of the
// server's answer (a write done whose answer was lost).
type Fault func(r *http.Request) int

// Proxy starts an HTTP proxy in front of the server that fails the
// requests fault picks, and returns its endpoint.
func (s *Server) Proxy(fault Fault) string {
	s.tb.Helper()
	target, err := url.Parse(s.Endpoint)
	if err != nil {
		s.tb.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := fault(r)
		if code < 0 {
			// Forwarded, then the answer is lost: the client sees -code.
			rp.ServeHTTP(httptest.NewRecorder(), r)
			code = -code
		}
		if code != 0 {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(code)
			switch code {
			case http.StatusServiceUnavailable:
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
			case http.StatusForbidden:
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidObjectState</Code><Message>The operation is not valid for the object's storage class</Message><StorageClass>GLACIER</StorageClass></Error>`)
			case http.StatusInternalServerError:
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`)
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	s.tb.Cleanup(hs.Close)
	return hs.URL
}
