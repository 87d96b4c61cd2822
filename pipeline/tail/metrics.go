package tail

import (
	"fmt"
	"io"
	"sync/atomic"
)

// Metrics are the tailer's counters, safe for concurrent use. WriteTo
// renders them in the Prometheus text exposition format.
type Metrics struct {
	files         atomic.Int64 // files followed (gauge)
	skipped       atomic.Int64 // files that are not transcripts
	lines         atomic.Int64 // lines read
	bytes         atomic.Int64 // bytes of lines read
	sent          atomic.Int64 // messages handed to the publisher
	acked         atomic.Int64 // messages acknowledged by JetStream
	badLines      atomic.Int64 // lines sent to the dead-letter subject
	truncated     atomic.Int64 // entries shortened to fit a message
	publishErrors atomic.Int64 // messages that completed with an error
	readErrors    atomic.Int64 // failed reads of a file
	rewrites      atomic.Int64 // files read again after truncation or replacement
	renames       atomic.Int64 // files followed across a rename
	watchErrors   atomic.Int64 // directories that could not be watched

	lag         func() int64 // bytes written and not yet acknowledged (gauge)
	watchedDirs func() int64 // directories with a notification watch (gauge)
}

func newMetrics() *Metrics { return &Metrics{} }

// Snapshot is a copy of the counters.
type Snapshot struct {
	Files, Skipped, Lines, Bytes, Sent, Acked, BadLines, Truncated int64
	PublishErrors, ReadErrors, Rewrites, Renames, WatchErrors      int64
	WatchedDirs, LagBytes                                          int64
}

// Snapshot returns the current values.
func (m *Metrics) Snapshot() Snapshot {
	s := Snapshot{
		Files: m.files.Load(), Skipped: m.skipped.Load(), Lines: m.lines.Load(), Bytes: m.bytes.Load(),
		Sent: m.sent.Load(), Acked: m.acked.Load(), BadLines: m.badLines.Load(), Truncated: m.truncated.Load(),
		PublishErrors: m.publishErrors.Load(), ReadErrors: m.readErrors.Load(), Rewrites: m.rewrites.Load(),
		Renames: m.renames.Load(), WatchErrors: m.watchErrors.Load(),
	}
	if m.lag != nil {
		s.LagBytes = m.lag()
	}
	if m.watchedDirs != nil {
		s.WatchedDirs = m.watchedDirs()
	}
	return s
}

// WriteTo writes the counters in the Prometheus text format.
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	s := m.Snapshot()
	rows := []struct {
		name, typ, help string
		v               int64
	}{
		{"sessionpipe_tail_files", "gauge", "Files followed.", s.Files},
		{"sessionpipe_tail_files_skipped_total", "counter", "Files skipped as not transcripts.", s.Skipped},
		{"sessionpipe_tail_lines_read_total", "counter", "Lines read.", s.Lines},
		{"sessionpipe_tail_bytes_read_total", "counter", "Bytes of lines read.", s.Bytes},
		{"sessionpipe_tail_messages_sent_total", "counter", "Messages handed to the publisher.", s.Sent},
		{"sessionpipe_tail_entries_published_total", "counter", "Messages acknowledged by JetStream.", s.Acked},
		{"sessionpipe_tail_bad_lines_total", "counter", "Lines sent to the dead-letter subject.", s.BadLines},
		{"sessionpipe_tail_entries_truncated_total", "counter", "Entries shortened to fit a message.", s.Truncated},
		{"sessionpipe_tail_publish_errors_total", "counter", "Messages that completed with an error.", s.PublishErrors},
		{"sessionpipe_tail_read_errors_total", "counter", "Failed reads of a file.", s.ReadErrors},
		{"sessionpipe_tail_rewrites_total", "counter", "Files read again after truncation or replacement.", s.Rewrites},
		{"sessionpipe_tail_renames_total", "counter", "Files followed across a rename.", s.Renames},
		{"sessionpipe_tail_watch_errors_total", "counter", "Directories that could not be watched.", s.WatchErrors},
		{"sessionpipe_tail_watched_dirs", "gauge", "Directories with a file-notification watch.", s.WatchedDirs},
		{"sessionpipe_tail_lag_bytes", "gauge", "Bytes written to followed files and not yet acknowledged.", s.LagBytes},
	}
	var n int64
	for _, r := range rows {
		k, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %d\n", r.name, r.help, r.name, r.typ, r.name, r.v)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
