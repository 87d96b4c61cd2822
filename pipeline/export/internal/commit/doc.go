// Package commit holds what the Parquet writer (pipeline/export) and the
// archive (pipeline/export/archive) share of the commit protocol: the
// partition of an entry and the escape of its values, the manifests' JSON
// lines, the conditional manifest object in a bucket, the atomic write and
// directory fsync of a commit, and the errors and log keys both report.
// The exported packages re-export what their users see (Partition,
// the sentinel errors, ConfigError, PartitionError).
//
// It imports pipeline/internal/fsutil, pipeline/export/objstore and schema;
// neither parquet-go nor DuckDB.
package commit
