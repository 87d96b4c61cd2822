// Package export is the exporter daemon: the [Exporter] consumes the
// stream into a Parquet writer (package pipeline/export/parquet) and an
// archive writer (package pipeline/export/archive), exactly once, with its
// configuration, health, metrics, position and recovery. The Parquet
// files, their layout, columns and commit protocol are described in
// package parquet; the archive in package archive; the DuckDB views in
// package duckdb.
//
// The [Exporter] drives both writers from the shared JetStream consumer
// of pipeline/bus (entries, and raw chunks when it keeps an archive): for
// each batch it calls [parquet.Writer.Write] with each entry and its stream
// sequence and [archive.ArchiveWriter.Write] with each raw chunk, then both
// writers' Advance with the batch's last sequence (dead letters and
// undecodable messages carry neither); every CommitInterval it commits
// what reached Config.PartAge. Its position is its own, not the
// consumer's acknowledgements (which follow each batch): the highest
// sequence S such that every message up to S is committed (the minimum of
// both writers' Committed), saved with the stream's identity in
// <out>/_exporter.json after the manifests. A restart consumes from S+1;
// a message that a committed file of its partition already covers is
// skipped (see "Commit protocol" in package parquet), so a position that lags the manifests
// after a crash costs a re-read, never a second row. The stream must keep
// its messages at least as long as the exporter may lag (its limits,
// not acknowledgements, remove them): messages gone before they were
// exported are a reported gap. With ExporterConfig.PurgeArchived the
// exporter itself deletes the raw chunk messages up to S once they are
// archived (none while another durable consumer reads them); the entries
// stay.
//
// An output written from another incarnation of the stream (deleted and
// created again: its sequences start over) is refused: exporting into it
// would skip new entries as already committed. So is an output written by
// an offline export (ExporterConfig.Offline, `sessionpipe export`), whose
// temporary streams continue the output's sequences ([HighestSeq]).
// Exporters of one consumer name run one at a time (a lease in JetStream
// KV); the others stand by. On SIGTERM (ctx ending) the exporter commits
// what is open before it returns.
//
// It imports pipeline/bus (the shared consumer), the parquet and archive
// packages, pipeline/export/objstore and prometheus/client_golang.
package export
