package index

import (
	"encoding/json"
	"sync"

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

type subscriber struct{ c chan LiveEvent }

// LiveEvent is an event of the live feed ([Indexer.Subscribe]).
type LiveEvent struct {
	Kind string // "session" (a session changed, after a commit) or "alert"
	Data []byte // JSON: the Session or the alert.Event
}

// subscriberBuffer is how many events a slow subscriber may have queued.
const subscriberBuffer = 1024

func newHub() *hub { return &hub{subs: make(map[*subscriber]struct{}), done: make(chan struct{})} }

func (h *hub) subscribe() *subscriber {
	s := &subscriber{c: make(chan LiveEvent, subscriberBuffer)}
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
		case s.c <- LiveEvent{Kind: kind, Data: data}:
		default:
			delete(h.subs, s)
			close(s.c)
		}
	}
}

func (h *hub) close() { h.once.Do(func() { close(h.done) }) }

// Subscribe subscribes to the live feed: session updates after each
// commit and alerts, as JSON. A subscriber that does not keep up (more
// than 1,024 events queued) is dropped: its channel is closed. Call cancel when done (it closes the channel too, if still
// open). Stopped is closed when the indexer stops.
func (ix *Indexer) Subscribe() (events <-chan LiveEvent, cancel func()) {
	s := ix.hub.subscribe()
	return s.c, func() { ix.hub.unsubscribe(s) }
}

// Stopped is closed when the indexer stops: the live feed ends.
func (ix *Indexer) Stopped() <-chan struct{} { return ix.hub.done }

// hostModel keys the running totals of the metrics.
type hostModel struct{ host, model string }

// ModelTotals are the running sums of the API calls of one host and
// model ([Indexer.ModelTotals]), kept across restarts; Cost is in
// nano-dollars.
type ModelTotals struct {
	Host       string `json:"host"`
	Model      string `json:"model"`
	Calls      int64  `json:"calls"`
	Input      int64  `json:"input"`
	Output     int64  `json:"output"`
	CacheRead  int64  `json:"cache_read"`
	CacheWrite int64  `json:"cache_write"`
	Cost       int64  `json:"cost_nano_usd"`
}

// Add adds o's counts to t, each saturated at the int64 limits as the
// index sums tokens and cost.
func (t *ModelTotals) Add(o ModelTotals) {
	t.Calls = addSat(t.Calls, o.Calls)
	t.Input = addSat(t.Input, o.Input)
	t.Output = addSat(t.Output, o.Output)
	t.CacheRead = addSat(t.CacheRead, o.CacheRead)
	t.CacheWrite = addSat(t.CacheWrite, o.CacheWrite)
	t.Cost = addSat(t.Cost, o.Cost)
}

// Tokens is t's tokens of every type, saturated.
func (t ModelTotals) Tokens() int64 {
	return addSat(addSat(t.Input, t.Output), addSat(t.CacheRead, t.CacheWrite))
}

// CostUSD is t's cost in dollars.
func (t ModelTotals) CostUSD() float64 { return usd(t.Cost) }

// metaTotals is the meta name of the running totals.
const metaTotals = "totals"

// count adds a usage change to the running totals; ix.mu is held.
func (ix *Indexer) count(c UsageChange) {
	k := hostModel{c.Host, c.Model}
	t := ix.totals[k]
	if t == nil {
		t = &ModelTotals{Host: c.Host, Model: c.Model}
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

// ModelTotals returns a copy of the running sums by host and model, in
// no order (the API's metrics of tokens, cost and calls).
func (ix *Indexer) ModelTotals() []ModelTotals {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := make([]ModelTotals, 0, len(ix.totals))
	for _, t := range ix.totals {
		out = append(out, *t)
	}
	return out
}

// encodeTotals is the meta value of the running totals.
func (ix *Indexer) encodeTotals() ([]byte, error) {
	list := make([]*ModelTotals, 0, len(ix.totals))
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
	var list []*ModelTotals
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
