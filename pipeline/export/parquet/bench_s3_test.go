package parquet_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/s3test"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// BenchmarkWriter_Destination writes the generated 32 MB corpus of
// BenchmarkWriter to a local directory and to a bucket of a versitygw
// server on 127.0.0.1 (serving a directory of the same disk), at the
// default settings and with 1 MiB parts (many files: the per-file cost of
// an upload and a manifest write), side by side. It reports the requests
// sent per GB of Parquet written.
//
//	go test ./pipeline/export -run '^$' -bench Writer_Destination -benchtime 3x
func BenchmarkWriter_Destination(b *testing.B) {
	srv := s3test.Start(b)
	entries := generatedEntries(b, 32<<20)
	var size int64
	for i := range entries {
		entries[i].Raw = nil
		size += int64(len(entries[i].AppendJSON(nil)) + 1)
	}
	for _, partBytes := range []int64{0, 1 << 20} {
		for _, dest := range []string{"dir", "s3"} {
			b.Run(fmt.Sprintf("partBytes=%d/dest=%s", partBytes, dest), func(b *testing.B) {
				b.SetBytes(size)
				var out int64
				var reqs int64
				n := 0
				for b.Loop() {
					n++
					cfg := parquet.Config{PartBytes: partBytes}
					var bucket *objstore.Bucket
					if dest == "dir" {
						dir, err := os.MkdirTemp(b.TempDir(), "out")
						require.NoError(b, err)
						cfg.Dir = dir
					} else {
						bucket = srv.Bucket(fmt.Sprintf("bench-%d-%d-%d", partBytes, n, time.Now().UnixNano()))
						cfg.Dir, cfg.Bucket, cfg.SpoolDir = bucket.URL(), bucket, b.TempDir()
					}
					w, err := parquet.NewWriter(cfg)
					require.NoError(b, err)
					writeEntries(b, w, entries)
					out = w.Stats().Bytes
					if bucket != nil {
						for _, v := range bucket.Requests() {
							reqs += v
						}
					}
				}
				b.ReportMetric(float64(len(entries))*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
				if reqs > 0 {
					b.ReportMetric(float64(reqs)/float64(b.N)/(float64(out)/1e9), "requests/GB")
				}
				b.ReportMetric(float64(out)/1e6, "MB-out")
			})
		}
	}
}
