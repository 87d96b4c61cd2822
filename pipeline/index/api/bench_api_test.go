package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// startIndexer runs an indexer until the benchmark or test ends and
// waits until it serves.
func startIndexer(tb testing.TB, cfg index.IndexerConfig) *index.Indexer {
	tb.Helper()
	ix, err := index.NewIndexer(cfg)
	require.NoError(tb, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = ix.Run(ctx) })
	tb.Cleanup(func() { cancel(); wg.Wait() })
	select {
	case <-ix.Ready():
	case <-time.After(5 * time.Minute):
		tb.Fatal("indexer not ready")
	}
	return ix
}

// BenchmarkAPI_100k measures the requests of the dashboard's first
// screen through the HTTP handler (JSON encoding included) on a state of
// 100,000 sessions (buildState), as the page makes them: range "all"
// (the chart by day and model, the first page of sessions with its
// total), the 7 days and today, the opening probe of the last 7 days, a
// search, the alerts, and the page and chart library themselves.
func BenchmarkAPI_100k(b *testing.B) {
	const n = 100_000
	dir := b.TempDir()
	end := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	start := time.Now()
	indextest.BuildState(b, dir, n, end)
	b.Logf("built a state of %d sessions in %s", n, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	ix := startIndexer(b, index.IndexerConfig{JS: indextest.NewStream(b, bus.StreamConfig{}), Dir: dir, Pricer: price.Default()})
	b.Logf("the indexer opened it in %s", time.Since(start).Round(time.Millisecond))
	h := api.Handler(ix, api.Config{})
	const tz = "Europe/Berlin"
	day := func(d time.Time) string { return d.Format(time.DateOnly) }
	today, week := day(end), day(end.AddDate(0, 0, -6))
	q := func(path string, kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return path + "?" + v.Encode()
	}
	cases := []struct{ name, path string }{
		{"usage=all-by-day-and-model", q("/api/usage", "group_by", "model", "bucket", "day", "tz", tz)},
		{"sessions=all-first-page", q("/api/sessions", "sort", "last_ts", "limit", "25", "tz", tz)},
		{"usage=7d-by-day-and-model", q("/api/usage", "group_by", "model", "bucket", "day", "since", week, "until", today, "tz", tz)},
		{"sessions=7d-first-page", q("/api/sessions", "sort", "last_ts", "since", week, "until", today, "limit", "25", "tz", tz)},
		{"usage=today-by-hour-and-model", q("/api/usage", "group_by", "model", "bucket", "hour", "since", today, "until", today, "tz", tz)},
		{"usage=7d-probe-by-day", q("/api/usage", "group_by", "day", "since", week, "tz", tz)},
		{"usage=all-probe-by-day", q("/api/usage", "group_by", "day", "tz", tz)},
		{"sessions=all-by-cost", q("/api/sessions", "sort", "cost_usd", "limit", "25", "tz", tz)},
		{"sessions=search", q("/api/sessions", "q", "project-17", "sort", "last_ts", "limit", "25", "tz", tz)},
		{"alerts", q("/api/alerts", "limit", "20")},
		{"page", "/"},
		{"asset=uplot.min.js", "/assets/uplot.min.js"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			get := func() *httptest.ResponseRecorder {
				req := httptest.NewRequest(http.MethodGet, c.path, nil)
				req.Host = "127.0.0.1:7474"
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				return w
			}
			w := get()
			require.Equal(b, http.StatusOK, w.Code, "%s: %s", c.path, w.Body.String())
			b.ReportAllocs()
			b.SetBytes(int64(w.Body.Len()))
			for b.Loop() {
				get()
			}
		})
	}
}
