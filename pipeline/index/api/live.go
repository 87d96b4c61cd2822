package api

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// streamLimit bounds the event streams open at once, in all and per
// client address: each holds a connection, a goroutine and a buffer of
// subscriberBuffer events.
type streamLimit struct {
	max, perClient int

	mu       sync.Mutex
	open     int
	byClient map[string]int
	refused  uint64
}

func newStreamLimit(max, perClient int) *streamLimit {
	return &streamLimit{max: max, perClient: perClient, byClient: make(map[string]int)}
}

// acquire takes a stream for client, or says which bound it is past.
func (l *streamLimit) acquire(client string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.byClient[client] >= l.perClient:
		l.refused++
		return fmt.Errorf("too many event streams from %s: at most %d at once", client, l.perClient)
	case l.open >= l.max:
		l.refused++
		return fmt.Errorf("too many event streams: at most %d at once", l.max)
	}
	l.open++
	l.byClient[client]++
	return nil
}

// release gives back a stream acquire took.
func (l *streamLimit) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byClient[client]--; l.byClient[client] <= 0 {
		delete(l.byClient, client)
	}
}

// streamsCollector collects the event streams open and refused.
type streamsCollector struct{ l *streamLimit }

var (
	streamsDesc = prometheus.NewDesc("sessionpipe_index_event_streams",
		"Server-sent event streams (GET /api/events) open.", nil, nil)
	streamsRefusedDesc = prometheus.NewDesc("sessionpipe_index_event_streams_refused_total",
		"Event streams refused (429) past their bound, in all or per client.", nil, nil)
)

func (c streamsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- streamsDesc
	ch <- streamsRefusedDesc
}

func (c streamsCollector) Collect(ch chan<- prometheus.Metric) {
	c.l.mu.Lock()
	open, refused := c.l.open, c.l.refused
	c.l.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(streamsDesc, prometheus.GaugeValue, float64(open))
	ch <- prometheus.MustNewConstMetric(streamsRefusedDesc, prometheus.CounterValue, float64(refused))
}
