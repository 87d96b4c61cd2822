// Package archive keeps the original bytes of the transcripts, as the
// tailer published them in raw chunks, in zstd segments that give every
// file back byte for byte: the [ArchiveWriter] (in a directory or an S3
// bucket, with the commit protocol of the Parquet writer of package
// pipeline/export: a segment counts once the manifest lists it),
// [ReadSegmentIndex] and the manifests' readers, and [Restore].
//
// The tailer publishes the original bytes of every run of lines it reads
// as raw chunks ([bus.RawChunk], on <prefix>.raw.<host>) right after the
// batch message of those lines' entries. The [ArchiveWriter] keeps them under its own root, with
// the same partitioning as the Parquet (format, the UTC date of the
// chunk's earliest entry, host) and the same commit protocol and
// recovery, in segments
//
//	<archive>/format=<f>/date=<d>/host=<h>/seg-<firstseq>-<lastseq>.jsonl.zst
//	<archive>/_manifest.jsonl
//
// A segment is a run of zstd frames holding the chunks' bytes, in stream
// order, as they were in the file (secrets replaced when the tailer
// redacts): a chunk of at least [ArchiveConfig.FrameBytes] (128 KiB; a
// backfill's, up to a batch message's 1 MiB) is a frame of its own, and
// smaller ones (a live session's appended lines) are gathered into one
// frame until it reaches that size or the segment commits. Then comes a
// zstd skippable frame holding the chunk index, JSON compressed as one
// zstd frame ([Chunk]: host, path, file identity, offsets, line numbers,
// holes, sessions, its frame's offset and size, and, in a shared frame,
// where its bytes are), ending with the index's length and the tag
// "SPX2". `zstd -d` prints a segment as the JSONL it holds and skips the
// index; [ReadSegmentIndex] reads it from the end, and a frame can be
// read alone. Segments written before shared frames end with "SPX1", a
// plain JSON index and a frame per chunk; they are read as they were.
// An earlier sessionpipe does not read "SPX2" segments (it reports them
// as damaged): restore an archive with a version at least as new as the
// one that wrote it.
//
// [Restore] rebuilds each file from its chunks in stream order, line by
// line: a chunk replaces the file's lines from its first one on, so that
// a chunk sent again (a tailer that restarted) changes nothing and a file
// read again from its start (rewritten) is given back as it was last
// read. Chunks are grouped by host and file identity; a chunk that starts
// a file at line 1 under another path begins another file (an inode
// reused), and a renamed file is restored at its last path. Lines longer
// than the tailer keeps (--max-line-bytes) are holes, reported. A file
// is written at <out>/<host>/<its path cleaned>, the host escaped as a
// partition value ("." and ".." as %2E), through an [os.Root]: nothing is
// written outside <out>, and a symbolic link under it that leads out is
// an error, never followed.
//
// Restore checks what the archive claims before it uses it: each segment
// against the manifest's size and checksum, each index entry against its
// segment and its own span (a frame inside the segment, data within
// limits, no more lines than its bytes can hold), each frame against its
// zstd checksum and its index entry. A missing or unreadable segment, or
// a damaged chunk, is skipped and reported in a [RestoreError] (segment,
// chunk, why), with the files it affected; every other file is restored.
// A file's lines are kept as runs, so a chunk far into a file costs its
// own lines, not the numbers before them.
//
// It imports pipeline/bus (the raw chunk), pipeline/export/objstore and the
// commit pieces it shares with the Parquet writer
// (pipeline/export/internal/commit); it links neither parquet-go nor DuckDB.
package archive
