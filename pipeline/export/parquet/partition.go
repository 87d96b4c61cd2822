package parquet

import (
	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
	"github.com/sessionpipe/sessionpipe/schema"
)

// NullValue is the partition value written for an empty format or host
// and for the date of an entry without a timestamp: DuckDB writes NULL
// partition values so and reads "NULL" back as NULL. (Hive and Spark use
// __HIVE_DEFAULT_PARTITION__, which DuckDB 1.4 reads as that string.)
const NullValue = commit.NullValue

// Partition is where an entry's row goes: its format, the UTC date of its
// timestamp and its host, as they appear in the directory
// format=<f>/date=<YYYY-MM-DD>/host=<h>. The values are the entry's own,
// unescaped; Partition.Dir escapes them with [EscapeValue]. The archive's
// segments are partitioned the same way.
type Partition = commit.Partition

// PartitionOf returns the partition of e.
func PartitionOf(e *schema.Entry) Partition { return commit.PartitionOf(e) }

// EscapeValue returns v as a Hive partition value: the characters Hive's
// FileUtils.escapePathName escapes, NUL, and every byte of an invalid
// UTF-8 sequence become %XX (upper-case hex); an empty value is
// [NullValue]; a value whose escaped form is longer than 160 bytes is cut
// and ends with "~" and 16 hex digits of its hash. The result never
// contains '/', '\\', NUL or "..": a partition value cannot name a
// directory outside the output root.
func EscapeValue(v string) string { return commit.EscapeValue(v) }

// PartitionError is a commit that failed for one partition: its file (a
// Parquet part or an archive segment) could not be written or renamed
// into its directory. It costs only that partition: the other
// partitions' files of the same commit are committed, the failed one stays
// buffered and is tried again at the next commit. Remove what is in the
// way (Dir says where); the next commit succeeds.
type PartitionError = commit.PartitionError
