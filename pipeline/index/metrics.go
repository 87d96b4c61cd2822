package index

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultMetricSeries bounds the (host, model) pairs of the labelled
// metrics of /metrics; see [APIConfig.MetricSeries].
const DefaultMetricSeries = 100

// otherValue is the label value under which the pairs past the bound are
// counted.
const otherValue = "other"

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
// calls by host and model are the API's (see [APIConfig.MetricSeries]).
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

// hostModelCollector collects the tokens, cost and calls by host and
// model, bounded by its seriesLimit, and how many pairs were folded.
type hostModelCollector struct {
	ix    *Indexer
	limit *seriesLimit
}

var (
	foldedDesc = prometheus.NewDesc("sessionpipe_index_metric_pairs_folded",
		`(host, model) pairs counted under host="other", model="other" in the tokens, cost and calls metrics, past their bound of series.`, nil, nil)
	tokensDesc = prometheus.NewDesc("sessionpipe_tokens_total",
		"Tokens of the API calls counted, by host, model and type.", []string{"host", "model", "type"}, nil)
	costDesc = prometheus.NewDesc("sessionpipe_cost_usd_total",
		"Cost of the priced API calls counted, by host and model.", []string{"host", "model"}, nil)
	callsDesc = prometheus.NewDesc("sessionpipe_api_calls_total",
		"API calls counted, by host and model.", []string{"host", "model"}, nil)
)

func (c hostModelCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- foldedDesc
	ch <- tokensDesc
	ch <- costDesc
	ch <- callsDesc
}

func (c hostModelCollector) Collect(ch chan<- prometheus.Metric) {
	totals, folded := c.limit.fold(c.ix.hostModelTotals())
	ch <- prometheus.MustNewConstMetric(foldedDesc, prometheus.GaugeValue, float64(folded))
	for k, t := range totals {
		for _, v := range []struct {
			typ string
			n   int64
		}{{"input", t.Input}, {"output", t.Output}, {"cache_read", t.CacheRead}, {"cache_write", t.CacheWrite}} {
			ch <- prometheus.MustNewConstMetric(tokensDesc, prometheus.CounterValue, float64(v.n), k.host, k.model, v.typ)
		}
		ch <- prometheus.MustNewConstMetric(costDesc, prometheus.CounterValue, usd(t.Cost), k.host, k.model)
		ch <- prometheus.MustNewConstMetric(callsDesc, prometheus.CounterValue, float64(t.Calls), k.host, k.model)
	}
}

// seriesLimit chooses which (host, model) pairs have series of their own:
// at most max-1, the rest summed under host="other", model="other" (with
// the real pair of those names, if there is one). A pair
// chosen stays chosen (its counters do not jump into "other" and back as
// the ranking moves); the first choice, and the pairs chosen while there
// is room, go by tokens, largest first. Safe for concurrent use.
type seriesLimit struct {
	mu   sync.Mutex
	max  int
	kept map[hostModel]bool
}

func newSeriesLimit(max int) *seriesLimit {
	return &seriesLimit{max: max, kept: make(map[hostModel]bool)}
}

// fold returns the totals to write, at most l.max pairs, and how many
// pairs were folded into the "other" one.
func (l *seriesLimit) fold(totals map[hostModel]hmTotals) (map[hostModel]hmTotals, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var fresh []hostModel
	for k := range totals {
		if !l.kept[k] {
			fresh = append(fresh, k)
		}
	}
	if room := l.max - 1 - len(l.kept); room > 0 {
		slices.SortFunc(fresh, func(x, y hostModel) int {
			tx, ty := totals[x], totals[y]
			if c := cmp.Compare(allTokens(ty), allTokens(tx)); c != 0 {
				return c
			}
			return cmp.Or(cmp.Compare(x.host, y.host), cmp.Compare(x.model, y.model))
		})
		for _, k := range fresh[:min(room, len(fresh))] {
			l.kept[k] = true
		}
	}
	out := make(map[hostModel]hmTotals, l.max)
	other := hostModel{otherValue, otherValue}
	folded := 0
	for k, t := range totals {
		if !l.kept[k] {
			k = other
			folded++
		}
		o := out[k]
		o.Calls = addSat(o.Calls, t.Calls)
		o.Input = addSat(o.Input, t.Input)
		o.Output = addSat(o.Output, t.Output)
		o.CacheRead = addSat(o.CacheRead, t.CacheRead)
		o.CacheWrite = addSat(o.CacheWrite, t.CacheWrite)
		o.Cost = addSat(o.Cost, t.Cost)
		out[k] = o
	}
	return out, folded
}

// allTokens is the ranking of a pair: its tokens of every type.
func allTokens(t hmTotals) int64 {
	return addSat(addSat(t.Input, t.Output), addSat(t.CacheRead, t.CacheWrite))
}
