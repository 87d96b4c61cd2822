package api

import (
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the zones of the tz parameter, where the system has none

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/schema"
)

// The HTTP API of the indexer. Every answer is JSON (errors too:
// {"error": "..."} with the status that fits); GET /api/events is a
// stream of server-sent events for live views; GET /metrics is the
// Prometheus text format; GET / is the dashboard, one static HTML page
// that reads the others (see dashboard.go), also served at
// /sessions/{id} (a session's own address); /assets/ serves the page's
// vendored chart library. With a token, every request but /healthz, the
// dashboard page and its assets (GET or HEAD of /, /index.html,
// /sessions/{id}, /assets/...) must carry "Authorization: Bearer <token>" (the scheme in
// any case). Without one, only requests whose Host names a loopback
// address (localhost, 127.0.0.0/8, [::1], with or without a port) or the
// listen address's own host are served, others get 421: a web page
// cannot reach the API by pointing a name of its own at 127.0.0.1 (DNS
// rebinding).
//
//	GET /  (also /index.html, /sessions/{id}, /assets/...)
//	GET /api/sessions?q=&host=&format=&model=&project=&label=&parent=&since=&until=&tz=&sort=&limit=&cursor=
//	GET /api/sessions/{id}?format=&host=
//	GET /api/usage?group_by=host|format|model|project|day|hour|label:<name>&bucket=day|hour&tz=&since=&until=&host=&format=&model=&project=&label=
//	GET /api/alerts?limit=
//	GET /api/events
//	GET /healthz
//	GET /metrics
//
// A session is identified by its format, host and id (ids are unique only
// within an agent, and within a host for some): GET /api/sessions/{id}
// with format and host names one session; a bare id (or an id with only
// one of them) names the session if it is the only one matching, and is
// answered 409 Conflict otherwise, with the candidates listed:
// {"error": "...", "candidates": [{"format", "host", "session_id"}]}. The
// id is one path segment: escape a '/' in it as %2F (Fluux ids hold one).
// Every session row carries its format and host; alerts name a session
// by all three.
//
// Times (since, until) are RFC 3339 timestamps or YYYY-MM-DD dates (days
// of tz, an IANA zone name, UTC without; an until date is inclusive).
// /api/sessions pages by cursor: next_cursor continues; the first page
// (no cursor) carries total, the number of sessions the filters select;
// q searches ids, working directories, titles, slugs and models
// (substring, any case); parent selects the sessions continuing one (a
// subagent's, a resumed or forked copy's parent id). /api/usage groups
// by one dimension and, with bucket, by day or hour of tz too (a chart's
// series: rows {bucket, key, ...}); its days and hours are those of tz
// (keys 2006-01-02, and 2006-01-02T15Z in UTC or 2006-01-02T15:04+01:00
// elsewhere); total sums the rows selected. A label filter is name:value, e.g.
// label=team:infra, and may be repeated: all must hold. It selects the
// sessions whose labels (Session.Labels) have them, and the calls whose
// entry's labels have them; group_by=label:team groups calls by the value
// of their entry's label team ("" for calls without it). A parameter that
// cannot be read is a 400 naming it: a cursor this server did not return,
// an invalid label filter, a query holding a raw ';' (escape it as %3B).
//
// Limits: at most [DefaultMaxStreams] event streams at once,
// [DefaultMaxStreamsPerClient] from one client address (more get 429); an
// event stream is closed when its client takes no event for
// [EventWriteTimeout]. /healthz answers 503, saying why, while the state
// is not open, NATS is disconnected, the indexer stopped, or its commits
// fail. The series of /metrics by host and model are bounded by
// [DefaultMetricSeries] (see [Config.MetricSeries]).

// Defaults of [Config].
const (
	// DefaultMaxStreams bounds the event streams (GET /api/events) open
	// at once: each holds a connection and a goroutine.
	DefaultMaxStreams = 256
	// DefaultMaxStreamsPerClient bounds those of one client address: a
	// browser has a few tabs of the dashboard open, each one stream.
	DefaultMaxStreamsPerClient = 16
)

// EventWriteTimeout is how long an event stream waits for its client to
// take an event (the socket's buffers full) before it closes the stream.
// The server's write timeout does not apply to event streams, which stay
// open.
const EventWriteTimeout = 30 * time.Second

// Config configures [Handler].
type Config struct {
	// Token, when set, is required as a bearer token on every request
	// but /healthz and the dashboard page (which holds no data: its
	// script asks the user for the token and sends it). The daemon
	// requires one when it listens on anything but a loopback address.
	Token string

	// Addr is the address the API listens on (host:port). Without a
	// Token, a request is served only when its Host is a loopback name
	// or address, or Addr's host; others get 421 Misdirected Request.
	Addr string

	// MaxStreams and MaxStreamsPerClient bound the event streams open at
	// once, in all and from one client address; a request past either
	// gets 429. Zero means DefaultMaxStreams, DefaultMaxStreamsPerClient.
	MaxStreams, MaxStreamsPerClient int

	// MetricSeries bounds the (host, model) pairs of the tokens, cost
	// and calls metrics of /metrics: the first MetricSeries-1 to appear
	// (the largest by tokens when several appear at once) keep series of
	// their own for the life of the handler, the others are summed under
	// host="other", model="other", and the gauge
	// sessionpipe_index_metric_pairs_folded says how many. Zero means
	// DefaultMetricSeries.
	MetricSeries int

	// Metrics, when set, is served on /metrics after the indexer's
	// registry ([index.IndexerConfig.Registry]) and the API's own metrics: the
	// process's other metrics (Go runtime, its HTTP server, other stages).
	// Its families must not repeat the indexer's or the API's.
	Metrics prometheus.Gatherer

	// Logger receives request failures at Debug; nil discards.
	Logger *slog.Logger
}

// Handler returns the HTTP API over the indexer's state, and the
// dashboard at /.
func Handler(ix *index.Indexer, cfg Config) http.Handler {
	a := &api{ix: ix, cfg: cfg, log: discard(cfg.Logger).With(KeyComponent, "index.api"),
		streams: newStreamLimit(cmp.Or(cfg.MaxStreams, DefaultMaxStreams), cmp.Or(cfg.MaxStreamsPerClient, DefaultMaxStreamsPerClient)),
		series:  newSeriesLimit(cmp.Or(cfg.MetricSeries, DefaultMetricSeries)),
	}
	mux := http.NewServeMux()
	html := versionAssets(dashboardPage)
	page := newDashboard(html)
	mux.Handle("GET /{$}", page)
	mux.Handle("GET /index.html", page)
	mux.Handle("GET /sessions/{id}", newDashboard(sessionPage(html)))
	mux.Handle("GET /assets/", dashboardAssets())
	mux.HandleFunc("GET /api/sessions", a.sessions)
	mux.HandleFunc("GET /api/sessions/{id}", a.session)
	mux.HandleFunc("GET /api/usage", a.usage)
	mux.HandleFunc("GET /api/alerts", a.alerts)
	mux.HandleFunc("GET /api/events", a.events)
	mux.HandleFunc("GET /healthz", a.health)
	mux.Handle("GET /metrics", a.metricsHandler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		a.fail(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	return a.auth(mux)
}

type api struct {
	ix      *index.Indexer
	cfg     Config
	log     *slog.Logger
	streams *streamLimit
	series  *seriesLimit
}

// auth checks the bearer token, or without one the Host (see
// [Config.Addr]).
func (a *api) auth(next http.Handler) http.Handler {
	if a.cfg.Token == "" {
		listen, _, _ := net.SplitHostPort(a.cfg.Addr)
		if ip, err := netip.ParseAddr(listen); err == nil && ip.IsUnspecified() {
			listen = "" // 0.0.0.0 is every address, not a name to serve
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if host := hostOnly(r.Host); !servedHost(host, listen) {
				a.fail(w, http.StatusMisdirectedRequest, fmt.Errorf(
					"host %q is not served: without a token the API answers only requests for localhost, 127.0.0.1 or [::1] (against DNS rebinding); set a token to serve other names", host))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	want := []byte(a.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isPublic(r) && subtle.ConstantTimeCompare(bearer(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sessionpipe"`)
			a.fail(w, http.StatusUnauthorized, errors.New("a bearer token is required"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearer returns the token of an Authorization header of the Bearer
// scheme, whose name is case-insensitive (RFC 7235), nil for another.
func bearer(h string) []byte {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	return []byte(strings.TrimLeft(token, " "))
}

// hostOnly returns the host of a Host header, without its port and the
// brackets of an IPv6 address.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// servedHost reports whether a request for host may be served without a
// token: a loopback name or address, or the listen address's host. An
// empty Host (HTTP/1.0) is served: no browser sends one.
func servedHost(host, listen string) bool {
	switch h := strings.TrimSuffix(strings.ToLower(host), "."); {
	case h == "", h == "localhost":
		return true
	case listen != "" && strings.EqualFold(host, listen):
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
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
	if strings.HasPrefix(r.URL.Path, "/sessions/") || strings.HasPrefix(r.URL.Path, "/assets/") {
		// The page at a session's address (the data comes from the API)
		// and the vendored chart library.
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

// fail writes an error as JSON; index.ErrNotReady is a 503.
func (a *api) fail(w http.ResponseWriter, status int, err error) {
	if errors.Is(err, index.ErrNotReady) {
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
	page, next, err := a.ix.Query(q) // its parameters were checked: an error is the state's
	var total *int
	if err == nil && q.Cursor == "" {
		// The first page says how many there are; the next pages, asked
		// by cursor, do not count them again.
		var n int
		n, err = a.ix.Count(q)
		total = &n
	}
	if errors.Is(err, index.ErrNotReady) {
		a.fail(w, 0, err)
		return
	}
	if page == nil {
		page = []index.Session{}
	}
	a.answer(w, SessionsPage{page, next, total}, err)
}

func sessionQuery(r *http.Request) (index.SessionQuery, error) {
	v, err := queryValues(r)
	if err != nil {
		return index.SessionQuery{}, err
	}
	q := index.SessionQuery{Host: v.Get("host"), Format: v.Get("format"), Model: v.Get("model"), Project: v.Get("project"),
		Search: v.Get("q"), Parent: v.Get("parent"), Sort: index.SessionSort(v.Get("sort")), Cursor: v.Get("cursor")}
	loc, err := parseTZ(v.Get("tz"))
	if err != nil {
		return q, err
	}
	if _, err := index.ParseSessionSort(string(q.Sort)); err != nil {
		return q, badRequest{err}
	}
	if err := index.CheckCursor(q.Cursor); err != nil {
		return q, badRequest{err}
	}
	if q.Labels, err = labelFilters(v["label"]); err != nil {
		return q, err
	}
	if q.Since, err = parseTime("since", v.Get("since"), false, loc); err != nil {
		return q, err
	}
	if q.Until, err = parseTime("until", v.Get("until"), true, loc); err != nil {
		return q, err
	}
	if s := v.Get("limit"); s != "" {
		if q.Limit, err = strconv.Atoi(s); err != nil || q.Limit < 1 {
			return q, badRequest{fmt.Errorf("limit %q: want a positive number (at most %d)", s, index.MaxLimit)}
		}
	}
	return q, nil
}

// queryValues reads the query of r as url.ParseQuery does, but where
// that drops a pair it cannot read (a raw ';', a bad %-escape) and so
// would widen the answer by a filter silently ignored, it fails naming
// the parameter.
func queryValues(r *http.Request) (url.Values, error) {
	v := make(url.Values)
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, kerr := url.QueryUnescape(rawKey)
		value, verr := url.QueryUnescape(rawValue)
		switch {
		case kerr != nil:
			return nil, badRequest{fmt.Errorf("query parameter %q: %w", rawKey, kerr)}
		case verr != nil:
			return nil, badRequest{fmt.Errorf("%s %q: %w", key, rawValue, verr)}
		case strings.Contains(pair, ";"):
			return nil, badRequest{fmt.Errorf("%s %q: a ';' in a query must be escaped as %%3B", key, value)}
		}
		v[key] = append(v[key], value)
	}
	return v, nil
}

// labelFilters reads the label filters of a request, nil when none.
func labelFilters(vs []string) (map[string]string, error) {
	if len(vs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(vs))
	for _, v := range vs {
		if err := index.ParseLabelFilter(m, v); err != nil {
			return nil, badRequest{err}
		}
	}
	return m, nil
}

// parseTZ reads the tz parameter: an IANA zone name (the Go binary
// carries the zone database, time/tzdata); "" is UTC.
func parseTZ(s string) (*time.Location, error) {
	if s == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(s)
	if err != nil || strings.EqualFold(s, "local") {
		return nil, badRequest{fmt.Errorf("tz %q: want an IANA time zone name such as Europe/Berlin or UTC", s)}
	}
	return loc, nil
}

// parseTime reads an RFC 3339 time or a YYYY-MM-DD date, a day of loc;
// an end date means the end of that day (the start of the next one, in
// a day of 23 or 25 hours too).
func parseTime(name, s string, end bool, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
		if end {
			return d.AddDate(0, 0, 1).Add(-time.Nanosecond), nil
		}
		return d, nil
	}
	return time.Time{}, badRequest{fmt.Errorf("%s %q: want an RFC 3339 time or a YYYY-MM-DD date", name, s)}
}

// session answers GET /api/sessions/{id}?format=&host=: the session of
// id, format and host. A bare id (or one with only the format) names the
// session if it is the only one matching; several match: 409 with the
// candidates (format, host) listed, so that the client asks again with
// both.
func (a *api) session(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	v, err := queryValues(r)
	if err != nil {
		a.answer(w, nil, err)
		return
	}
	format := schema.Format(v.Get("format"))
	if format != "" && !format.Valid() {
		a.answer(w, nil, badRequest{fmt.Errorf("format %q: want one of %s", format, formatNames())})
		return
	}
	var host *string
	if v.Has("host") {
		h := v.Get("host")
		host = &h
	}
	s, turns, err := a.ix.Session(id, format, host)
	var amb *index.AmbiguousError
	switch {
	case errors.As(err, &amb):
		a.reply(w, http.StatusConflict, struct {
			Error      string             `json:"error"`
			Candidates []index.SessionRef `json:"candidates"`
		}{amb.Error(), amb.Candidates})
	case errors.Is(err, index.ErrSessionNotFound):
		a.fail(w, http.StatusNotFound, fmt.Errorf("session %q not found", id))
	case err != nil:
		a.fail(w, http.StatusInternalServerError, err)
	default:
		if turns == nil {
			turns = []index.Turn{}
		}
		a.reply(w, http.StatusOK, SessionDetail{s, turns})
	}
}

// formatNames lists the formats, for error messages.
func formatNames() string {
	var names []string
	for _, f := range schema.Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

func (a *api) usage(w http.ResponseWriter, r *http.Request) {
	v, err := queryValues(r)
	if err != nil {
		a.answer(w, nil, err)
		return
	}
	by := v.Get("group_by")
	if by == "" {
		by = string(index.ByDay)
	}
	g, err := index.ParseGroupBy(by)
	if err != nil {
		a.answer(w, nil, badRequest{err})
		return
	}
	q := index.UsageQuery{GroupBy: g, Host: v.Get("host"), Format: v.Get("format"), Model: v.Get("model"), Project: v.Get("project"),
		Bucket: index.GroupBy(v.Get("bucket"))}
	if q.Bucket != "" && q.Bucket != index.ByDay && q.Bucket != index.ByHour {
		a.answer(w, nil, badRequest{fmt.Errorf("bucket %q: want day or hour", q.Bucket)})
		return
	}
	q.Location, err = parseTZ(v.Get("tz"))
	if err == nil {
		q.Labels, err = labelFilters(v["label"])
	}
	if err == nil {
		q.Since, err = parseTime("since", v.Get("since"), false, q.Location)
	}
	if err == nil {
		q.Until, err = parseTime("until", v.Get("until"), true, q.Location)
	}
	if err != nil {
		a.answer(w, nil, err)
		return
	}
	rows, total, err := a.ix.UsageWithTotal(q)
	if errors.Is(err, index.ErrNotReady) {
		a.fail(w, 0, err)
		return
	}
	if rows == nil {
		rows = []index.UsageRow{}
	}
	total.Key = "total"
	a.answer(w, UsagePage{g, q.Bucket, q.Location.String(), rows, total}, err)
}

func (a *api) alerts(w http.ResponseWriter, r *http.Request) {
	v, err := queryValues(r)
	if err != nil {
		a.answer(w, nil, err)
		return
	}
	limit := 0
	if s := v.Get("limit"); s != "" {
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
	supp, total := a.ix.SuppressedAlerts(limit)
	if supp == nil {
		supp = []alert.Event{}
	}
	a.reply(w, http.StatusOK, AlertsPage{list, supp, total})
}

// events streams session updates (after each commit) and alerts as
// server-sent events until the client goes away, takes no event for
// EventWriteTimeout, or the server stops.
func (a *api) events(w http.ResponseWriter, r *http.Request) {
	if _, ok := w.(http.Flusher); !ok {
		a.fail(w, http.StatusInternalServerError, errors.New("streaming unsupported"))
		return
	}
	client := clientOf(r)
	if err := a.streams.acquire(client); err != nil {
		w.Header().Set("Retry-After", "10")
		a.fail(w, http.StatusTooManyRequests, err)
		return
	}
	defer a.streams.release(client)
	events, cancel := a.ix.Subscribe()
	defer cancel()
	// The server's write timeout would cut the stream: each write gets a
	// deadline of its own instead, so that a client that stops reading
	// does not hold its connection for ever.
	rc := http.NewResponseController(w)
	send := func(s string) error {
		if err := rc.SetWriteDeadline(time.Now().Add(EventWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if _, err := io.WriteString(w, s); err != nil {
			return err
		}
		return rc.Flush()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if err := send(": sessionpipe live events\n\n"); err != nil {
		a.log.Debug("event stream closed", KeyError, err)
		return
	}
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		var msg string
		select {
		case <-r.Context().Done():
			return
		case <-a.ix.Stopped():
			return
		case <-keepalive.C:
			msg = ": keepalive\n\n"
		case ev, ok := <-events:
			if !ok {
				_ = send("event: overflow\ndata: {\"error\":\"too slow: events were dropped, reconnect\"}\n\n")
				return
			}
			msg = "event: " + ev.Kind + "\ndata: " + string(ev.Data) + "\n\n"
		}
		if err := send(msg); err != nil {
			a.log.Debug("event stream closed", KeyError, err)
			return
		}
	}
}

// clientOf is the address a request came from, without its port.
func clientOf(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

func (a *api) health(w http.ResponseWriter, _ *http.Request) {
	select {
	case <-a.ix.Ready():
	default:
		a.reply(w, http.StatusServiceUnavailable, map[string]any{"status": "starting", "problems": []string{"the state is not open yet"}})
		return
	}
	s := a.ix.Stats()
	problems := a.ix.HealthProblems(time.Now(), s)
	status, code := "ok", http.StatusOK
	if len(problems) > 0 {
		status, code = "failing: "+strings.Join(problems, "; "), http.StatusServiceUnavailable
	}
	role := "standby"
	if s.Active {
		role = "active"
	}
	body := map[string]any{"status": status, "role": role, "applied_seq": s.Applied, "committed_seq": s.Committed,
		"pending": s.Consumer.Pending}
	if len(problems) > 0 {
		body["problems"] = problems
	}
	a.reply(w, code, body)
}

// metricsHandler serves the indexer's registry, the API's metrics
// (tokens, cost and calls by host and model, bounded by
// cfg.MetricSeries; event streams) and cfg.Metrics. A collector that
// fails is logged and left out; the others are served.
func (a *api) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(hostModelCollector{ix: a.ix, limit: a.series}, streamsCollector{a.streams})
	gs := prometheus.Gatherers{a.ix.Registry(), reg}
	if a.cfg.Metrics != nil {
		gs = append(gs, a.cfg.Metrics)
	}
	return promhttp.HandlerFor(gs, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
}
