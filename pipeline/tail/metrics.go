package tail

import (
	"io"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// Metrics are the tailer's counters, safe for concurrent use, and its
// Prometheus metrics (registered on [Config.Registry]) read from them.
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

	publishLatency prometheus.Histogram // read → acknowledged, seconds
}

// WatchFiles is the number of files one watch follows: the files whose
// path it is the first watch to match.
type WatchFiles struct {
	Watch string // as configured
	Files int64
}

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

// WriteTo writes the tailer's metrics (not the publisher's nor the
// process's) in the Prometheus text format, for tests and tools; a
// daemon serves its registry (see [Config.Registry]).
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := m.register(reg); err != nil {
		return 0, err
	}
	mfs, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, mf := range mfs {
		k, err := expfmt.MetricFamilyToText(w, mf)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Buckets of the read→acknowledged latency, in seconds: a line is
// normally acknowledged within milliseconds of its read (a batch is
// flushed at a file's end); the upper buckets show a stalled server.
var publishLatencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// newMetrics returns the tailer's metrics, registered on nothing yet.
func newMetrics() *Metrics {
	return &Metrics{publishLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "sessionpipe_tail_publish_latency_seconds",
		Help:    "Time from reading a line to JetStream's acknowledgement of the message carrying it (of a batch: from its first line read).",
		Buckets: publishLatencyBuckets,
	})}
}

// register adds m's metrics to reg.
func (m *Metrics) register(reg prometheus.Registerer) error {
	cs := []prometheus.Collector{m.publishLatency, metricsCollector{m}}
	for _, r := range []struct {
		name  string
		gauge bool
		help  string
		v     func() int64
	}{
		{"sessionpipe_tail_files", true, "Files followed.", m.files.Load},
		{"sessionpipe_tail_files_skipped_total", false, "Files skipped as not transcripts.", m.skipped.Load},
		{"sessionpipe_tail_files_skipped_names", true, "Files under the watches not followed because of their names (not transcript candidates), at the last rescan.", m.skippedNames.Load},
		{"sessionpipe_tail_lines_read_total", false, "Lines read.", m.lines.Load},
		{"sessionpipe_tail_bytes_read_total", false, "Bytes of lines read.", m.bytes.Load},
		{"sessionpipe_tail_messages_sent_total", false, "Messages handed to the publisher.", m.sent.Load},
		{"sessionpipe_tail_entries_published_total", false, "Messages acknowledged by JetStream (a batch message of many entries counts once).", m.acked.Load},
		{"sessionpipe_tail_batches_sent_total", false, "Batch messages handed to the publisher.", m.batches.Load},
		{"sessionpipe_tail_entries_sent_total", false, "Entries handed to the publisher, in batch messages or alone.", m.entries.Load},
		{"sessionpipe_tail_entries_acked_total", false, "Entries in messages acknowledged by JetStream.", m.ackedEntries.Load},
		{"sessionpipe_tail_bad_lines_total", false, "Lines sent to the dead-letter subject.", m.badLines.Load},
		{"sessionpipe_tail_entries_truncated_total", false, "Entries shortened to fit a message.", m.truncated.Load},
		{"sessionpipe_tail_publish_errors_total", false, "Messages that completed with an error.", m.publishErrors.Load},
		{"sessionpipe_tail_read_errors_total", false, "Failed reads of a file.", m.readErrors.Load},
		{"sessionpipe_tail_rewrites_total", false, "Files read again after truncation or replacement.", m.rewrites.Load},
		{"sessionpipe_tail_renames_total", false, "Files followed across a rename.", m.renames.Load},
		{"sessionpipe_tail_watch_errors_total", false, "Directories that could not be watched.", m.watchErrors.Load},
		{"sessionpipe_tail_rescans_total", false, "Walks of the watches done.", m.rescans.Load},
		{"sessionpipe_tail_watched_dirs", true, "Directories with a file-notification watch.", orZero(&m.watchedDirs)},
		{"sessionpipe_tail_raw_chunks_total", false, "Chunks of original lines handed to the publisher for the archive.", m.rawChunks.Load},
		{"sessionpipe_tail_raw_bytes_total", false, "Original bytes in raw chunks.", m.rawBytes.Load},
		{"sessionpipe_tail_raw_holes_total", false, "Lines too long to archive (left out of raw chunks).", m.rawHoles.Load},
		{"sessionpipe_tail_raw_skipped_total", false, "Raw chunks not sent because the file changed while read (it is read again).", m.rawSkipped.Load},
		{"sessionpipe_tail_documents_read_total", false, "Versions of whole-file documents read.", m.docReads.Load},
		{"sessionpipe_tail_documents_invalid_total", false, "Versions of whole-file documents that were not valid JSON (read half-written, or broken): read again at their next change.", m.docInvalid.Load},
		{"sessionpipe_tail_documents_too_large_total", false, "Versions of whole-file documents over the size limit, not read.", m.docTooLarge.Load},
		{"sessionpipe_tail_document_entries_unchanged_total", false, "Entries of documents read again whose content was published before: not published again.", m.docUnchanged.Load},
		{"sessionpipe_tail_lag_bytes", true, "Bytes written to followed files and not yet acknowledged.", orZero(&m.lag)},
		{"sessionpipe_tail_fields_withheld_total", false, "Text fields left out before publishing (--content metadata).", m.emptied.Load},
	} {
		v := func() float64 { return float64(r.v()) }
		if r.gauge {
			cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: r.name, Help: r.help}, v))
		} else {
			cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: r.name, Help: r.help}, v))
		}
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// orZero reads a gauge the tailer sets after the metrics are made.
func orZero(f *func() int64) func() int64 {
	return func() int64 {
		if *f == nil {
			return 0
		}
		return (*f)()
	}
}

// metricsCollector collects the labelled families: files per watch and
// secrets redacted per kind (the kinds seen so far).
type metricsCollector struct{ m *Metrics }

var (
	watchFilesDesc = prometheus.NewDesc("sessionpipe_tail_watch_files",
		"Files followed per watch (a file counts in the first watch it matches).", []string{"watch"}, nil)
	secretsDesc = prometheus.NewDesc("sessionpipe_tail_secrets_redacted_total",
		"Secrets replaced by a marker before publishing, by kind.", []string{"kind"}, nil)
)

func (c metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- watchFilesDesc
	ch <- secretsDesc
}

func (c metricsCollector) Collect(ch chan<- prometheus.Metric) {
	if c.m.watchFiles != nil {
		for _, wf := range c.m.watchFiles() {
			ch <- prometheus.MustNewConstMetric(watchFilesDesc, prometheus.GaugeValue, float64(wf.Files), wf.Watch)
		}
	}
	red := c.m.Redacted()
	for k := range redact.NumKinds {
		if n := red.Secrets[k]; n > 0 {
			ch <- prometheus.MustNewConstMetric(secretsDesc, prometheus.CounterValue, float64(n), k.String())
		}
	}
}
