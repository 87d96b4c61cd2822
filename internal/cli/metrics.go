package cli

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// NewRegistry returns a daemon's metrics registry with the process's
// metrics on it: the Go runtime's (go_*) and the process's (process_*).
// A process registers them once: `sessionpipe run` gives its tailer and
// exporter plain registries and serves them beside the indexer's.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// MetricsHandler serves g in the Prometheus exposition format. A
// collector that fails is logged and left out; the others are served.
func MetricsHandler(g prometheus.Gatherer, log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// publisherCollector collects a publisher's counters (sessionpipe_publish_*).
type publisherCollector struct{ p *bus.Publisher }

var publisherDescs = []struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(bus.Stats) float64
}{
	{prometheus.NewDesc("sessionpipe_publish_accepted_total", "Messages accepted by the publisher.", nil, nil), prometheus.CounterValue, func(s bus.Stats) float64 { return float64(s.Published) }},
	{prometheus.NewDesc("sessionpipe_publish_acked_total", "Messages acknowledged by JetStream.", nil, nil), prometheus.CounterValue, func(s bus.Stats) float64 { return float64(s.Acked) }},
	{prometheus.NewDesc("sessionpipe_publish_duplicates_total", "Messages JetStream dropped as duplicates.", nil, nil), prometheus.CounterValue, func(s bus.Stats) float64 { return float64(s.Duplicates) }},
	{prometheus.NewDesc("sessionpipe_publish_retries_total", "Messages sent again after a failure.", nil, nil), prometheus.CounterValue, func(s bus.Stats) float64 { return float64(s.Retries) }},
	{prometheus.NewDesc("sessionpipe_publish_errors_total", "Publish attempts that failed (and were retried).", nil, nil), prometheus.CounterValue, func(s bus.Stats) float64 { return float64(s.Errors) }},
	{prometheus.NewDesc("sessionpipe_publish_failed_total", "Messages given up (context ended or refused).", nil, nil), prometheus.CounterValue, func(s bus.Stats) float64 { return float64(s.Failed) }},
	{prometheus.NewDesc("sessionpipe_publish_in_flight", "Messages sent and not yet acknowledged.", nil, nil), prometheus.GaugeValue, func(s bus.Stats) float64 { return float64(s.InFlight) }},
	{prometheus.NewDesc("sessionpipe_publish_in_flight_bytes", "Size of the messages sent and not yet acknowledged.", nil, nil), prometheus.GaugeValue, func(s bus.Stats) float64 { return float64(s.InFlightBytes) }},
}

func (c publisherCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range publisherDescs {
		ch <- d.desc
	}
}

func (c publisherCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.p.Stats()
	for _, d := range publisherDescs {
		ch <- prometheus.MustNewConstMetric(d.desc, d.typ, d.value(s))
	}
}

// listenerCollector collects a server's connections open and refused
// (sessionpipe_http_*).
type listenerCollector struct{ l *limitListener }

var (
	connectionsDesc = prometheus.NewDesc("sessionpipe_http_connections", "HTTP connections open.", nil, nil)
	refusedDesc     = prometheus.NewDesc("sessionpipe_http_connections_refused_total",
		"HTTP connections closed as soon as accepted, past the bound of connections in all or per client address.", []string{"limit"}, nil)
)

func (c listenerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- connectionsDesc
	ch <- refusedDesc
}

func (c listenerCollector) Collect(ch chan<- prometheus.Metric) {
	c.l.mu.Lock()
	open, refused, refusedBy := c.l.open, c.l.refused, c.l.refusedBy
	c.l.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(connectionsDesc, prometheus.GaugeValue, float64(open))
	ch <- prometheus.MustNewConstMetric(refusedDesc, prometheus.CounterValue, float64(refused), "total")
	ch <- prometheus.MustNewConstMetric(refusedDesc, prometheus.CounterValue, float64(refusedBy), "per_client")
}

// Register adds the server's metrics (connections open and refused) to
// reg; a nil Server adds nothing. A registry takes one server's.
func (s *Server) Register(reg prometheus.Registerer) error {
	if s == nil {
		return nil
	}
	if err := reg.Register(listenerCollector{s.ln}); err != nil {
		return fmt.Errorf("register the metrics of the server on %s: %w", s.Addr(), err)
	}
	return nil
}

// ListenWithMetrics is [Listen], the server's metrics registered on reg.
func ListenWithMetrics(addr string, handler http.Handler, reg prometheus.Registerer) (*Server, error) {
	s, err := Listen(addr, handler)
	if err != nil || s == nil {
		return s, err
	}
	if err := s.Register(reg); err != nil {
		s.ln.Close()
		return nil, err
	}
	return s, nil
}
