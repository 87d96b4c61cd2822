package export_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/s3test"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// s3Env is an exportEnv whose outputs are in a bucket.
type s3Env struct {
	*exportEnv
	srv          *s3test.Server
	out, archive *objstore.Bucket
	files        map[string][]byte // host + session → file bytes published
}

func newS3Env(t *testing.T) *s3Env {
	e := &s3Env{exportEnv: newExportEnv(t), srv: s3test.Start(t), files: map[string][]byte{}}
	e.out, e.archive = e.srv.Bucket("parquet"), e.srv.Bucket("archive")
	return e
}

func (e *s3Env) publish(host, session string, n int) {
	e.files[host+session] = e.publishFile(host, session, n)
}

// config returns an exporter configuration on the env's buckets (or the
// ones given, reached through another endpoint).
func (e *s3Env) config(name string, out, arch *objstore.Bucket) export.ExporterConfig {
	return export.ExporterConfig{
		JS: e.js, Name: name,
		Parquet:        parquet.Config{Dir: out.URL(), Bucket: out, PartAge: 300 * time.Millisecond, PartBytes: 16 << 10, SpoolDir: e.t.TempDir()},
		Archive:        archive.ArchiveConfig{Dir: arch.URL(), Bucket: arch, SegmentBytes: 2 << 10},
		CommitInterval: 100 * time.Millisecond,
		LeaseTTL:       2 * time.Second,
	}
}

// runAll runs the exporters together until each committed the whole
// stream, calling during (if set) once while they run, then stops them.
func (e *s3Env) runAll(during func(xs []*export.Exporter), cfgs ...export.ExporterConfig) []export.ExporterStats {
	t := e.t
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var xs []*export.Exporter
	errs := make(chan error, len(cfgs))
	var wg sync.WaitGroup
	for _, cfg := range cfgs {
		x, err := export.NewExporter(cfg)
		require.NoError(t, err)
		xs = append(xs, x)
		wg.Go(func() { errs <- x.Run(ctx) })
	}
	if during != nil {
		during(xs)
	}
	// The stream's end is read after during, which may publish more:
	// read before, the wait could end with those entries uncommitted.
	s, err := e.js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	info, err := s.Info(t.Context())
	require.NoError(t, err)
	last := info.State.LastSeq
	natstest.CheckFor(t, 90*time.Second, 20*time.Millisecond, func() error {
		select {
		case err := <-errs:
			return fmt.Errorf("exporter stopped: %v", err)
		default:
		}
		for i, x := range xs {
			if c := x.Stats().Committed; c < last {
				return fmt.Errorf("exporter %d committed %d of %d", i, c, last)
			}
		}
		return nil
	})
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	stats := make([]export.ExporterStats, len(xs))
	for i, x := range xs {
		stats[i] = x.Stats()
	}
	return stats
}

// requireExactlyOnce checks the buckets: each published entry in exactly
// one row of the listed files (read from the downloaded objects), every
// listed object with its manifest size and checksum, and every file
// restored from the bucket as published.
func (e *s3Env) requireExactlyOnce(entries int) {
	t := e.t
	t.Helper()
	m, err := parquet.ReadBucketManifest(t.Context(), e.out)
	require.NoError(t, err)
	dir := t.TempDir()
	var paths []string
	for _, f := range m.Files {
		data, _, err := e.out.Get(t.Context(), f.Path)
		require.NoError(t, err)
		require.Equal(t, f.Bytes, int64(len(data)), f.Path)
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
		paths = append(paths, "'"+p+"'")
	}
	var rows, keys int
	require.NoError(t, openDuckDB(t).QueryRow(fmt.Sprintf("SELECT count(*), count(DISTINCT key) FROM read_parquet([%s])", strings.Join(paths, ","))).Scan(&rows, &keys))
	if rows != keys {
		r, err := openDuckDB(t).Query(fmt.Sprintf("SELECT key, CAST(list(filename) AS VARCHAR), CAST(list(seq) AS VARCHAR) FROM read_parquet([%s], filename=true) GROUP BY key HAVING count(*) > 1", strings.Join(paths, ",")))
		require.NoError(t, err)
		for r.Next() {
			var k, f, s string
			r.Scan(&k, &f, &s)
			t.Logf("DUP %s %s %s", k, f, s)
		}
		for _, f := range m.Files {
			t.Logf("FILE %s %d-%d %s", f.Path, f.FirstSeq, f.LastSeq, f.SHA256[:8])
		}
	}
	require.Equal(t, entries, keys, "every entry in a committed file")
	require.Equal(t, entries, rows, "no entry in two committed files")

	restored, err := archive.Restore(t.Context(), archive.RestoreConfig{Archive: e.archive.URL(), Bucket: e.archive, Out: t.TempDir()})
	require.NoError(t, err)
	require.Len(t, restored, len(e.files))
	for _, r := range restored {
		got, err := os.ReadFile(r.Out)
		require.NoError(t, err)
		session := strings.TrimSuffix(filepath.Base(r.Path), ".jsonl")
		require.Equal(t, string(e.files[r.Host+session]), string(got), r.Path)
	}
}

// TestExporter_S3TwoWritersRace: two exporters (two consumers of one
// stream) commit to the same bucket prefixes at the same time. The
// manifest's conditional write lets one win each overlapping commit;
// the loser reopens from the manifest and skips what the winner listed.
// Every entry ends in exactly one committed object.
func TestExporter_S3TwoWritersRace(t *testing.T) {
	e := newS3Env(t)
	for i := range 12 {
		e.publish(fmt.Sprintf("host-%d", i%3), fmt.Sprintf("s%d", i), 40)
	}
	e.runAll(func([]*export.Exporter) {
		for i := 12; i < 24; i++ { // more while they race
			e.publish(fmt.Sprintf("host-%d", i%3), fmt.Sprintf("s%d", i), 40)
		}
	}, e.config("one", e.out, e.archive), e.config("two", e.out, e.archive))
	e.requireExactlyOnce(24 * 40)
}

// TestExporter_S3Faults: the bucket answers 503 SlowDown and 500 to a
// third of the requests and is slow on others; the SDK retries with
// backoff, a commit that still fails is tried again at the next
// interval, nothing is acknowledged before it is stored: nothing lost,
// nothing twice.
func TestExporter_S3Faults(t *testing.T) {
	e := newS3Env(t)
	var n atomic.Int64
	endpoint := e.srv.Proxy(func(r *http.Request) int {
		switch k := n.Add(1); {
		case k%3 == 0:
			return http.StatusServiceUnavailable
		case k%7 == 0:
			return http.StatusInternalServerError
		case k%11 == 0:
			time.Sleep(200 * time.Millisecond) // slow
		}
		return 0
	})
	open := func(prefix string) *objstore.Bucket {
		cfg := e.srv.Config("test", prefix)
		cfg.Endpoint = endpoint
		b, err := objstore.Open(t.Context(), cfg)
		require.NoError(t, err)
		return b
	}
	for i := range 8 {
		e.publish(fmt.Sprintf("host-%d", i%2), fmt.Sprintf("s%d", i), 30)
	}
	e.runAll(nil, e.config("exporter", open("parquet"), open("archive")))
	require.Positive(t, n.Load())
	e.requireExactlyOnce(8 * 30)
}

// TestExporter_S3ServerRestart: the S3 server is killed while the
// exporter commits and started again later: commits fail meanwhile
// (counted, the position stays), then go on; nothing lost or twice.
func TestExporter_S3ServerRestart(t *testing.T) {
	e := newS3Env(t)
	for i := range 6 {
		e.publish("host-a", fmt.Sprintf("s%d", i), 30)
	}
	e.runAll(func(xs []*export.Exporter) {
		natstest.CheckFor(t, 30*time.Second, 5*time.Millisecond, func() error {
			if xs[0].Stats().Files == 0 {
				return fmt.Errorf("nothing committed yet")
			}
			return nil
		})
		e.srv.Kill()
		for i := 6; i < 12; i++ {
			e.publish("host-b", fmt.Sprintf("s%d", i), 30)
		}
		before := xs[0].Stats().Committed
		natstest.CheckFor(t, 60*time.Second, 10*time.Millisecond, func() error {
			if xs[0].Stats().CommitErrors == 0 {
				return fmt.Errorf("no commit failed yet")
			}
			return nil
		})
		require.Equal(t, before, xs[0].Stats().Committed, "nothing acknowledged while the bucket is down")
		e.srv.Restart()
	}, e.config("exporter", e.out, e.archive))
	e.requireExactlyOnce(12 * 30)
}

// TestRestore_S3ArchivedSegments: segments moved to an archive storage
// class (GETs refused with InvalidObjectState) stop a restore with an
// error naming each and how to thaw it; nothing is written. Restored
// (the proxy gone), the same archive restores.
func TestRestore_S3ArchivedSegments(t *testing.T) {
	e := newS3Env(t)
	for i := range 3 {
		e.publish("host-a", fmt.Sprintf("s%d", i), 10)
	}
	e.runAll(nil, e.config("exporter", e.out, e.archive))
	cfg := e.srv.Config("test", "archive")
	cfg.Endpoint = e.srv.Proxy(func(r *http.Request) int {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/seg-") {
			return http.StatusForbidden
		}
		return 0
	})
	cold, err := objstore.Open(t.Context(), cfg)
	require.NoError(t, err)
	out := t.TempDir()
	_, err = archive.Restore(t.Context(), archive.RestoreConfig{Archive: cold.URL(), Bucket: cold, Out: out})
	var ae *archive.ArchivedSegmentsError
	require.ErrorAs(t, err, &ae)
	require.NotEmpty(t, ae.Objects)
	require.ErrorContains(t, err, "s3://test/archive/format=pi/")
	require.ErrorContains(t, err, "restore-object")
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing written")
	e.requireExactlyOnce(30)
}
