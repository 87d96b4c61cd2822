package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/s3test"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/duckdb"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// sessionsOf runs a views script and returns the sessions view, one
// line per session, every column.
func sessionsOf(t *testing.T, script string) []string {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(script)
	require.NoError(t, err)
	rows, err := db.Query("SELECT * EXCLUDE (host) FROM sessions ORDER BY session_id, format")
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		out = append(out, fmt.Sprint(vals...))
	}
	require.NoError(t, rows.Err())
	return out
}

// TestS3_SameAsLocalDirectory: every sample exported to a bucket of a real
// S3-compatible server gives what the local-directory mode gives: the
// same Parquet rows, the same numbers in the DuckDB views (the script
// `sessionpipe duckdb s3://...` prints, run over the downloaded objects:
// DuckDB's httpfs cannot be installed offline), every file restored from
// the bucket byte-identical to the original and to the local restore (and
// only the session's files with -session). Compaction in a bucket is
// tested in cmd/exporter (TestExporter_S3KilledAtRandomPoints).
func TestS3_SameAsLocalDirectory(t *testing.T) {
	srv := s3test.Start(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	s3flags := []string{"-s3-endpoint", srv.Endpoint, "-s3-path-style"}
	src := t.TempDir()
	files := copyTree(t, corpus, src)
	originals := map[string][]byte{}
	for _, f := range files {
		if strings.HasSuffix(f, ".jsonl") {
			data, err := os.ReadFile(filepath.Join(src, f))
			require.NoError(t, err)
			originals[f] = data
		}
	}
	require.NotEmpty(t, originals)

	var stdout, stderr bytes.Buffer
	local := filepath.Join(t.TempDir(), "pq")
	// Small parts: the larger partitions get several files, for the
	// compaction below to merge (how many a backfill's commits cut
	// otherwise depends on timing).
	const partBytes = "65536"
	require.Equal(t, exitOK, run(t.Context(), []string{"export", "-q", "-out", local, "-part-bytes", partBytes, "-host", "laptop", "-content", "full", src}, &stdout, &stderr), stderr.String())
	args := append([]string{"export", "-q", "-out", "s3://test/pq", "-archive-dir", "s3://test/arc", "-part-bytes", partBytes, "-host", "laptop", "-content", "full"}, s3flags...)
	require.Equal(t, exitOK, run(t.Context(), append(args, src), &stdout, &stderr), stderr.String())

	// The same rows in each partition.
	requireSameRows(t, local, srv)

	// The views: the bucket's script, pointed at the downloaded objects.
	stdout.Reset()
	require.Equal(t, exitOK, run(t.Context(), append([]string{"duckdb"}, append(s3flags, "s3://test/pq")...), &stdout, &stderr), stderr.String())
	script := stdout.String()
	require.Contains(t, script, "LOAD httpfs;")
	require.Contains(t, script, "PROVIDER credential_chain")
	require.Contains(t, script, "ENDPOINT '"+strings.TrimPrefix(srv.Endpoint, "http://")+"'")
	require.Contains(t, script, "URL_STYLE 'path'")
	require.Contains(t, script, "'s3://test/pq/_manifest.jsonl'")
	dir := t.TempDir()
	b := srv.Bucket("pq")
	for o, err := range b.List(t.Context(), "") {
		require.NoError(t, err)
		data, _, err := b.Get(t.Context(), o.Key)
		require.NoError(t, err)
		p := filepath.Join(dir, filepath.FromSlash(o.Key))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	start := strings.Index(script, "-- The bucket:")
	end := strings.Index(script, ");\n\n") + len(");\n\n")
	require.True(t, start >= 0 && end > start)
	offline := strings.ReplaceAll(script[:start]+script[end:], "s3://test/pq", dir)
	want := sessionsOf(t, duckdb.DuckDBScript(duckdb.ViewConfig{Dir: local}))
	require.NotEmpty(t, want)
	require.Equal(t, want, sessionsOf(t, offline))

	// Compaction of every day, in the directory and in the bucket: the
	// same rows, the same numbers.
	cc := parquet.CompactConfig{ClosedBefore: time.Now().AddDate(0, 0, 2), MinFiles: 2}
	cc.Dir = local
	lst, err := parquet.Compact(t.Context(), cc)
	require.NoError(t, err)
	bst, err := parquet.CompactBucket(t.Context(), parquet.BucketCompactConfig{CompactConfig: parquet.CompactConfig{ClosedBefore: cc.ClosedBefore, MinFiles: 2}, Bucket: b, SpoolDir: t.TempDir()})
	require.NoError(t, err)
	require.Positive(t, lst.FilesIn+bst.FilesIn, "something merged")
	requireSameRows(t, local, srv)
	stdout.Reset()
	require.Equal(t, exitOK, run(t.Context(), append([]string{"duckdb"}, append(s3flags, "s3://test/pq")...), &stdout, &stderr), stderr.String())
	script = stdout.String()
	dir = dirOf(t, srv, "pq")
	offline = strings.ReplaceAll(script[:start]+script[end:], "s3://test/pq", dir)
	require.Equal(t, want, sessionsOf(t, duckdb.DuckDBScript(duckdb.ViewConfig{Dir: local})), "compaction changes no number")
	require.Equal(t, want, sessionsOf(t, offline))

	// Restore from the bucket: every file, byte for byte.
	restored := t.TempDir()
	stdout.Reset()
	require.Equal(t, exitOK, run(t.Context(), append([]string{"restore", "-archive", "s3://test/arc", "-out", restored}, s3flags...), &stdout, &stderr), stderr.String())
	for f, data := range originals {
		got, err := os.ReadFile(filepath.Join(restored, "laptop", src, f))
		require.NoError(t, err, f)
		require.Equal(t, string(data), string(got), f)
	}
	// ... and from the local archive, the same.
	restoredLocal := t.TempDir()
	require.Equal(t, exitOK, run(t.Context(), []string{"restore", "-archive", local + "-archive", "-out", restoredLocal}, &stdout, &stderr), stderr.String())
	for f := range originals {
		a, err := os.ReadFile(filepath.Join(restoredLocal, "laptop", src, f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(restored, "laptop", src, f))
		require.NoError(t, err)
		require.Equal(t, a, b, f)
	}

	// One session: only its files, reading only their frames.
	segs, err := archive.ReadBucketArchiveManifest(t.Context(), srv.Bucket("arc"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	idx, err := archive.ReadSegmentIndex(filepath.Join(dirOf(t, srv, "arc"), filepath.FromSlash(segs[0].Path)))
	require.NoError(t, err)
	session := idx[0].Sessions[0]
	one := t.TempDir()
	stdout.Reset()
	require.Equal(t, exitOK, run(t.Context(), append([]string{"restore", "-archive", "s3://test/arc", "-out", one, "-session", session}, s3flags...), &stdout, &stderr), stderr.String())
	require.NotEmpty(t, stdout.String())
	require.Less(t, strings.Count(stdout.String(), "\n"), len(originals), "only the session's files")
}

// dirOf downloads an archive prefix and returns the directory.
func dirOf(t *testing.T, srv *s3test.Server, prefix string) string {
	t.Helper()
	dir := t.TempDir()
	b := srv.Bucket(prefix)
	for o, err := range b.List(t.Context(), "") {
		require.NoError(t, err)
		data, _, err := b.Get(t.Context(), o.Key)
		require.NoError(t, err)
		p := filepath.Join(dir, filepath.FromSlash(o.Key))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	return dir
}

// requireSameRows requires the Parquet files the directory's manifest
// lists and those s3://test/pq's manifest lists to hold the same rows per
// partition (count, keys, and a digest of the counted columns: two
// exports of the same files through the tailer number and cut them
// differently, so seq, file names and bytes differ;
// TestWriter_BucketSameBytes compares bytes for the same stream).
func requireSameRows(t *testing.T, local string, srv *s3test.Server) {
	t.Helper()
	lm, err := parquet.ReadManifest(local)
	require.NoError(t, err)
	bm, err := parquet.ReadBucketManifest(t.Context(), srv.Bucket("pq"))
	require.NoError(t, err)
	bdir := dirOf(t, srv, "pq")
	digest := func(root string, files []parquet.File) []string {
		var paths []string
		for _, f := range files {
			paths = append(paths, "'"+filepath.Join(root, filepath.FromSlash(f.Path))+"'")
		}
		db, err := sql.Open("duckdb", "")
		require.NoError(t, err)
		defer db.Close()
		rows, err := db.Query(fmt.Sprintf(`SELECT t.format, coalesce(CAST(t.date AS VARCHAR), 'NULL'), t.host, count(*), count(DISTINCT t.key),
			CAST(bit_xor(hash(to_json(t))) AS VARCHAR)
			FROM (SELECT format, date, host, key, path, line, object, session_id, ts, kind, role, model, usage, cost_usd, text
			      FROM read_parquet([%s], hive_partitioning = true)) t
			GROUP BY ALL ORDER BY ALL`, strings.Join(paths, ",")))
		require.NoError(t, err)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var f, d, h string
			var n, k int64
			var x string
			require.NoError(t, rows.Scan(&f, &d, &h, &n, &k, &x))
			out = append(out, fmt.Sprint(f, d, h, n, k, x))
		}
		require.NoError(t, rows.Err())
		return out
	}
	want := digest(local, lm.Files)
	require.NotEmpty(t, want)
	require.Equal(t, want, digest(bdir, bm.Files))
}

// `sessionpipe run -out s3://... -archive-dir s3://...` keeps the Parquet
// and the archive in the bucket: every sample's entries committed there,
// every file restored from it.
func TestRun_OnceToBucket(t *testing.T) {
	srv := s3test.Start(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	src := filepath.Join(corpus, "pi")
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"run", "-once", "-json", "-data-dir", t.TempDir(), "-nats-port", "-1", "-http", "", "-metrics", "",
		"-content", "full", "-host", "laptop", "-out", "s3://test/run-pq", "-archive-dir", "s3://test/run-arc",
		"-s3-endpoint", srv.Endpoint, "-s3-path-style", src}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	m, err := parquet.ReadBucketManifest(t.Context(), srv.Bucket("run-pq"))
	require.NoError(t, err)
	require.NotEmpty(t, m.Files)
	restored := t.TempDir()
	files, err := archive.Restore(t.Context(), archive.RestoreConfig{Archive: "s3://test/run-arc", Bucket: srv.Bucket("run-arc"), Out: restored})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		want, err := os.ReadFile(f.Path)
		require.NoError(t, err)
		got, err := os.ReadFile(f.Out)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), f.Path)
	}
}
