package tail

import (
	"io"
	"sync/atomic"

	"github.com/sessionpipe/sessionpipe/internal/prom"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// Metrics are the tailer's counters, safe for concurrent use. WriteTo
// renders them in the Prometheus text exposition format.
type Metrics struct {
	files         atomic.Int64                  // files followed (gauge)
	skipped       atomic.Int64                  // files that are not transcripts
	skippedNames  atomic.Int64                  // files under the watches not followed because of their names (gauge)
	lines         atomic.Int64                  // lines read
	bytes         atomic.Int64                  // bytes of lines read
	sent          atomic.Int64                  // messages handed to the publisher
	batches       atomic.Int64                  // of them, batch messages
	entries       atomic.Int64                  // entries published, in batches or alone
	ackedEntries  atomic.Int64                  // entries in messages acknowledged
	acked         atomic.Int64                  // messages acknowledged by JetStream
	badLines      atomic.Int64                  // lines sent to the dead-letter subject
	truncated     atomic.Int64                  // entries shortened to fit a message
	publishErrors atomic.Int64                  // messages that completed with an error
	readErrors    atomic.Int64                  // failed reads of a file
	rewrites      atomic.Int64                  // files read again after truncation or replacement
	renames       atomic.Int64                  // files followed across a rename
	watchErrors   atomic.Int64                  // directories that could not be watched
	rescans       atomic.Int64                  // walks of the watches done
	secrets       [redact.NumKinds]atomic.Int64 // secrets replaced before publishing, by kind
	emptied       atomic.Int64                  // fields left out in metadata mode
	rawChunks     atomic.Int64                  // raw chunk messages (parts counted) handed to the publisher
	rawBytes      atomic.Int64                  // original bytes in them
	rawHoles      atomic.Int64                  // lines too long to archive
	rawSkipped    atomic.Int64                  // chunks not sent: the file changed under the read
	docReads      atomic.Int64                  // whole-file documents read (a version each)
	docInvalid    atomic.Int64                  // document versions that were not valid JSON (half-written)
	docTooLarge   atomic.Int64                  // document versions over the size limit
	docUnchanged  atomic.Int64                  // entries of documents read again with the content already published

	lag         func() int64        // bytes written and not yet acknowledged (gauge)
	watchedDirs func() int64        // directories with a notification watch (gauge)
	watchFiles  func() []WatchFiles // files followed per watch (gauge)
}

// WatchFiles is the number of files one watch follows: the files whose
// path it is the first watch to match.
type WatchFiles struct {
	Watch string // as configured
	Files int64
}

func newMetrics() *Metrics { return &Metrics{} }

// redacted counts what redacting an entry did.
func (m *Metrics) redacted(st redact.Stats) {
	for k, n := range st.Secrets {
		if n != 0 {
			m.secrets[k].Add(n)
		}
	}
	if st.Emptied != 0 {
		m.emptied.Add(st.Emptied)
	}
}

// Redacted returns the secrets replaced so far, by kind, and the fields
// left out in metadata mode.
func (m *Metrics) Redacted() redact.Stats {
	var st redact.Stats
	for k := range m.secrets {
		st.Secrets[k] = m.secrets[k].Load()
	}
	st.Emptied = m.emptied.Load()
	return st
}

// Snapshot is a copy of the counters.
type Snapshot struct {
	Files, Skipped, Lines, Bytes, Sent, Acked, BadLines, Truncated int64
	// SkippedNames is the number of files under the watches, at the last
	// rescan, not followed because of their names (not transcript
	// candidates nor session stores); Skipped counts the files followed
	// and found not to be transcripts by their content.
	SkippedNames                                              int64
	Batches, Entries, AckedEntries                            int64
	PublishErrors, ReadErrors, Rewrites, Renames, WatchErrors int64
	Rescans                                                   int64
	RawChunks, RawBytes, RawHoles, RawSkipped                 int64
	WatchedDirs, LagBytes                                     int64
	Watches                                                   []WatchFiles

	// DocReads counts the versions of whole-file documents read,
	// DocInvalid those that were not valid JSON, DocTooLarge those over
	// the limit, DocUnchanged the entries not published again because
	// their content was published before.
	DocReads, DocInvalid, DocTooLarge, DocUnchanged int64
}

// Snapshot returns the current values.
func (m *Metrics) Snapshot() Snapshot {
	s := Snapshot{
		Files: m.files.Load(), Skipped: m.skipped.Load(), SkippedNames: m.skippedNames.Load(), Lines: m.lines.Load(), Bytes: m.bytes.Load(),
		Sent: m.sent.Load(), Acked: m.acked.Load(), Batches: m.batches.Load(), Entries: m.entries.Load(),
		AckedEntries: m.ackedEntries.Load(), BadLines: m.badLines.Load(), Truncated: m.truncated.Load(),
		PublishErrors: m.publishErrors.Load(), ReadErrors: m.readErrors.Load(), Rewrites: m.rewrites.Load(),
		Renames: m.renames.Load(), WatchErrors: m.watchErrors.Load(), Rescans: m.rescans.Load(),
		RawChunks: m.rawChunks.Load(), RawBytes: m.rawBytes.Load(), RawHoles: m.rawHoles.Load(), RawSkipped: m.rawSkipped.Load(),
		DocReads: m.docReads.Load(), DocInvalid: m.docInvalid.Load(), DocTooLarge: m.docTooLarge.Load(), DocUnchanged: m.docUnchanged.Load(),
	}
	if m.lag != nil {
		s.LagBytes = m.lag()
	}
	if m.watchedDirs != nil {
		s.WatchedDirs = m.watchedDirs()
	}
	if m.watchFiles != nil {
		s.Watches = m.watchFiles()
	}
	return s
}

// WriteTo writes the counters in the Prometheus text format.
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	s := m.Snapshot()
	pw := prom.NewWriter(w)
	for _, r := range []struct {
		name string
		typ  prom.Type
		help string
		v    int64
	}{
		{"sessionpipe_tail_files", prom.Gauge, "Files followed.", s.Files},
		{"sessionpipe_tail_files_skipped_total", prom.Counter, "Files skipped as not transcripts.", s.Skipped},
		{"sessionpipe_tail_files_skipped_names", prom.Gauge, "Files under the watches not followed because of their names (not transcript candidates), at the last rescan.", s.SkippedNames},
		{"sessionpipe_tail_lines_read_total", prom.Counter, "Lines read.", s.Lines},
		{"sessionpipe_tail_bytes_read_total", prom.Counter, "Bytes of lines read.", s.Bytes},
		{"sessionpipe_tail_messages_sent_total", prom.Counter, "Messages handed to the publisher.", s.Sent},
		{"sessionpipe_tail_entries_published_total", prom.Counter, "Messages acknowledged by JetStream (a batch message of many entries counts once).", s.Acked},
		{"sessionpipe_tail_batches_sent_total", prom.Counter, "Batch messages handed to the publisher.", s.Batches},
		{"sessionpipe_tail_entries_sent_total", prom.Counter, "Entries handed to the publisher, in batch messages or alone.", s.Entries},
		{"sessionpipe_tail_entries_acked_total", prom.Counter, "Entries in messages acknowledged by JetStream.", s.AckedEntries},
		{"sessionpipe_tail_bad_lines_total", prom.Counter, "Lines sent to the dead-letter subject.", s.BadLines},
		{"sessionpipe_tail_entries_truncated_total", prom.Counter, "Entries shortened to fit a message.", s.Truncated},
		{"sessionpipe_tail_publish_errors_total", prom.Counter, "Messages that completed with an error.", s.PublishErrors},
		{"sessionpipe_tail_read_errors_total", prom.Counter, "Failed reads of a file.", s.ReadErrors},
		{"sessionpipe_tail_rewrites_total", prom.Counter, "Files read again after truncation or replacement.", s.Rewrites},
		{"sessionpipe_tail_renames_total", prom.Counter, "Files followed across a rename.", s.Renames},
		{"sessionpipe_tail_watch_errors_total", prom.Counter, "Directories that could not be watched.", s.WatchErrors},
		{"sessionpipe_tail_rescans_total", prom.Counter, "Walks of the watches done.", s.Rescans},
		{"sessionpipe_tail_watched_dirs", prom.Gauge, "Directories with a file-notification watch.", s.WatchedDirs},
		{"sessionpipe_tail_raw_chunks_total", prom.Counter, "Chunks of original lines handed to the publisher for the archive.", s.RawChunks},
		{"sessionpipe_tail_raw_bytes_total", prom.Counter, "Original bytes in raw chunks.", s.RawBytes},
		{"sessionpipe_tail_raw_holes_total", prom.Counter, "Lines too long to archive (left out of raw chunks).", s.RawHoles},
		{"sessionpipe_tail_raw_skipped_total", prom.Counter, "Raw chunks not sent because the file changed while read (it is read again).", s.RawSkipped},
		{"sessionpipe_tail_documents_read_total", prom.Counter, "Versions of whole-file documents read.", s.DocReads},
		{"sessionpipe_tail_documents_invalid_total", prom.Counter, "Versions of whole-file documents that were not valid JSON (read half-written, or broken): read again at their next change.", s.DocInvalid},
		{"sessionpipe_tail_documents_too_large_total", prom.Counter, "Versions of whole-file documents over the size limit, not read.", s.DocTooLarge},
		{"sessionpipe_tail_document_entries_unchanged_total", prom.Counter, "Entries of documents read again whose content was published before: not published again.", s.DocUnchanged},
		{"sessionpipe_tail_lag_bytes", prom.Gauge, "Bytes written to followed files and not yet acknowledged.", s.LagBytes},
	} {
		pw.Int(r.name, r.typ, r.help, r.v)
	}
	samples := make([]prom.Sample, len(s.Watches))
	for i, wf := range s.Watches {
		samples[i] = prom.Sample{Labels: []prom.Label{{Name: "watch", Value: wf.Watch}}, Value: float64(wf.Files)}
	}
	pw.Family("sessionpipe_tail_watch_files", prom.Gauge, "Files followed per watch (a file counts in the first watch it matches).", samples...)
	red := m.Redacted()
	secrets := make([]prom.Sample, 0, redact.NumKinds)
	for k := range redact.NumKinds {
		if n := red.Secrets[k]; n > 0 {
			secrets = append(secrets, prom.Sample{Labels: []prom.Label{{Name: "kind", Value: k.String()}}, Value: float64(n)})
		}
	}
	pw.Family("sessionpipe_tail_secrets_redacted_total", prom.Counter, "Secrets replaced by a marker before publishing, by kind.", secrets...)
	pw.Int("sessionpipe_tail_fields_withheld_total", prom.Counter, "Text fields left out before publishing (--content metadata).", red.Emptied)
	return pw.Written(), pw.Err()
}
