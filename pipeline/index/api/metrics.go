package api

import (
	"cmp"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// DefaultMetricSeries bounds the (host, model) pairs of the labelled
// metrics of /metrics; see [Config.MetricSeries].
const DefaultMetricSeries = 100

// otherValue is the label value under which the pairs past the bound are
// counted.
const otherValue = "other"

// hostModelCollector collects the tokens, cost and calls by host and
// model, bounded by its seriesLimit, and how many pairs were folded.
type hostModelCollector struct {
	ix    *index.Indexer
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
	totals, folded := c.limit.fold(byPair(c.ix.ModelTotals()))
	ch <- prometheus.MustNewConstMetric(foldedDesc, prometheus.GaugeValue, float64(folded))
	for k, t := range totals {
		for _, v := range []struct {
			typ string
			n   int64
		}{{"input", t.Input}, {"output", t.Output}, {"cache_read", t.CacheRead}, {"cache_write", t.CacheWrite}} {
			ch <- prometheus.MustNewConstMetric(tokensDesc, prometheus.CounterValue, float64(v.n), k.host, k.model, v.typ)
		}
		ch <- prometheus.MustNewConstMetric(costDesc, prometheus.CounterValue, t.CostUSD(), k.host, k.model)
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
func (l *seriesLimit) fold(totals map[hostModel]index.ModelTotals) (map[hostModel]index.ModelTotals, int) {
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
	out := make(map[hostModel]index.ModelTotals, l.max)
	other := hostModel{otherValue, otherValue}
	folded := 0
	for k, t := range totals {
		if !l.kept[k] {
			k = other
			folded++
		}
		o := out[k]
		o.Add(t)
		out[k] = o
	}
	return out, folded
}

// allTokens is the ranking of a pair: its tokens of every type.
func allTokens(t index.ModelTotals) int64 {
	return t.Tokens()
}

// hostModel keys the running totals of the metrics.
type hostModel struct{ host, model string }

// byPair keys the totals by host and model.
func byPair(list []index.ModelTotals) map[hostModel]index.ModelTotals {
	m := make(map[hostModel]index.ModelTotals, len(list))
	for _, t := range list {
		m[hostModel{t.Host, t.Model}] = t
	}
	return m
}
