package index_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
)

// histogramOf returns the sample count and sum of the histogram name in
// g, an error while it has none.
func histogramOf(g prometheus.Gatherer, name string) (uint64, float64, error) {
	mfs, err := g.Gather()
	if err != nil {
		return 0, 0, err
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum(), nil
		}
	}
	return 0, 0, errors.New("no " + name)
}

// Every entry applied is one observation of the publication→applied
// latency, and every alert fired one of the written→alert latency, on
// the registry the config names; /metrics serves both, and the
// api.Config's Metrics after them.
func TestIndexer_LatencyHistograms(t *testing.T) {
	const calls = 5
	written := time.Now().Add(-2 * time.Second)
	entries := indextest.CallsOfModels(calls)
	for _, e := range entries {
		e.TS = written // each 11 tokens: the session passes 15 at its second call
	}
	rules, err := alert.Parse("rules.yaml", []byte("rules:\n  - name: s\n    scope: session\n    metric: total_tokens\n    above: 15\n"))
	require.NoError(t, err)
	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, entries)
	reg := prometheus.NewRegistry()
	ix, _ := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), Rules: rules, AlertMaxLag: -1,
		CommitInterval: 10 * time.Millisecond, Registry: reg})
	indextest.WaitApplied(t, ix, last)

	natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		n, sum, err := histogramOf(reg, "sessionpipe_index_apply_latency_seconds")
		if err != nil {
			return err
		}
		if n != calls {
			return fmt.Errorf("%d observations of %d entries", n, calls)
		}
		require.GreaterOrEqual(t, sum, 0.0)
		require.Less(t, sum/calls, 30.0, "seconds from publication to applied, on average")
		return nil
	})
	fired := ix.Stats().Alerts
	require.Positive(t, fired)
	n, sum, err := histogramOf(reg, "sessionpipe_alert_latency_seconds")
	require.NoError(t, err)
	require.Equal(t, fired, n, "one observation per alert fired")
	require.GreaterOrEqual(t, sum/float64(n), 2.0, "the entry was written 2 s before it was published")
	require.Less(t, sum/float64(n), 60.0)

	more := prometheus.NewRegistry()
	more.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "more_metric", Help: "A metric of the process."}, func() float64 { return 7 }))
	code, body := indextest.Do(t, api.Handler(ix, api.Config{Metrics: more}), "localhost", "/metrics", "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, fmt.Sprintf("\nsessionpipe_index_apply_latency_seconds_count %d\n", calls))
	require.Contains(t, body, fmt.Sprintf("\nsessionpipe_alert_latency_seconds_count %d\n", fired))
	require.Contains(t, body, "\nsessionpipe_index_entries_total 5\n")
	require.Contains(t, body, "\nmore_metric 7\n")

	// A registry takes one indexer.
	_, err = index.NewIndexer(index.IndexerConfig{JS: js, Dir: t.TempDir(), Registry: reg})
	require.ErrorContains(t, err, "register the indexer's metrics")
}
