// Package parquet writes normalised entries as Hive-partitioned Parquet
// files that DuckDB reads directly, exactly once: the [Writer] (in a
// directory or an S3 bucket), with a commit protocol under which a message
// counts as exported only once the file holding it is durable and listed
// in the manifest; [Compact] and [CompactBucket] merge the small files of
// closed partitions (a planner that reads the manifest alone, and the
// merge of the inputs' rows). The Exporter of package pipeline/export
// drives a Writer from the stream; package pipeline/export/archive keeps
// the original lines; package pipeline/export/duckdb writes the SQL views
// over these files.
//
// It imports parquet-go, pipeline/export/objstore, the commit pieces it
// shares with the archive (pipeline/export/internal/commit, whose
// Partition, errors and log keys it re-exports), pipeline/dirlock and
// schema; not DuckDB, not NATS.
//
// # Layout
//
// Under the output root:
//
//	<out>/format=<f>/date=<YYYY-MM-DD>/host=<h>/part-<firstseq>-<lastseq>.parquet
//	<out>/format=<f>/date=<YYYY-MM-DD>/host=<h>/part-<firstseq>-<lastseq>-c<gen>.parquet (merged)
//	<out>/_manifest.jsonl
//	<out>/_manifest.lock, <out>/_compact.lock, <out>/LOCK
//
// The date is the UTC date of the entry's ts. Partition values come from
// entries and are escaped by [EscapeValue] as Hive escapes them ("/" is
// %2F, "=" is %3D, "%" is %25, control characters, NUL, quotes, ...); an
// empty value, and the date of an entry without ts, is NULL, which is how
// DuckDB writes and reads NULL partitions. A value that holds invalid
// UTF-8, or whose escaped form passes 160 bytes, is replaced or cut and
// suffixed with a hash of the original ("~" and 16 hex digits). A value can
// never name a directory outside its partition level.
//
// Read everything with
//
//	SELECT ... FROM read_parquet('<out>/**/*.parquet', hive_partitioning=true, union_by_name=true)
//
// DuckDB (1.4) un-escapes %XX in partition values, reads "NULL" as NULL,
// casts date to DATE, and gives the partition's value for format and host
// where the file also has them as columns; for the rare host that was
// replaced or cut, read with hive_partitioning=false to see the file's own
// column, which always holds the exact value.
//
// # Columns
//
// Every field of [schema.Entry], under its JSON contract name, plus:
//
//	seq   BIGINT   the JetStream stream sequence of the entry's message
//	key   VARCHAR  schema.Entry.Key(): format:host:session_id:entry_id
//
// ts is INT64 TIMESTAMP(MICROS, isAdjustedToUTC), which DuckDB shows as
// TIMESTAMP WITH TIME ZONE; sub-microsecond digits are dropped. usage is a
// STRUCT (usage.input, usage.output, usage.cache_read, ...), so the same
// SQL runs on `sessionpipe entries` JSON and on Parquet; NULL usage (no
// usage recorded) differs from zero counters. tool_calls, tool_results
// and attachments are LISTs of STRUCTs (empty lists when none); reaction
// and origin are nullable STRUCTs; tool_calls[].input and raw hold JSON
// text as VARCHAR (DuckDB's JSON functions take them). A string field
// that is empty in the entry ("absent" in the contract) is NULL; cost_usd
// is NULL unless the source recorded a cost; booleans and integer
// counters are never NULL. Strings are UTF-8, as Parquet requires (DuckDB
// refuses a column chunk holding one that is not): an entry with invalid
// UTF-8 (a non-UTF-8 file name in path, say) is written with U+FFFD in
// place of each bad sequence, counted and reported as an *[EntryError]
// with its location.
//
// raw is NULL unless the entries carry their original JSON (a parser
// option). Keeping it doubles the text and adds every base64 image: on
// generated Claude Code transcripts the files grow sixfold, past the size
// of the same lines as zstd JSONL. The byte-exact copy is the cold
// archive's job; leave raw off for Parquet.
//
// Encodings: dictionary for columns with few distinct values in a file
// (format, host, path, session_id, kind, role, model, cwd, tool names,
// ...), delta for seq, offset, line and key, parquet-go's default
// (DELTA_LENGTH_BYTE_ARRAY) for text and random ids; every column zstd-compressed; page statistics and column indexes
// written, except min/max on free text (text, raw, command_args, tool
// input and result content), which no filter uses and which can be
// megabytes long; rows sorted by (session_id, ts, seq) inside a file
// (declared as the row groups' sorting_columns), so that a filter on a
// session or a time range skips whole row groups. Row groups hold Config.RowGroupRows
// rows. The key-value metadata holds the schema version, the stream range,
// the partition values and the writer ([MetaSchemaVersion] and the other
// Meta keys).
//
// # Commit protocol
//
// A [Writer] takes entries in stream order with their sequences and keeps
// one open part per partition, in memory (its rows' strings in an arena).
// A part is committed when the next entry would push it past
// Config.PartBytes, when it has been open Config.PartAge at a
// [Writer.CommitDue], when the buffered total would pass
// Config.MemoryBytes (the largest parts go first, as many as free a
// quarter of the budget beyond the entry's need, with one manifest
// change), and at [Writer.Flush] and [Writer.Close]. [Writer.Begin],
// [Commit.Run] and [Writer.Finish] split a commit of the parts that are
// due so that the caller can write them while entries go on into new
// parts (the exporter does); until Finish, [Writer.Committed] stays below
// them, and a part Write must commit waits for them. Committing a part:
//
//  1. sorts its rows and writes them to .part-<first>-<last>.parquet.tmp in
//     the partition's directory, then fsyncs the file;
//  2. takes the manifest lock (an OS file lock on _manifest.lock) and reads
//     the manifest again, unless the file is still the one this writer
//     wrote last (same inode, size and modification time: every change
//     replaces it by a rename, so a compaction's change shows);
//  3. renames the file to part-<first>-<last>.parquet and fsyncs the
//     directory (and the parents of directories it created);
//  4. appends a [File] record (path, rows, bytes, sha256, stream range,
//     min/max ts) to the manifest, which is rewritten atomically (temporary
//     file, fsync, rename, fsync), and releases the lock.
//
// If the manifest was renamed into place but its directory could not be
// synced (an I/O error), the change is visible but not known to be
// durable: the Writer stops ([ErrNotDurable]; an Exporter returns it)
// and acknowledges nothing of it, and the next Writer decides at open
// from what the disk holds. A rename that fails in a batch (a partition's
// directory moved away meanwhile) records the files renamed before it;
// on any other failure the files renamed are removed under the lock.
//
// The parts due at one [Writer.CommitDue] or [Writer.Flush] go through
// these steps together: each written (1), then all renamed and recorded
// under one holding of the lock with one manifest write. A backfill of
// months of history has hundreds of day partitions open; one manifest
// write per file made committing them quadratic in the files committed.
//
// Every change of the manifest (a Writer's commit, the clean-up at
// [NewWriter], a [Compact] merge) is such a read-modify-write under the
// manifest lock, so none is lost, and the lock is held only for the renames,
// a directory sync per partition committed and the manifest's write
// (encoding happens before it). Because a file is renamed into place and
// recorded under one holding of the lock, whoever holds it sees no file
// between the two: a Parquet file the manifest does not list is always a
// leftover, and may be removed.
//
// A file exists for readers once renamed, but is committed only once the
// manifest lists it. [Writer.Committed] then gives the highest sequence S
// such that every entry up to S is in a committed file: the caller
// acknowledges up to S (AckAll), never beyond. Because partitions
// interleave in the stream, S stays just below the first entry of the
// oldest open part; Config.PartAge bounds how long that lasts.
//
// At [NewWriter], under the manifest lock, what a crash left is cleaned:
// the Writer's temporary files are removed, and Parquet files the manifest
// does not list (renamed, not recorded) are removed too: their entries
// were never acknowledged, so they come again. (A directory that holds
// part files but no manifest at all, a lost manifest, is refused with
// [ErrManifest] and left as it is; a new directory gets an empty manifest
// at once.) A redelivered entry whose partition already has a committed
// file at or past its sequence is skipped, so a redelivered range never
// yields a second copy; other entries of the range go to new parts. The
// directory is locked (pipeline/dirlock): one Writer per output root.
//
// # Commit protocol in a bucket
//
// With Config.Bucket (and ArchiveConfig.Bucket) the output is an S3
// prefix ([objstore.Bucket]), which has no rename and no lock. A part is
// encoded to a spool file and uploaded under its final name,
// part-<first>-<last>.parquet: the name comes from the stream range and
// the encoding is deterministic, so an upload repeated after a crash
// writes the same bytes. The parts due at one commit are then listed by
// one conditional PUT of _manifest.jsonl (If-Match on the ETag read, or
// If-None-Match: * for a new manifest): of two processes that read the
// same version only one writes the next, and the loser reads it again.
// Before each write the writer checks the version it writes over: a
// listed file of one of its partitions overlapping one of its ranges,
// other than the very same object, was committed by another writer on
// the prefix, and the commit fails with [ErrConflict] (the Exporter
// reopens from the manifest). A PUT of unknown outcome is read back. The
// exporter's position (_exporter.json) is written after both manifests.
// No lock is taken, and NewWriter removes nothing: objects no manifest
// lists and unfinished multipart uploads are removed by [CompactBucket].
// Readers follow the manifest (the views with ViewConfig.Manifest,
// archive.Restore with RestoreConfig.Bucket). docs/s3.md has the details.
//
// # Compaction
//
// [Compact] merges the files below a target size of closed partitions
// (dated before yesterday, by default) into larger ones, written with the
// Writer's schema, encodings and metadata, rows sorted again and an entry
// present twice (see Duplicates) kept once. It may run while a Writer
// commits to the same root: it never takes the LOCK, and follows the
// rule the Writer follows, a file is live if and only if the manifest
// lists it. It holds _compact.lock for its whole run (a second Compact
// waits), and for each merge:
//
//  1. writes the merged rows to .compact-<name>.tmp in the partition's
//     directory (through .compact-pass<n>-<name>.tmp files when the
//     inputs do not fit in CompactConfig.MemoryBytes) and fsyncs it;
//  2. under the manifest lock, reads the manifest again and checks that
//     every input is still listed with its checksum (else the merge is
//     dropped);
//  3. renames the file to part-<first>-<last>-c<gen>.parquet, <first> and
//     <last> the union of its inputs' stream ranges and <gen> one more
//     than theirs, and fsyncs the directory;
//  4. rewrites the manifest atomically with the inputs replaced by the
//     merged file, and releases the lock;
//  5. removes the inputs and fsyncs the directory.
//
// A crash before 4 leaves the inputs listed, and the merged file, if
// renamed, unlisted; a crash after 4 leaves the merged file listed and
// the inputs unlisted. Either way every entry is in exactly one listed
// file, and the next NewWriter or Compact removes the unlisted files
// under the manifest lock; a compaction's temporary files are removed by
// the next Compact, or by a NewWriter that finds _compact.lock free. The
// merged file's range keeps the sequences of its inputs, dropped
// duplicates included, so a Writer's skip rule (a partition's highest
// committed sequence) is unchanged. Its name is one no Writer can
// produce (a Writer's new parts start above every listed sequence of
// their partition) and no other listed file has (two listed files of a
// partition never start at the same sequence; the generation tells it
// from an input with the same range).
//
// A reader that follows the manifest sees every entry once at any time.
// One that globs the directory sees, between steps 3 and 5 (or until the
// next clean-up, after a crash there), the merged file beside its
// inputs: rows with the same key, which readers dedupe anyway (see
// Duplicates).
//
// On SIGTERM, the caller stops fetching, calls [Writer.Close] (which
// commits every open part) and then acknowledges up to
// [Writer.Committed].
//
// # Driving a Writer from a consumer
//
// Without the Exporter: for each batch of the shared consumer, call
// [Writer.Write] with each entry and its stream sequence, then
// [Writer.Advance] with the batch's last sequence, and consider exported
// (acknowledge, or save as a position) only up to [Writer.Committed].
// Call [Writer.CommitDue] every few seconds. A redelivery is skipped by
// sequence; a batch handed over twice (a handler retry) is skipped the
// same way.
//
// # Duplicates
//
// The commit protocol writes each stream message once. The stream itself
// may still hold the same entry twice: a tailer that re-sent an entry after
// the stream's duplicate window had passed publishes it under a new
// sequence. Rows with the same key are the same entry; readers keep one
// (the entries view of package duckdb keeps the lowest seq). Both copies have the same ts, hence the same
// partition, possibly in two files; [Compact] keeps the one with the
// lowest seq when it merges them.
//
// # Memory
//
// Config.MemoryBytes bounds the rows buffered in all open parts; arena
// blocks add at most 64 KiB per open part. A commit taken out with
// [Writer.Begin] keeps its parts until [Writer.Finish], beside up to
// MemoryBytes of new open parts: a caller that writes commits beside its
// writes holds up to twice MemoryBytes of rows. Buffered rows hold no
// pointers (strings are offsets into the arena, lists ranges of side
// tables), so the garbage collector does not scan them; they become
// Parquet rows 1,024 at a time while a part is written. Committing a part needs, beside it,
// the compressed pages of one row group. Set the process's GOMEMLIMIT a
// little above MemoryBytes plus that, so that the collector keeps the heap
// there: the benchmark (benchmarks/export) peaks under 200 MB of RSS with
// the defaults and GOMEMLIMIT=192MiB.
//
// [Compact] streams its inputs (a k-way merge of their sorted rows) and
// holds, beside the same fixed costs (the zstd encoder's history,
// parquet-go's page buffers) and the compressed pages of one row group of
// the merged file, CompactConfig.MemoryBytes of input readers: each
// input's pages being decoded and a buffer of its rows. A merge with more
// inputs than that merges them in passes through temporary files.
package parquet
