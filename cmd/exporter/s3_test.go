package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// s3Args are the flags that point a command at the test server.
func s3Args(srv *s3test.Server) []string {
	return []string{"-s3-endpoint", srv.Endpoint, "-s3-path-style", "-s3-region", "us-east-1"}
}

// requireExactlyOnceBucket checks an output and an archive in a bucket:
// every listed object present with the manifest's size and checksum,
// each entry in exactly one row of the listed files, every file restored
// from the archive (read from the bucket) as published. It returns the
// unlisted objects (leftovers) of both prefixes.
func requireExactlyOnceBucket(t *testing.T, out, arch *objstore.Bucket, want published) (leftovers []string) {
	t.Helper()
	ctx := t.Context()
	m, err := parquet.ReadBucketManifest(ctx, out)
	require.NoError(t, err)
	dir := t.TempDir()
	var files []string
	listed := map[string]bool{}
	for _, f := range m.Files {
		listed[f.Path] = true
		data, _, err := out.Get(ctx, f.Path)
		require.NoError(t, err, f.Path)
		require.Equal(t, f.Bytes, int64(len(data)), "committed object %s whole", f.Path)
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
		files = append(files, "'"+p+"'")
	}
	segs, err := archive.ReadBucketArchiveManifest(ctx, arch)
	require.NoError(t, err)
	for _, s := range segs {
		listed[s.Path] = true
	}
	for _, b := range []*objstore.Bucket{out, arch} {
		for o, err := range b.List(ctx, "format=") {
			require.NoError(t, err)
			if !listed[o.Key] {
				leftovers = append(leftovers, b.ObjectURL(o.Key))
			}
		}
	}
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	var rows, keys int
	require.NoError(t, db.QueryRow(fmt.Sprintf(
		"SELECT count(*), count(DISTINCT key) FROM read_parquet([%s], union_by_name=true)", strings.Join(files, ","))).Scan(&rows, &keys))
	require.Equal(t, len(want.keys), keys, "every entry exported")
	require.Equal(t, len(want.keys), rows, "no entry exported twice")

	restored, err := archive.Restore(ctx, archive.RestoreConfig{Archive: arch.URL(), Bucket: arch, Out: t.TempDir()})
	require.NoError(t, err)
	require.Len(t, restored, len(want.files))
	for _, r := range restored {
		got, err := os.ReadFile(r.Out)
		require.NoError(t, err)
		require.Equal(t, string(want.files[r.Host+r.Path]), string(got), r.Path)
	}
	return leftovers
}

// TestExporter_S3KilledAtRandomPoints is TestExporter_KilledAtRandomPoints
// with the Parquet output and the archive in a bucket of a real
// S3-compatible server: SIGKILL at random points (during uploads, between
// an upload and the manifest's conditional write, before the position is
// saved), 10 times (SESSIONPIPE_KILL_ROUNDS more), then a run to the
// end: every entry in exactly one committed object, every file restored
// byte for byte; `exporter compact` then removes what the kills left.
func TestExporter_S3KilledAtRandomPoints(t *testing.T) {
	rounds := 10
	if v := os.Getenv("SESSIONPIPE_KILL_ROUNDS"); v != "" {
		var err error
		rounds, err = strconv.Atoi(v)
		require.NoError(t, err, "SESSIONPIPE_KILL_ROUNDS")
	}
	s3srv := s3test.Start(t)
	bin := buildExporter(t)
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	want := publishFleet(t, js, 4000)

	data := t.TempDir()
	args := append([]string{"serve", "-data-dir", data, "-out", "s3://test/parquet", "-archive-dir", "s3://test/archive", "-metrics", "",
		"-part-bytes", "200000", "-part-age", "300ms", "-lease-ttl", "1s", "-log-level", "warn"}, s3Args(s3srv)...)
	env := append(append(os.Environ(), "NATS_URL="+srv.URL()), s3srv.Env()...)
	start := func() (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, &stderr
	}
	out, arch := s3srv.Bucket("parquet"), s3srv.Bucket("archive")
	rng := rand.New(rand.NewPCG(5, 11))
	for kill := range rounds {
		cmd, stderr := start()
		publishFiles(t, js, want, 1000+kill*100, 4000)
		time.Sleep(time.Duration(300+rng.IntN(1500)) * time.Millisecond) // a random point to kill at
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		cmd.Wait()
		require.NotContains(t, stderr.String(), "panic", "run %d", kill)
		m, err := parquet.ReadBucketManifest(t.Context(), out)
		require.NoError(t, err, "run %d: %s", kill, stderr.String())
		state, _, _ := out.Get(t.Context(), export.StateName)
		t.Logf("killed run %d: %d files committed, position %s", kill, len(m.Files), bytes.TrimSpace(state))
	}

	cmd, stderr := start()
	s, err := js.Stream(t.Context(), bus.DefaultStream)
	require.NoError(t, err)
	info, err := s.Info(t.Context())
	require.NoError(t, err)
	natstest.CheckFor(t, 90*time.Second, 50*time.Millisecond, func() error {
		b, _, err := out.Get(context.Background(), export.StateName)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), fmt.Sprintf(`"committed":%d}`, info.State.LastSeq)) {
			return fmt.Errorf("position %s, want %d", b, info.State.LastSeq)
		}
		return nil
	})
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), stderr.String())
	leftovers := requireExactlyOnceBucket(t, out, arch, want)
	t.Logf("%d leftovers of the kills: %v", len(leftovers), leftovers)

	// compact removes them (and any multipart upload a kill interrupted),
	// and merges the small files of the closed days: still exactly once.
	var so, se bytes.Buffer
	cargs := append([]string{"-out", "s3://test/parquet", "-archive-dir", "s3://test/archive", "-leftover-age", "1ns", "-min-age", "1h"}, s3Args(s3srv)...)
	for _, kv := range s3srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	require.NoError(t, compact(t.Context(), cargs, os.Getenv, &so, &se), se.String())
	require.Contains(t, se.String(), "merged")
	require.Empty(t, requireExactlyOnceBucket(t, out, arch, want), "leftovers after compact")
	m, err := parquet.ReadBucketManifest(t.Context(), out)
	require.NoError(t, err)
	merged := 0
	for _, f := range m.Files {
		if strings.Contains(f.Path, "-c1.parquet") {
			merged++
		}
	}
	require.Positive(t, merged, "closed partitions merged")
	ups, err := out.Uploads(t.Context())
	require.NoError(t, err)
	require.Empty(t, ups)
}
