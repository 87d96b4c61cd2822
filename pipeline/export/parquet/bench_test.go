package parquet_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// cpuTime returns the process's user+system CPU time: fsync waits, which
// dominate wall time on a busy disk, are not in it.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWriter writes decoded entries of a generated 32 MB corpus
// (Claude Code, pi, Codex; text kept, raw not) to Parquet and commits
// every file: Parquet encoding, sorting, zstd, fsync and the manifest.
// Bytes are those of the entries' canonical JSON, so MB/s compares with
// the decoder's figures; MB/cpu-s counts the process's CPU time (the
// background garbage collector included, fsync waits not).
func BenchmarkWriter(b *testing.B) {
	entries := generatedEntries(b, 32<<20)
	for i := range entries {
		entries[i].Raw = nil
	}
	var size int64
	for i := range entries {
		size += int64(len(entries[i].AppendJSON(nil)) + 1)
	}
	for _, level := range []zstd.Level{zstd.SpeedFastest, zstd.SpeedDefault} {
		b.Run(fmt.Sprintf("zstd=%s", level), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(size)
			var out int64
			cpu0 := cpuTime(b)
			for b.Loop() {
				dir, err := os.MkdirTemp(b.TempDir(), "out")
				require.NoError(b, err)
				w, err := parquet.NewWriter(parquet.Config{Dir: dir, CompressionLevel: level})
				require.NoError(b, err)
				writeEntries(b, w, entries)
				out = w.Stats().Bytes
			}
			cpu := (cpuTime(b) - cpu0).Seconds()
			b.ReportMetric(float64(len(entries))*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu, "MB/cpu-s")
			b.ReportMetric(float64(out)/float64(size), "out/in")
		})
	}
}

func writeEntries(b *testing.B, w *parquet.Writer, entries []schema.Entry) {
	ctx := b.Context()
	for i := range entries {
		require.NoError(b, w.Write(ctx, &entries[i], uint64(i+1)))
	}
	require.NoError(b, w.Close(ctx))
}

// BenchmarkWriter_SmallFiles writes the entries of a generated 8 MB corpus
// spread over 500 days and flushes every 2,000 entries: what a backfill
// of months of history does under a short -part-age (many small day
// files, each its own Parquet writer), where the cost per file dominates.
func BenchmarkWriter_SmallFiles(b *testing.B) {
	entries := generatedEntries(b, 8<<20)
	day0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var size int64
	for i := range entries {
		entries[i].Raw = nil
		entries[i].TS = day0.AddDate(0, 0, i%500).Add(time.Duration(i) * time.Millisecond)
		size += int64(len(entries[i].AppendJSON(nil)) + 1)
	}
	b.ReportAllocs()
	b.SetBytes(size)
	var files int64
	cpu0 := cpuTime(b)
	for b.Loop() {
		dir, err := os.MkdirTemp(b.TempDir(), "out")
		require.NoError(b, err)
		w, err := parquet.NewWriter(parquet.Config{Dir: dir})
		require.NoError(b, err)
		ctx := b.Context()
		for i := range entries {
			require.NoError(b, w.Write(ctx, &entries[i], uint64(i+1)))
			if i%2000 == 1999 {
				require.NoError(b, w.Flush(ctx))
			}
		}
		require.NoError(b, w.Close(ctx))
		files = w.Stats().Files
	}
	cpu := (cpuTime(b) - cpu0).Seconds()
	b.ReportMetric(float64(files), "files")
	b.ReportMetric(float64(files)*float64(b.N)/cpu, "files/cpu-s")
	b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu, "MB/cpu-s")
}
