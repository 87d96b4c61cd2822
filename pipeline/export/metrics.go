package export

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// register adds the exporter's metrics to reg, read from [Exporter.Stats]
// when scraped.
func (x *Exporter) register(reg prometheus.Registerer) error {
	var cs []prometheus.Collector
	for _, r := range []struct {
		name  string
		gauge bool
		help  string
		v     func(s *ExporterStats) int64
	}{
		{"sessionpipe_export_active", true, "1 when this exporter holds its consumer's lease, 0 standing by.", func(s *ExporterStats) int64 {
			if s.Active {
				return 1
			}
			return 0
		}},
		{"sessionpipe_export_committed_seq", true, "Every stream message up to this sequence is committed.", func(s *ExporterStats) int64 { return int64(s.Committed) }},
		{"sessionpipe_export_pending_messages", true, "Messages of the stream not yet received (lag).", func(s *ExporterStats) int64 { return int64(s.Pending) }},
		{"sessionpipe_export_files_total", false, "Parquet files committed.", func(s *ExporterStats) int64 { return s.Files }},
		{"sessionpipe_export_rows_total", false, "Rows in committed Parquet files.", func(s *ExporterStats) int64 { return s.Rows }},
		{"sessionpipe_export_bytes_total", false, "Bytes of committed Parquet files.", func(s *ExporterStats) int64 { return s.Bytes }},
		{"sessionpipe_export_archive_segments_total", false, "Archive segments committed.", func(s *ExporterStats) int64 { return s.Segments }},
		{"sessionpipe_export_archive_raw_bytes_total", false, "Original transcript bytes archived.", func(s *ExporterStats) int64 { return s.RawBytes }},
		{"sessionpipe_export_archive_bytes_total", false, "Bytes of committed archive segments.", func(s *ExporterStats) int64 { return s.ArchiveBytes }},
		{"sessionpipe_export_forged_total", false, "Messages skipped: their body names another host than their subject.", func(s *ExporterStats) int64 { return s.Forged }},
		{"sessionpipe_export_gap_messages_total", false, "Stream messages gone before they were exported.", func(s *ExporterStats) int64 { return s.GapMessages }},
		{"sessionpipe_export_undecodable_total", false, "Messages that could not be decoded.", func(s *ExporterStats) int64 { return s.Undecodable }},
		{"sessionpipe_export_commit_errors_total", false, "Failed writes or commits (retried).", func(s *ExporterStats) int64 { return s.CommitErrors }},
		{"sessionpipe_export_raw_purged_seq", true, "Original lines up to this sequence are purged from the stream, archived (-purge-archived).", func(s *ExporterStats) int64 { return int64(s.PurgedSeq) }},
		{"sessionpipe_export_raw_purge_blocked", true, "1 when another durable consumer reads the original lines, so that none are purged (-purge-archived).", func(s *ExporterStats) int64 {
			if s.PurgeBlocked {
				return 1
			}
			return 0
		}},
	} {
		v := func() float64 {
			s := x.Stats()
			return float64(r.v(&s))
		}
		if r.gauge {
			cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: r.name, Help: r.help}, v))
		} else {
			cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: r.name, Help: r.help}, v))
		}
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register the exporter's metrics: %w", err)
		}
	}
	return nil
}
