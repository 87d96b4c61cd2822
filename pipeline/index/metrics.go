package index

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Buckets of the latency histograms, in seconds.
var (
	// Publication → applied: milliseconds when the indexer keeps up; the
	// upper buckets show a backlog (a restart, a stand-by taking over).
	applyLatencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
	// Written by the agent → alert fired: the tailer's notice of the
	// write, its batch, the stream and the indexer; minutes mean a late
	// file (a host offline) or a backlog.
	alertLatencyBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}
)

// indexerMetrics are the indexer's histograms.
type indexerMetrics struct {
	applyLatency prometheus.Histogram
	alertLatency prometheus.Histogram
}

// register adds the indexer's metrics to reg: its counters (read from
// [Indexer.Stats] when scraped) and its histograms. The tokens, cost and
// calls by host and model are the API's (see api.Config.MetricSeries in pipeline/index/api).
func (ix *Indexer) register(reg prometheus.Registerer) error {
	ix.metrics = indexerMetrics{
		applyLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sessionpipe_index_apply_latency_seconds",
			Help:    "Time from an entry's publication (the stream's store time) to its application by the indexer.",
			Buckets: applyLatencyBuckets,
		}),
		alertLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sessionpipe_alert_latency_seconds",
			Help:    "Time from the writing of the entry that fired an alert (its timestamp in the transcript) to the alert.",
			Buckets: alertLatencyBuckets,
		}),
	}
	cs := []prometheus.Collector{ix.metrics.applyLatency, ix.metrics.alertLatency}
	for _, r := range []struct {
		name  string
		gauge bool
		help  string
		v     func(s *IndexerStats) uint64
	}{
		{"sessionpipe_index_applied_seq", true, "Last stream sequence applied.", func(s *IndexerStats) uint64 { return s.Applied }},
		{"sessionpipe_index_committed_seq", true, "Last stream sequence committed to the state.", func(s *IndexerStats) uint64 { return s.Committed }},
		{"sessionpipe_index_lag_messages", true, "Entries in the stream not yet received by the indexer.", func(s *IndexerStats) uint64 { return s.Consumer.Pending }},
		{"sessionpipe_index_entries_total", false, "Entries applied since start.", func(s *IndexerStats) uint64 { return s.Entries }},
		{"sessionpipe_index_redelivered_skipped_total", false, "Redelivered entries skipped as applied.", func(s *IndexerStats) uint64 { return s.Skipped }},
		{"sessionpipe_index_gap_messages_total", false, "Entries that aged out of the stream before they were indexed.", func(s *IndexerStats) uint64 { return s.GapMessages }},
		{"sessionpipe_index_undecodable_total", false, "Stream messages skipped as undecodable.", func(s *IndexerStats) uint64 { return s.Consumer.Undecodable }},
		{"sessionpipe_index_forged_total", false, "Entries skipped because their body names another host or format than their subject.", func(s *IndexerStats) uint64 { return s.Forged }},
		{"sessionpipe_index_rebuilds_total", false, "States discarded as belonging to another stream.", func(s *IndexerStats) uint64 { return s.Rebuilds }},
		{"sessionpipe_index_reprices_total", false, "States rebuilt from the stream because the price table changed.", func(s *IndexerStats) uint64 { return s.Reprices }},
		{"sessionpipe_alerts_fired_total", false, "Alerts fired since start.", func(s *IndexerStats) uint64 { return s.Alerts }},
		{"sessionpipe_index_active", true, "1 while this indexer holds its consumer's lease and applies the stream, 0 while it stands by.", func(s *IndexerStats) uint64 {
			if s.Active {
				return 1
			}
			return 0
		}},
	} {
		v := func() float64 {
			s := ix.Stats()
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
			return fmt.Errorf("register the indexer's metrics: %w", err)
		}
	}
	return nil
}

// observeAlerts records the latency of the alerts an entry written at
// written fired.
func (m *indexerMetrics) observeAlerts(n int, written time.Time) {
	if n == 0 || written.IsZero() {
		return
	}
	d := max(time.Since(written), 0).Seconds() // an agent's clock may be ahead
	for range n {
		m.alertLatency.Observe(d)
	}
}
