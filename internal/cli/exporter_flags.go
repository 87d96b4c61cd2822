package cli

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// Exporter holds the exporter's flags.
type Exporter struct {
	Name      string
	Out       string
	Archive   string
	NoArchive bool
	PartBytes int64
	PartAge   time.Duration
	Metrics   string
	LeaseTTL  time.Duration
	// MemoryLimit is Go's soft memory limit for the process in MiB (0:
	// leave it); `sessionpipe run` shares its process and leaves it.
	MemoryLimit int64
	// ParquetMemoryBytes and ArchiveMemoryBytes bound what the Parquet
	// writer and the archive buffer (0: their packages' defaults);
	// `sessionpipe run` sets smaller ones, see [RunParquetMemoryBytes].
	ParquetMemoryBytes int64
	ArchiveMemoryBytes int64
	// ArchiveLevel is the archive's zstd level by name: fastest,
	// default (the default), better or best.
	ArchiveLevel ArchiveLevel
	// PurgeArchived purges the original lines from the stream once
	// archived (export.ExporterConfig.PurgeArchived): on in `sessionpipe
	// run`, whose stream and archive are on one disk, off in `exporter
	// serve`, whose stream a fleet shares.
	PurgeArchived bool
	// S3 configures -out and -archive-dir given as s3://bucket/prefix.
	S3 S3
	// Registry, when set, receives the exporter's metrics, served on
	// -metrics; nil: a new [NewRegistry].
	Registry *prometheus.Registry
}

// DefaultExporterMemoryLimitMiB keeps the exporter's heap near what its
// writers buffer (parquet.DefaultMemoryBytes and the archive's) plus one
// row group being encoded.
const DefaultExporterMemoryLimitMiB = 240

// The exporter's buffers inside `sessionpipe run`, whose one process also
// holds the embedded server's message blocks, the tailer and the indexer
// under one soft memory limit (DefaultRunMemoryLimitMiB): half the
// standalone exporter's, so that the live heap leaves the collector room
// (with the standalone sizes it filled the limit and the collector ran
// without pause, a fifth of run's CPU). Parquet files of about a quarter
// of RunPartBytes, merged later by compaction.
const (
	RunPartBytes          = 32 << 20
	RunParquetMemoryBytes = 32 << 20
	RunArchiveMemoryBytes = 16 << 20
)

// Register adds the exporter flags to fs.
func (x *Exporter) Register(fs *flag.FlagSet, env Env) {
	x.register(fs, env, true)
}

// RegisterIn adds the exporter flags that `sessionpipe run` takes.
func (x *Exporter) RegisterIn(fs *flag.FlagSet, env Env) {
	x.register(fs, env, false)
}

func (x *Exporter) register(fs *flag.FlagSet, env Env, daemon bool) {
	fs.StringVar(&x.Out, "out", env("SESSIONPIPE_OUT"), "Parquet output directory, or s3://bucket/prefix (env SESSIONPIPE_OUT; default <data-dir>/parquet)")
	fs.StringVar(&x.Archive, "archive-dir", env("SESSIONPIPE_ARCHIVE_DIR"), "archive of the original lines, zstd segments: a directory or s3://bucket/prefix (env SESSIONPIPE_ARCHIVE_DIR; default <data-dir>/archive)")
	if daemon { // run has one switch for the archive, the tailer's -archive
		fs.BoolVar(&x.NoArchive, "no-archive", envBool(env("SESSIONPIPE_NO_ARCHIVE"), false), "keep no archive of the original lines (env SESSIONPIPE_NO_ARCHIVE)")
	}
	x.ArchiveLevel = ArchiveLevelDefault
	fs.Var(&x.ArchiveLevel, "archive-level", "zstd level of the archive: fastest, default (zstd's own), better or best; 'better' makes an archive of transcripts 4-20% smaller for 2-4 times the archive's CPU, 'fastest' 4-6% larger for a third less")
	partBytes := int64(DefaultPartBytes)
	if !daemon {
		partBytes = RunPartBytes
		x.ParquetMemoryBytes, x.ArchiveMemoryBytes = RunParquetMemoryBytes, RunArchiveMemoryBytes
	}
	fs.BoolVar(&x.PurgeArchived, "purge-archived", envBool(env("SESSIONPIPE_PURGE_ARCHIVED"), !daemon),
		"purge the original lines from the stream once they are in committed archive segments; the entries stay (env SESSIONPIPE_PURGE_ARCHIVED; on in run, off in exporter serve)")
	fs.Int64Var(&x.PartBytes, "part-bytes", partBytes, "close a Parquet file when its buffered rows reach this many bytes (files of about a quarter of it)")
	fs.DurationVar(&x.PartAge, "part-age", DefaultPartAge, "close a Parquet file (and an archive segment) this long after its first entry: the most a quiet fleet's entries wait")
	x.S3.Register(fs, env)
	if !daemon {
		return
	}
	fs.StringVar(&x.Name, "consumer", orDefault(env("SESSIONPIPE_EXPORTER_CONSUMER"), DefaultExporterConsumer), "durable consumer name (env SESSIONPIPE_EXPORTER_CONSUMER); exporters of one name run one at a time, the others stand by")
	fs.StringVar(&x.Metrics, "metrics", orDefault(env("SESSIONPIPE_EXPORTER_METRICS"), "127.0.0.1:0"), "address of /metrics and /healthz (env SESSIONPIPE_EXPORTER_METRICS; port 0: any free port; empty: none)")
	fs.DurationVar(&x.LeaseTTL, "lease-ttl", bus.DefaultLeaseTTL, "an exporter of the same -consumer standing by takes over at most this long after the active one died")
	RegisterMemoryLimit(fs, &x.MemoryLimit, DefaultExporterMemoryLimitMiB, env, "")
}

// Dirs returns the Parquet and archive directories ("" for no archive),
// defaults applied under dataDir.
func (x *Exporter) Dirs(dataDir string) (out, archive string) {
	out = x.Out
	if out == "" {
		out = filepath.Join(dataDir, "parquet")
	}
	if x.NoArchive {
		return out, ""
	}
	archive = x.Archive
	if archive == "" {
		archive = filepath.Join(dataDir, "archive")
	}
	return out, archive
}

// ArchiveLevel is a zstd level of the archive by name (a flag.Value).
type ArchiveLevel string

// The archive's levels, as klauspost/compress/zstd names them (about
// zstd's levels 1, 3, 7 and 11).
const (
	ArchiveLevelFastest ArchiveLevel = "fastest"
	ArchiveLevelDefault ArchiveLevel = "default"
	ArchiveLevelBetter  ArchiveLevel = "better"
	ArchiveLevelBest    ArchiveLevel = "best"
)

func (l *ArchiveLevel) String() string { return string(*l) }

// Set accepts one of the four names.
func (l *ArchiveLevel) Set(s string) error {
	switch v := ArchiveLevel(strings.ToLower(strings.TrimSpace(s))); v {
	case ArchiveLevelFastest, ArchiveLevelDefault, ArchiveLevelBetter, ArchiveLevelBest:
		*l = v
		return nil
	}
	return fmt.Errorf("%q is not a level: fastest, default, better or best", s)
}
