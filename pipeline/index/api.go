package index

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/prom"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
)

// The HTTP API of the indexer. Every answer is JSON (errors too:
// {"error": "..."} with the status that fits); GET /api/events is a
// stream of server-sent events for live views; GET /metrics is the
// Prometheus text format; GET / is the dashboard, one static HTML page
// that reads the others (see dashboard.go). With a token, every request
// but /healthz and the dashboard page itself (GET or HEAD of / and
// /index.html) must carry "Authorization: Bearer <token>".
//
//	GET /
//	GET /api/sessions?host=&format=&model=&project=&label=&since=&until=&sort=&limit=&cursor=
//	GET /api/sessions/{id}?format=
//	GET /api/usage?group_by=host|format|model|project|day|hour|label:<name>&since=&until=&host=&format=&model=&project=&label=
//	GET /api/alerts?limit=
//	GET /api/events
//	GET /healthz
//	GET /metrics
//
// Times (since, until) are RFC 3339 timestamps or YYYY-MM-DD dates (UTC;
// an until date is inclusive). A label filter is name:value, e.g.
// label=team:infra, and may be repeated: all must hold. It selects the
// sessions whose labels (Session.Labels) have them, and the calls whose
// entry's labels have them; group_by=label:team groups calls by the value
// of their entry's label team ("" for calls without it).

// APIConfig configures [Indexer.Handler].
type APIConfig struct {
	// Token, when set, is required as a bearer token on every request
	// but /healthz and the dashboard page (which holds no data: its
	// script asks the user for the token and sends it). The daemon
	// requires one when it listens on anything but a loopback address.
	Token string

	// Logger receives request failures at Debug; nil discards.
	Logger *slog.Logger
}

// Handler returns the HTTP API over the indexer's state, and the
// dashboard at /.
func (ix *Indexer) Handler(cfg APIConfig) http.Handler {
	a := &api{ix: ix, cfg: cfg, log: discard(cfg.Logger).With(KeyComponent, "index.api")}
	mux := http.NewServeMux()
	page := newDashboard(dashboardPage)
	mux.Handle("GET /{$}", page)
	mux.Handle("GET /index.html", page)
	mux.HandleFunc("GET /api/sessions", a.sessions)
	mux.HandleFunc("GET /api/sessions/{id}", a.session)
	mux.HandleFunc("GET /api/usage", a.usage)
	mux.HandleFunc("GET /api/alerts", a.alerts)
	mux.HandleFunc("GET /api/events", a.events)
	mux.HandleFunc("GET /healthz", a.health)
	mux.HandleFunc("GET /metrics", a.metrics)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		a.fail(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	return a.auth(mux)
}

type api struct {
	ix  *Indexer
	cfg APIConfig
	log *slog.Logger
}

func (a *api) auth(next http.Handler) http.Handler {
	if a.cfg.Token == "" {
		return next
	}
	want := []byte("Bearer " + a.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isPublic(r) && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sessionpipe"`)
			a.fail(w, http.StatusUnauthorized, errors.New("a bearer token is required"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isPublic reports whether r needs no token: health, and the dashboard
// page, which holds no data.
func isPublic(r *http.Request) bool {
	switch r.URL.Path {
	case "/healthz":
		return true
	case "/", "/index.html":
		return r.Method == http.MethodGet || r.Method == http.MethodHead
	}
	return false
}

// reply writes v as JSON.
func (a *api) reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		a.log.Debug("writing a response", KeyError, err)
	}
}

// fail writes an error as JSON; ErrNotReady is a 503.
func (a *api) fail(w http.ResponseWriter, status int, err error) {
	if errors.Is(err, ErrNotReady) {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	a.reply(w, status, map[string]string{"error": err.Error()})
}

// badRequest is an error in the request's parameters.
type badRequest struct{ err error }

func (b badRequest) Error() string { return b.err.Error() }

// answer writes v, or err with the status it calls for.
func (a *api) answer(w http.ResponseWriter, v any, err error) {
	var br badRequest
	switch {
	case errors.As(err, &br):
		a.fail(w, http.StatusBadRequest, err)
	case err != nil:
		a.fail(w, http.StatusInternalServerError, err)
	default:
		a.reply(w, http.StatusOK, v)
	}
}

func (a *api) sessions(w http.ResponseWriter, r *http.Request) {
	q, err := sessionQuery(r)
	if err != nil {
		a.answer(w, nil, err)
		return
	}
	page, next, err := a.ix.Query(q)
	if err != nil && !errors.Is(err, ErrNotReady) {
		err = badRequest{err} // Query fails on its parameters (sort, cursor) only
	}
	if errors.Is(err, ErrNotReady) {
		a.fail(w, 0, err)
		return
	}
	a.answer(w, struct {
		Sessions   []Session `json:"sessions"`
		NextCursor string    `json:"next_cursor,omitempty"`
	}{page, next}, err)
}

func sessionQuery(r *http.Request) (SessionQuery, error) {
	v := r.URL.Query()
	q := SessionQuery{Host: v.Get("host"), Format: v.Get("format"), Model: v.Get("model"), Project: v.Get("project"),
		Sort: SessionSort(v.Get("sort")), Cursor: v.Get("cursor")}
	var err error
	if q.Labels, err = labelFilters(v["label"]); err != nil {
		return q, err
	}
	if q.Since, err = parseTime("since", v.Get("since"), false); err != nil {
		return q, err
	}
	if q.Until, err = parseTime("until", v.Get("until"), true); err != nil {
		return q, err
	}
	if s := v.Get("limit"); s != "" {
		if q.Limit, err = strconv.Atoi(s); err != nil || q.Limit < 1 {
			return q, badRequest{fmt.Errorf("limit %q: want a positive number (at most %d)", s, MaxLimit)}
		}
	}
	return q, nil
}

// labelFilters reads the label filters of a request, nil when none.
func labelFilters(vs []string) (map[string]string, error) {
	if len(vs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(vs))
	for _, v := range vs {
		if err := ParseLabelFilter(m, v); err != nil {
			return nil, badRequest{err}
		}
	}
	return m, nil
}

// parseTime reads an RFC 3339 time or a YYYY-MM-DD date; an end date
// means the end of that day.
func parseTime(name, s string, end bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		if end {
			return d.Add(24*time.Hour - time.Nanosecond), nil
		}
		return d, nil
	}
	return time.Time{}, badRequest{fmt.Errorf("%s %q: want an RFC 3339 time or a YYYY-MM-DD date", name, s)}
}

func (a *api) session(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s, turns, found, err := a.ix.Session(r.URL.Query().Get("format"), id)
	switch {
	case err != nil:
		a.fail(w, http.StatusInternalServerError, err)
	case !found:
		a.fail(w, http.StatusNotFound, fmt.Errorf("session %q not found", id))
	default:
		if turns == nil {
			turns = []Turn{}
		}
		a.reply(w, http.StatusOK, struct {
			Session Session `json:"session"`
			Turns   []Turn  `json:"turns"`
		}{s, turns})
	}
}

func (a *api) usage(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	by := v.Get("group_by")
	if by == "" {
		by = string(ByDay)
	}
	g, err := ParseGroupBy(by)
	if err != nil {
		a.answer(w, nil, badRequest{err})
		return
	}
	q := UsageQuery{GroupBy: g, Host: v.Get("host"), Format: v.Get("format"), Model: v.Get("model"), Project: v.Get("project")}
	if q.Labels, err = labelFilters(v["label"]); err == nil {
		q.Since, err = parseTime("since", v.Get("since"), false)
	}
	if err == nil {
		q.Until, err = parseTime("until", v.Get("until"), true)
	}
	if err != nil {
		a.answer(w, nil, err)
		return
	}
	rows, err := a.ix.Usage(q)
	if errors.Is(err, ErrNotReady) {
		a.fail(w, 0, err)
		return
	}
	if rows == nil {
		rows = []UsageRow{}
	}
	a.answer(w, struct {
		GroupBy GroupBy    `json:"group_by"`
		Rows    []UsageRow `json:"rows"`
	}{g, rows}, err)
}

func (a *api) alerts(w http.ResponseWriter, r *http.Request) {
	limit := 0
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			a.answer(w, nil, badRequest{fmt.Errorf("limit %q: want a positive number", s)})
			return
		}
		limit = n
	}
	list := a.ix.Alerts(limit)
	if list == nil {
		list = []alert.Event{}
	}
	a.reply(w, http.StatusOK, struct {
		Alerts []alert.Event `json:"alerts"`
	}{list})
}

// events streams session updates (after each commit) and alerts as
// server-sent events until the client goes away or the server stops.
func (a *api) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		a.fail(w, http.StatusInternalServerError, errors.New("streaming unsupported"))
		return
	}
	sub := a.ix.hub.subscribe()
	defer a.ix.hub.unsubscribe(sub)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": sessionpipe live events\n\n")
	flusher.Flush()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-a.ix.hub.done:
			return
		case <-keepalive.C:
			fmt.Fprint(w, ": keepalive\n\n")
		case ev, ok := <-sub.c:
			if !ok {
				fmt.Fprint(w, "event: overflow\ndata: {\"error\":\"too slow: events were dropped, reconnect\"}\n\n")
				flusher.Flush()
				return
			}
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.kind, ev.data)
		}
		flusher.Flush()
	}
}

func (a *api) health(w http.ResponseWriter, _ *http.Request) {
	select {
	case <-a.ix.Ready():
	default:
		a.reply(w, http.StatusServiceUnavailable, map[string]string{"status": "starting"})
		return
	}
	s := a.ix.Stats()
	status, code := "ok", http.StatusOK
	if s.CommitError != "" {
		status, code = "failing: "+s.CommitError, http.StatusServiceUnavailable
	}
	role := "standby"
	if s.Active {
		role = "active"
	}
	a.reply(w, code, map[string]any{"status": status, "role": role, "applied_seq": s.Applied, "committed_seq": s.Committed,
		"pending": s.Consumer.Pending})
}

func (a *api) metrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", prom.ContentType)
	a.ix.WriteMetrics(prom.NewWriter(w))
}

// WriteMetrics renders the indexer's metrics: tokens and cost by host
// and model, the applied and committed sequences, consumer lag, alerts.
func (ix *Indexer) WriteMetrics(w *prom.Writer) {
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
	w.Int("sessionpipe_alerts_fired_total", prom.Counter, "Alerts fired since start.", int64(s.Alerts))
	active := int64(0)
	if s.Active {
		active = 1
	}
	w.Int("sessionpipe_index_active", prom.Gauge, "1 while this indexer holds its consumer's lease and applies the stream, 0 while it stands by.", active)
	totals := ix.hostModelTotals()
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
