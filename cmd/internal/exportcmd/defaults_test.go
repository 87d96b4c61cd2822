package exportcmd

import (
	"flag"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/export"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// The exporter's flag defaults, written in internal/cli so that the
// tailer knows every command's flags without linking parquet-go, are the
// exporter's own.
func TestFlagDefaults(t *testing.T) {
	require.Equal(t, export.DefaultConsumerName, cli.DefaultExporterConsumer)
	require.EqualValues(t, parquet.DefaultPartBytes, cli.DefaultPartBytes)
	require.Equal(t, parquet.DefaultPartAge, cli.DefaultPartAge)
	require.Equal(t, parquet.DefaultCompactMinAge, cli.DefaultCompactMinAge)
	require.EqualValues(t, parquet.DefaultCompactTargetBytes, cli.DefaultCompactTargetBytes)
	require.EqualValues(t, parquet.DefaultCompactMinFiles, cli.DefaultCompactMinFiles)
	require.EqualValues(t, parquet.DefaultCompactMemoryBytes, cli.DefaultCompactMemoryBytes)
	require.Equal(t, parquet.DefaultCompactLockTimeout, cli.DefaultCompactLockTimeout)
	require.Equal(t, parquet.DefaultLeftoverAge, cli.DefaultLeftoverAge)
}

// `sessionpipe run` shares one process and one soft memory limit between
// the embedded server, the tailer, the indexer and the exporter: its
// exporter buffers less than the standalone one (half), so that the live
// heap leaves the collector room under the limit; the standalone exporter
// keeps the writers' own defaults.
func TestBuffers(t *testing.T) {
	parse := func(register func(*cli.Exporter, *flag.FlagSet)) (parquet.Config, archive.ArchiveConfig) {
		var x cli.Exporter
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		register(&x, fs)
		require.NoError(t, fs.Parse(nil))
		pc := parquet.Config{PartBytes: x.PartBytes}
		var ac archive.ArchiveConfig
		buffers(&x, &pc, &ac)
		return pc, ac
	}
	env := func(string) string { return "" }

	pc, ac := parse(func(x *cli.Exporter, fs *flag.FlagSet) { x.Register(fs, env) })
	require.Equal(t, parquet.Config{PartBytes: parquet.DefaultPartBytes}, pc, "exporter serve: the writer's defaults")
	require.Equal(t, archive.ArchiveConfig{}, ac)

	pc, ac = parse(func(x *cli.Exporter, fs *flag.FlagSet) { x.RegisterIn(fs, env) })
	require.EqualValues(t, cli.RunPartBytes, pc.PartBytes, "run")
	require.EqualValues(t, cli.RunParquetMemoryBytes, pc.MemoryBytes)
	require.Less(t, pc.MemoryBytes, int64(parquet.DefaultMemoryBytes))
	require.EqualValues(t, cli.RunArchiveMemoryBytes, ac.MemoryBytes)
	require.Less(t, ac.MemoryBytes, int64(archive.DefaultArchiveMemoryBytes))
	require.LessOrEqual(t, ac.SegmentBytes, ac.MemoryBytes, "a segment fits the budget")

	// Whatever -part-bytes says, the rows' budget holds a part: the
	// writer refuses a budget below its part size.
	for _, part := range []int64{0, 1, cli.RunPartBytes, 1 << 30} {
		x := cli.Exporter{PartBytes: part, ParquetMemoryBytes: cli.RunParquetMemoryBytes}
		pc := parquet.Config{Dir: t.TempDir(), PartBytes: x.PartBytes}
		buffers(&x, &pc, &archive.ArchiveConfig{})
		w, err := parquet.NewWriter(pc)
		require.NoError(t, err, "-part-bytes %d", part)
		require.NoError(t, w.Close(t.Context()))
	}

	var r cli.Run
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	r.Register(fs, env)
	require.NoError(t, fs.Parse(nil))
	require.EqualValues(t, cli.DefaultRunMemoryLimitMiB, r.Indexer.MemoryLimit, "run's one limit for the whole process")
	require.Greater(t, r.Indexer.MemoryLimit<<20, int64(cli.RunParquetMemoryBytes+cli.RunArchiveMemoryBytes)*4)
	require.True(t, r.LiveFirst, "run's exporter waits while the tailer reads a backlog, by default")
	require.NoError(t, fs.Parse([]string{"-live-first=false"}))
	require.False(t, r.LiveFirst)
}

// -archive-level's names are klauspost's, and its default is the archive's.
func TestArchiveLevel(t *testing.T) {
	for name, want := range map[cli.ArchiveLevel]zstd.EncoderLevel{
		cli.ArchiveLevelFastest: zstd.SpeedFastest, cli.ArchiveLevelDefault: zstd.SpeedDefault,
		cli.ArchiveLevelBetter: zstd.SpeedBetterCompression, cli.ArchiveLevelBest: zstd.SpeedBestCompression, "": 0,
	} {
		got, err := ArchiveLevel(name)
		require.NoError(t, err)
		require.Equal(t, want, got, name)
	}
	_, err := ArchiveLevel("7")
	require.ErrorContains(t, err, "not a level")

	var x cli.Exporter
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	x.Register(fs, func(string) string { return "" })
	require.NoError(t, fs.Parse(nil))
	level, err := ArchiveLevel(x.ArchiveLevel)
	require.NoError(t, err)
	require.Equal(t, zstd.SpeedDefault, level, "the flag's default is the archive's (archive.ArchiveConfig.Level)")
	require.Error(t, fs.Parse([]string{"-archive-level", "fast"}))
}
