package index

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
)

// hub fans live events (session updates after each commit, alerts) out to
// the API's server-sent event streams. A subscriber that does not keep up
// is dropped (its channel closed) rather than slowing the indexer.
type hub struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
	done chan struct{} // closed when the indexer stops
	once sync.Once
}

type subscriber struct{ c chan hubEvent }

type hubEvent struct {
	kind string // "session" or "alert"
	data []byte // JSON
}

// subscriberBuffer is how many events a slow subscriber may have queued.
const subscriberBuffer = 1024

func newHub() *hub { return &hub{subs: make(map[*subscriber]struct{}), done: make(chan struct{})} }

func (h *hub) subscribe() *subscriber {
	s := &subscriber{c: make(chan hubEvent, subscriberBuffer)}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.c)
	}
	h.mu.Unlock()
}

// publish sends v to every subscriber; it never blocks.
func (h *hub) publish(kind string, v any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) == 0 {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	for s := range h.subs {
		select {
		case s.c <- hubEvent{kind: kind, data: data}:
		default:
			delete(h.subs, s)
			close(s.c)
		}
	}
}

func (h *hub) close() { h.once.Do(func() { close(h.done) }) }

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

// hostModel keys the running totals of the metrics.
type hostModel struct{ host, model string }

// hmTotals are the running sums of one host and model.
type hmTotals struct {
	Host       string `json:"host"`
	Model      string `json:"model"`
	Calls      int64  `json:"calls"`
	Input      int64  `json:"input"`
	Output     int64  `json:"output"`
	CacheRead  int64  `json:"cache_read"`
	CacheWrite int64  `json:"cache_write"`
	Cost       int64  `json:"cost_nano_usd"`
}

// metaTotals is the meta name of the running totals.
const metaTotals = "totals"

// count adds a usage change to the running totals; ix.mu is held.
func (ix *Indexer) count(c UsageChange) {
	k := hostModel{c.Host, c.Model}
	t := ix.totals[k]
	if t == nil {
		t = &hmTotals{Host: c.Host, Model: c.Model}
		ix.totals[k] = t
	}
	t.Calls += c.Sign
	t.Input = addSat(t.Input, c.Sign*c.Tokens.Input)
	t.Output = addSat(t.Output, c.Sign*c.Tokens.Output)
	t.CacheRead = addSat(t.CacheRead, c.Sign*c.Tokens.CacheRead)
	t.CacheWrite = addSat(t.CacheWrite, c.Sign*c.Tokens.CacheWrite)
	t.Cost = addSat(t.Cost, c.Sign*nanoUSD(c.CostUSD))
	ix.totalsDirty = true
}

// hostModelTotals returns a copy of the running totals.
func (ix *Indexer) hostModelTotals() map[hostModel]hmTotals {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := make(map[hostModel]hmTotals, len(ix.totals))
	for k, t := range ix.totals {
		out[k] = *t
	}
	return out
}

// encodeTotals is the meta value of the running totals.
func (ix *Indexer) encodeTotals() ([]byte, error) {
	list := make([]*hmTotals, 0, len(ix.totals))
	for _, t := range ix.totals {
		list = append(list, t)
	}
	return json.Marshal(list)
}

// restoreTotals reads the running totals of a state.
func (ix *Indexer) restoreTotals(st *store.Store) error {
	v, err := st.Meta(metaTotals)
	if err != nil || v == nil {
		return err
	}
	var list []*hmTotals
	if err := json.Unmarshal(v, &list); err != nil {
		return err
	}
	for _, t := range list {
		ix.totals[hostModel{t.Host, t.Model}] = t
	}
	return nil
}

// liveAlert is the alert hook: the hub and the caller's OnAlert.
func (ix *Indexer) liveAlert(e alert.Event) {
	ix.hub.publish("alert", e)
	if ix.cfg.OnAlert != nil {
		ix.cfg.OnAlert(e)
	}
}
