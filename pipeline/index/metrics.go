package index

import (
	"cmp"
	"slices"
	"sync"

	"github.com/sessionpipe/sessionpipe/internal/prom"
)

// DefaultMetricSeries bounds the (host, model) pairs of the labelled
// metrics of /metrics; see [APIConfig.MetricSeries].
const DefaultMetricSeries = 100

// otherValue is the label value under which the pairs past the bound are
// counted.
const otherValue = "other"

// WriteMetrics renders the indexer's metrics: tokens and cost by host
// and model, the applied and committed sequences, consumer lag, alerts.
// The (host, model) pairs are bounded by [DefaultMetricSeries], the
// largest kept; the API's /metrics bounds them as its config says and
// keeps the pairs it chose from one scrape to the next.
func (ix *Indexer) WriteMetrics(w *prom.Writer) {
	ix.writeMetrics(w, newSeriesLimit(DefaultMetricSeries))
}

func (ix *Indexer) writeMetrics(w *prom.Writer, limit *seriesLimit) {
	s := ix.Stats()
	w.Int("sessionpipe_index_applied_seq", prom.Gauge, "Last stream sequence applied.", int64(s.Applied))
	w.Int("sessionpipe_index_committed_seq", prom.Gauge, "Last stream sequence committed to the state.", int64(s.Committed))
	w.Int("sessionpipe_index_lag_messages", prom.Gauge, "Entries in the stream not yet received by the indexer.", int64(s.Consumer.Pending))
	w.Int("sessionpipe_index_entries_total", prom.Counter, "Entries applied since start.", int64(s.Entries))
	w.Int("sessionpipe_index_redelivered_skipped_total", prom.Counter, "Redelivered entries skipped as applied.", int64(s.Skipped))
	w.Int("sessionpipe_index_gap_messages_total", prom.Counter, "Entries that aged out of the stream before they were indexed.", int64(s.GapMessages))
	w.Int("sessionpipe_index_undecodable_total", prom.Counter, "Stream messages skipped as undecodable.", int64(s.Consumer.Undecodable))
	w.Int("sessionpipe_index_forged_total", prom.Counter, "Entries skipped because their body names another host or format than their subject.", int64(s.Forged))
	w.Int("sessionpipe_index_rebuilds_total", prom.Counter, "States discarded as belonging to another stream.", int64(s.Rebuilds))
	w.Int("sessionpipe_index_reprices_total", prom.Counter, "States rebuilt from the stream because the price table changed.", int64(s.Reprices))
	w.Int("sessionpipe_alerts_fired_total", prom.Counter, "Alerts fired since start.", int64(s.Alerts))
	active := int64(0)
	if s.Active {
		active = 1
	}
	w.Int("sessionpipe_index_active", prom.Gauge, "1 while this indexer holds its consumer's lease and applies the stream, 0 while it stands by.", active)
	totals, folded := limit.fold(ix.hostModelTotals())
	w.Int("sessionpipe_index_metric_pairs_folded", prom.Gauge,
		`(host, model) pairs counted under host="other", model="other" in the tokens, cost and calls metrics, past their bound of series.`, int64(folded))
	tokens := make([]prom.Sample, 0, 4*len(totals))
	cost := make([]prom.Sample, 0, len(totals))
	calls := make([]prom.Sample, 0, len(totals))
	for k, t := range totals {
		labels := func(kind string) []prom.Label {
			l := []prom.Label{{Name: "host", Value: k.host}, {Name: "model", Value: k.model}}
			if kind != "" {
				l = append(l, prom.Label{Name: "type", Value: kind})
			}
			return l
		}
		tokens = append(tokens,
			prom.Sample{Labels: labels("input"), Value: float64(t.Input)},
			prom.Sample{Labels: labels("output"), Value: float64(t.Output)},
			prom.Sample{Labels: labels("cache_read"), Value: float64(t.CacheRead)},
			prom.Sample{Labels: labels("cache_write"), Value: float64(t.CacheWrite)})
		cost = append(cost, prom.Sample{Labels: labels(""), Value: usd(t.Cost)})
		calls = append(calls, prom.Sample{Labels: labels(""), Value: float64(t.Calls)})
	}
	w.Family("sessionpipe_tokens_total", prom.Counter, "Tokens of the API calls counted, by host, model and type.", tokens...)
	w.Family("sessionpipe_cost_usd_total", prom.Counter, "Cost of the priced API calls counted, by host and model.", cost...)
	w.Family("sessionpipe_api_calls_total", prom.Counter, "API calls counted, by host and model.", calls...)
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
