package parquet

import (
	"log/slog"
	"time"

	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
)

// Defaults of a [Config]'s zero fields.
const (
	// DefaultPartBytes closes a part when its buffered rows reach 64 MiB:
	// with the usual ratio of transcript entries (text, tool input and
	// results) a file of about 8 to 20 MB. compact merges the files of a
	// closed partition into larger ones.
	DefaultPartBytes = 64 << 20

	// DefaultPartAge closes a part five minutes after its first entry
	// arrived, so that a quiet fleet's entries reach Parquet (and are
	// acknowledged) within minutes.
	DefaultPartAge = commit.DefaultPartAge

	// DefaultMemoryBytes bounds the rows buffered in all open parts
	// together: past it, the largest part is closed early.
	DefaultMemoryBytes = 96 << 20

	// DefaultRowGroupRows is the number of rows in a row group, DuckDB's
	// own order of magnitude (122,880).
	DefaultRowGroupRows = 100_000

	// DefaultPageBytes is the size of a data page before compression.
	DefaultPageBytes = 1 << 20

	// DefaultWriterVersion is written in the files' metadata when
	// Config.WriterVersion is empty.
	DefaultWriterVersion = "sessionpipe"
)

// DefaultCompressionLevel is the zstd level of a Config whose
// CompressionLevel is zero: klauspost's fastest, about zstd level 1. The
// writer is on the live path (its pages' compression at the default level
// was an eighth of `sessionpipe export -no-archive`'s CPU); its files come
// out about 15% larger than at the default level, still a quarter of DuckDB's own
// zstd Parquet of the same transcripts, and compaction, off the live
// path, writes the merged files at DefaultCompactCompressionLevel.
const DefaultCompressionLevel = zstd.SpeedFastest

// DefaultCompactCompressionLevel is the zstd level of a CompactConfig
// whose CompressionLevel is zero: klauspost's default, about zstd level 3.
const DefaultCompactCompressionLevel = zstd.SpeedDefault

// Config configures a [Writer]. Zero fields take the defaults above.
type Config struct {
	// Dir is the output root: partitions, the manifest and the lock file
	// live below it. Required. One Writer owns it at a time.
	Dir string

	// PartBytes closes a part when its buffered rows reach this many
	// bytes (the strings and fixed fields of its rows, uncompressed).
	PartBytes int64

	// PartAge closes a part this long after its first entry arrived, at
	// the next [Writer.CommitDue].
	PartAge time.Duration

	// MemoryBytes bounds the rows buffered in all open parts together.
	// When a write would pass it, the largest open part is committed
	// first. The parts of a commit being written beside the writes
	// ([Writer.Begin]) count apart, so that the writes go on meanwhile:
	// up to twice MemoryBytes is then held. It must be at least
	// PartBytes.
	MemoryBytes int64

	// RowGroupRows is the number of rows per row group.
	RowGroupRows int64

	// PageBytes is the uncompressed size of a data page.
	PageBytes int

	// CompressionLevel is the zstd encoder level.
	CompressionLevel zstd.Level

	// WriterVersion names the program and version in every file's
	// metadata ("writer" key and Parquet created_by).
	WriterVersion string

	// OnEntryError, when set, receives an *[EntryError] for each entry
	// written altered (invalid UTF-8 replaced). Nil logs it at Warn.
	// Either way it is counted in Stats.InvalidUTF8.
	OnEntryError func(error)

	// Logger receives lifecycle events (commits at Debug, recovery at
	// Info); nil discards them.
	Logger *slog.Logger

	// Bucket, when set, is where the output lives instead of a local
	// directory (Dir is then only its name in messages, s3://bucket/prefix):
	// see the package documentation, "Commit protocol in a bucket".
	Bucket *objstore.Bucket

	// SpoolDir is the local directory where a part is encoded before it
	// is uploaded to Bucket; default os.TempDir().
	SpoolDir string
}

// Validate reports the first invalid field as a *[ConfigError].
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return &ConfigError{Field: "dir", Value: c.Dir, Err: ErrInvalidConfig, Why: "required"}
	case c.PartBytes < 0:
		return &ConfigError{Field: "part_bytes", Value: c.PartBytes, Err: ErrInvalidConfig, Why: "negative"}
	case c.PartAge < 0:
		return &ConfigError{Field: "part_age", Value: c.PartAge, Err: ErrInvalidConfig, Why: "negative"}
	case c.MemoryBytes < 0:
		return &ConfigError{Field: "memory_bytes", Value: c.MemoryBytes, Err: ErrInvalidConfig, Why: "negative"}
	case c.RowGroupRows < 0:
		return &ConfigError{Field: "row_group_rows", Value: c.RowGroupRows, Err: ErrInvalidConfig, Why: "negative"}
	case c.PageBytes < 0:
		return &ConfigError{Field: "page_bytes", Value: c.PageBytes, Err: ErrInvalidConfig, Why: "negative"}
	case c.CompressionLevel < 0 || c.CompressionLevel > zstd.SpeedBestCompression:
		return &ConfigError{Field: "compression_level", Value: c.CompressionLevel, Err: ErrInvalidConfig, Why: "not a zstd encoder level"}
	}
	d := c.withDefaults()
	if d.MemoryBytes < d.PartBytes {
		return &ConfigError{Field: "memory_bytes", Value: d.MemoryBytes, Err: ErrInvalidConfig, Why: "below part_bytes"}
	}
	return nil
}

// withDefaults returns c with its zero fields set to the defaults.
func (c Config) withDefaults() Config {
	if c.PartBytes == 0 {
		c.PartBytes = DefaultPartBytes
	}
	if c.PartAge == 0 {
		c.PartAge = DefaultPartAge
	}
	if c.MemoryBytes == 0 {
		c.MemoryBytes = max(DefaultMemoryBytes, c.PartBytes)
	}
	if c.RowGroupRows == 0 {
		c.RowGroupRows = DefaultRowGroupRows
	}
	if c.PageBytes == 0 {
		c.PageBytes = DefaultPageBytes
	}
	if c.CompressionLevel == 0 {
		c.CompressionLevel = DefaultCompressionLevel
	}
	if c.WriterVersion == "" {
		c.WriterVersion = DefaultWriterVersion
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
