package parquet_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/s3test"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// downloadTree copies every object below b's prefix into a new local
// directory, keys as paths, for DuckDB and byte comparisons.
func downloadTree(tb testing.TB, b *objstore.Bucket) string {
	tb.Helper()
	dir := tb.TempDir()
	for o, err := range b.List(tb.Context(), "") {
		require.NoError(tb, err)
		data, _, err := b.Get(tb.Context(), o.Key)
		require.NoError(tb, err)
		p := filepath.Join(dir, filepath.FromSlash(o.Key))
		require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(tb, os.WriteFile(p, data, 0o644))
	}
	return dir
}

// TestWriter_BucketSameBytes: the same entries with the same sequences
// give, in a bucket, the files a local directory gets, byte for byte,
// and the same manifest records.
func TestWriter_BucketSameBytes(t *testing.T) {
	srv := s3test.Start(t)
	entries := corpusEntries(t)
	require.NotEmpty(t, entries)

	local := t.TempDir()
	writeAll(t, mustWriter(t, parquet.Config{Dir: local, PartBytes: 1 << 20}), entries)

	b := srv.Bucket("parquet")
	writeAll(t, mustWriter(t, parquet.Config{Dir: b.URL(), Bucket: b, PartBytes: 1 << 20, SpoolDir: t.TempDir()}), entries)

	lm, err := parquet.ReadManifest(local)
	require.NoError(t, err)
	rm, err := parquet.ReadBucketManifest(t.Context(), b)
	require.NoError(t, err)
	require.Equal(t, len(lm.Files), len(rm.Files))
	require.Greater(t, len(lm.Files), 3)
	for i := range lm.Files {
		l, r := lm.Files[i], rm.Files[i]
		l.Committed, r.Committed = time.Time{}, time.Time{}
		require.Equal(t, l, r)
		want, err := os.ReadFile(filepath.Join(local, filepath.FromSlash(l.Path)))
		require.NoError(t, err)
		got, _, err := b.Get(t.Context(), r.Path)
		require.NoError(t, err)
		require.Equal(t, want, got, r.Path)
	}

	// DuckDB reads the same rows from the downloaded objects.
	db := openDuckDB(t)
	require.Equal(t, readBack(t, db, local), readBack(t, db, downloadTree(t, b)))

	// A second writer opens on the committed manifest and skips what it
	// holds: nothing new is written.
	w := mustWriter(t, parquet.Config{Dir: b.URL(), Bucket: b, SpoolDir: t.TempDir()})
	for i := range entries {
		require.NoError(t, w.Write(t.Context(), &entries[i], uint64(i+1)))
	}
	require.NoError(t, w.Close(context.Background()))
	require.Equal(t, int64(len(entries)), w.Stats().Skipped)
	again, err := parquet.ReadBucketManifest(t.Context(), b)
	require.NoError(t, err)
	require.Equal(t, rm.Files, again.Files)
}

// A manifest write that succeeded but whose answer was lost (a 500 after
// the server stored it; the SDK's retry then loses its If-Match) is read
// back and found listed: the commit succeeds, each file listed once.
func TestWriter_BucketLostAnswer(t *testing.T) {
	srv := s3test.Start(t)
	var lost atomic.Int64
	cfg := srv.Config("test", "parquet")
	cfg.Endpoint = srv.Proxy(func(r *http.Request) int {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+parquet.ManifestName) && r.Header.Get("If-Match") != "" && lost.Add(1) <= 3 {
			return -http.StatusInternalServerError
		}
		return 0
	})
	b, err := objstore.Open(t.Context(), cfg)
	require.NoError(t, err)
	entries := corpusEntries(t)
	w := mustWriter(t, parquet.Config{Dir: b.URL(), Bucket: b, PartBytes: 1 << 20, SpoolDir: t.TempDir()})
	writeAll(t, w, entries)
	require.Positive(t, lost.Load())
	m, err := parquet.ReadBucketManifest(t.Context(), b)
	require.NoError(t, err)
	seen := map[string]bool{}
	var rows int64
	for _, f := range m.Files {
		require.False(t, seen[f.Path], "listed twice: %s", f.Path)
		seen[f.Path] = true
		rows += f.Rows
	}
	require.Equal(t, int64(len(entries)), rows)
}

// CompactBucket removes an unlisted object at once when the manifest shows
// it can never be listed (a writer's part reaching no further than a
// listed file of its partition), and any other one (a live writer's
// upload, maybe; a merged file) only once it is older than LeftoverAge.
func TestCompactBucket_Leftovers(t *testing.T) {
	srv := s3test.Start(t)
	b := srv.Bucket("parquet")
	entries := corpusEntries(t)
	writeAll(t, mustWriter(t, parquet.Config{Dir: b.URL(), Bucket: b, SpoolDir: t.TempDir()}), entries)
	m, err := parquet.ReadBucketManifest(t.Context(), b)
	require.NoError(t, err)
	f := m.Files[len(m.Files)-1]
	dir := f.Partition.Dir()
	covered := fmt.Sprintf("%s/part-%d-%d.parquet", dir, f.FirstSeq, f.LastSeq-1)
	young := fmt.Sprintf("%s/part-%d-%d.parquet", dir, f.LastSeq+1, f.LastSeq+5)
	merged := fmt.Sprintf("%s/part-%d-%d-c1.parquet", dir, f.FirstSeq, f.LastSeq)
	for _, k := range []string{covered, young, merged} {
		_, err := b.Put(t.Context(), k, []byte("leftover"), objstore.Cond{})
		require.NoError(t, err)
	}
	exists := func(k string) bool {
		_, _, err := b.Get(t.Context(), k)
		return err == nil
	}
	st, err := parquet.CompactBucket(t.Context(), parquet.BucketCompactConfig{Bucket: b, CompactConfig: parquet.CompactConfig{MinAge: 1000000 * time.Hour}})
	require.NoError(t, err)
	require.Equal(t, int64(1), st.Removed)
	require.False(t, exists(covered), "can never be listed: removed")
	require.True(t, exists(young), "maybe a live writer's: kept")
	require.True(t, exists(merged), "a merged file: kept")

	st, err = parquet.CompactBucket(t.Context(), parquet.BucketCompactConfig{Bucket: b, LeftoverAge: time.Nanosecond, CompactConfig: parquet.CompactConfig{MinAge: 1000000 * time.Hour}})
	require.NoError(t, err)
	require.Equal(t, int64(2), st.Removed)
	require.False(t, exists(young))
	require.False(t, exists(merged))
	again, err := parquet.ReadBucketManifest(t.Context(), b)
	require.NoError(t, err)
	require.Equal(t, m.Files, again.Files, "nothing listed touched")
	for _, f := range again.Files {
		require.True(t, exists(f.Path), f.Path)
	}
}
