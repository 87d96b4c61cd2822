package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/schema"
)

// readyIndexer runs an indexer over the given entries until it applied
// them.
func readyIndexer(t *testing.T, entries []*schema.Entry) *index.Indexer {
	t.Helper()
	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, entries)
	ix, _ := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), CommitInterval: 10 * time.Millisecond})
	indextest.WaitApplied(t, ix, last)
	return ix
}

// Without a token the API answers only requests for loopback names, so
// that a web page whose name was pointed at 127.0.0.1 (DNS rebinding)
// cannot read it; with a token, the token is the check.
func TestIndexer_APIHostCheck(t *testing.T) {
	t.Parallel()
	ix := readyIndexer(t, indextest.CallsOfModels(3))
	open := api.Handler(ix, api.Config{Addr: "127.0.0.1:7474"})
	for _, host := range []string{"localhost", "localhost:7474", "LocalHost.:7474", "127.0.0.1:7474", "127.0.0.9", "[::1]:7474", "[::1]", ""} {
		code, body := indextest.Do(t, open, host, "/api/sessions", "")
		require.Equal(t, http.StatusOK, code, "Host %q: %s", host, body)
	}
	for host, name := range map[string]string{
		"attacker.example": "attacker.example", "attacker.example:7474": "attacker.example",
		"127.0.0.1.attacker.example": "127.0.0.1.attacker.example", "10.0.0.1:7474": "10.0.0.1", "[::2]:7474": "::2",
		"0.0.0.0:7474": "0.0.0.0",
	} {
		for _, path := range []string{"/api/sessions", "/healthz", "/"} {
			code, body := indextest.Do(t, open, host, path, "")
			require.Equal(t, http.StatusMisdirectedRequest, code, "Host %q %s: %s", host, path, body)
			var e map[string]string
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			require.Contains(t, e["error"], "DNS rebinding", "the error says why")
			require.Contains(t, e["error"], strconv.Quote(name))
		}
	}
	// The listen address's own host, were it a name.
	named := api.Handler(ix, api.Config{Addr: "dev-box.internal:7474"})
	code, body := indextest.Do(t, named, "dev-box.internal:7474", "/api/sessions", "")
	require.Equal(t, http.StatusOK, code, body)

	withToken := api.Handler(ix, api.Config{Token: "s3cret", Addr: "0.0.0.0:7474"})
	code, body = indextest.Do(t, withToken, "indexer.example:7474", "/api/sessions", "Bearer s3cret")
	require.Equal(t, http.StatusOK, code, body)
	code, _ = indextest.Do(t, withToken, "indexer.example:7474", "/api/sessions", "")
	require.Equal(t, http.StatusUnauthorized, code)
}

// The scheme of an Authorization header is case-insensitive (RFC 7235);
// the token is not.
func TestIndexer_APIBearerScheme(t *testing.T) {
	t.Parallel()
	ix := readyIndexer(t, indextest.CallsOfModels(3))
	h := api.Handler(ix, api.Config{Token: "s3cret"})
	for _, tc := range []struct {
		name, authorization string
		want                int
	}{
		{"Canonical", "Bearer s3cret", http.StatusOK},
		{"LowerCase", "bearer s3cret", http.StatusOK},
		{"UpperCase", "BEARER s3cret", http.StatusOK},
		{"TokenCase", "Bearer S3CRET", http.StatusUnauthorized},
		{"OtherScheme", "Basic s3cret", http.StatusUnauthorized},
		{"NoScheme", "s3cret", http.StatusUnauthorized},
		{"Prefix", "Bearer s3cre", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := indextest.Do(t, h, "localhost", "/api/sessions", tc.authorization)
			require.Equal(t, tc.want, code, body)
		})
	}
}

// A parameter the API cannot read is a 400 naming it, never an answer
// as if it had not been given: a cursor this server did not return, a
// label filter with a raw ';' (which Go's query parser drops).
func TestIndexer_APIBadParameters(t *testing.T) {
	t.Parallel()
	entries := indextest.CallsOfModels(5)
	for i, e := range entries {
		e.SessionID = fmt.Sprintf("s%d", i)
		e.Labels = map[string]string{"team": "a;b"}
	}
	ix := readyIndexer(t, entries)
	h := api.Handler(ix, api.Config{})

	var page struct {
		Sessions   []index.Session `json:"sessions"`
		NextCursor string          `json:"next_cursor"`
	}
	code, body := indextest.Do(t, h, "localhost", "/api/sessions?limit=2", "")
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.NotEmpty(t, page.NextCursor)
	code, body = indextest.Do(t, h, "localhost", "/api/sessions?limit=2&cursor="+page.NextCursor, "")
	require.Equal(t, http.StatusOK, code, "a cursor the server returned: %s", body)

	for _, tc := range []struct{ name, query, want string }{
		{"CursorGarbage", "cursor=garbage", `cursor "garbage"`},
		{"CursorShort", "cursor=AA", `cursor "AA"`},
		{"CursorAltered", "cursor=" + alter(page.NextCursor), "cursor"},
		{"CursorPadded", "cursor=" + page.NextCursor + "%3D%3D", "cursor"},
		{"LabelSemicolon", "label=team:a;b", `label "team:a;b"`},
		{"LabelBadEscape", "label=team:%zz", `label "team:%zz"`},
		{"LabelNoValue", "label=team", `label "team"`},
		{"HostSemicolon", "host=h;x", `host "h;x"`},
		{"UsageLabelSemicolon", "label=team:a;b", `label "team:a;b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/api/sessions?" + tc.query
			if strings.HasPrefix(tc.name, "Usage") {
				path = "/api/usage?" + tc.query
			}
			code, body := indextest.Do(t, h, "localhost", path, "")
			require.Equal(t, http.StatusBadRequest, code, "%s: %s", path, body)
			var e map[string]string
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			require.Contains(t, e["error"], tc.want)
		})
	}

	// Escaped, the ';' is part of the value.
	code, body = indextest.Do(t, h, "localhost", "/api/sessions?label="+url.QueryEscape("team:a;b"), "")
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.Len(t, page.Sessions, 5)
	code, body = indextest.Do(t, h, "localhost", "/api/sessions?label="+url.QueryEscape("team:a"), "")
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.Empty(t, page.Sessions)
}

// alter changes one character of a cursor in the middle.
func alter(c string) string {
	b := []byte(c)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// openStream opens GET /api/events on srv and reads its opening comment;
// it returns the status and, on 200, the stream's reader, and closes the
// response when the test ends or close is called.
func openStream(t *testing.T, srv *httptest.Server) (status int, r *bufio.Reader, body string, close func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/events", nil)
	require.NoError(t, err)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	close = func() { cancel(); resp.Body.Close() }
	t.Cleanup(close)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, nil, string(b), close
	}
	r = bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, ":"), line)
	return resp.StatusCode, r, "", close
}

// Event streams are bounded per client and in all: past either bound a
// request gets 429 with a JSON error; a stream closed gives its place
// back.
func TestIndexer_APIEventStreamLimits(t *testing.T) {
	t.Parallel()
	ix := readyIndexer(t, indextest.CallsOfModels(3))

	t.Run("PerClient", func(t *testing.T) {
		srv := httptest.NewServer(api.Handler(ix, api.Config{MaxStreams: 10, MaxStreamsPerClient: 2}))
		t.Cleanup(srv.Close) // after the streams' cleanups: Close waits for them
		_, _, _, closeFirst := openStream(t, srv)
		openStream(t, srv)
		code, _, body, _ := openStream(t, srv)
		require.Equal(t, http.StatusTooManyRequests, code, body)
		var e map[string]string
		require.NoError(t, json.Unmarshal([]byte(body), &e), body)
		require.Contains(t, e["error"], "too many event streams from 127.0.0.1")

		closeFirst()
		natstest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
			code, _, body, closeIt := openStream(t, srv)
			if code != http.StatusOK {
				return fmt.Errorf("%d %s", code, body)
			}
			closeIt()
			return nil
		})
	})

	t.Run("Total", func(t *testing.T) {
		srv := httptest.NewServer(api.Handler(ix, api.Config{MaxStreams: 2, MaxStreamsPerClient: 10}))
		t.Cleanup(srv.Close)
		openStream(t, srv)
		openStream(t, srv)
		code, _, body, _ := openStream(t, srv)
		require.Equal(t, http.StatusTooManyRequests, code, body)
		require.Contains(t, body, "too many event streams: at most 2")
		code, metrics := indextest.Do(t, srv.Config.Handler, "localhost", "/metrics", "")
		require.Equal(t, http.StatusOK, code)
		require.Contains(t, metrics, "\nsessionpipe_index_event_streams 2\n")
		require.Contains(t, metrics, "\nsessionpipe_index_event_streams_refused_total 1\n")
	})
}

// The server's write timeout does not cut an event stream: the stream
// sets a deadline per write. Here the server's is 1ns, past before the
// handler runs.
func TestIndexer_APIEventStreamOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	js := indextest.NewStream(t, bus.StreamConfig{})
	ix, _ := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), CommitInterval: 10 * time.Millisecond})
	srv := httptest.NewUnstartedServer(api.Handler(ix, api.Config{}))
	srv.Config.WriteTimeout = time.Nanosecond
	srv.Start()
	t.Cleanup(srv.Close)
	code, r, body, _ := openStream(t, srv)
	require.Equal(t, http.StatusOK, code, body)
	indextest.Publish(t, js, indextest.CallsOfModels(1))
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if line == "event: session\n" {
			return
		}
	}
}

// /healthz answers 503 saying why while NATS is disconnected, and after
// the indexer stopped; 200 otherwise.
func TestIndexer_HealthFollowsNATS(t *testing.T) {
	t.Parallel()
	ns := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, ns.URL()))
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	ix, stop := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), CommitInterval: 10 * time.Millisecond})
	h := api.Handler(ix, api.Config{})
	health := func() (int, map[string]any) {
		code, body := indextest.Do(t, h, "localhost", "/healthz", "")
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &v), body)
		return code, v
	}
	natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if code, v := health(); code != http.StatusOK {
			return fmt.Errorf("%d %v", code, v)
		}
		return nil
	})

	ns.Stop()
	natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if code, v := health(); code != http.StatusServiceUnavailable {
			return fmt.Errorf("NATS down: %d %v", code, v)
		}
		return nil
	})
	_, v := health()
	require.Contains(t, v["status"], "failing: nats: ")
	problems, _ := v["problems"].([]any)
	require.Len(t, problems, 1)
	require.Contains(t, problems[0], "nats: ", "the problem says which check fails")

	ns.Start(t)
	natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if code, v := health(); code != http.StatusOK {
			return fmt.Errorf("NATS back: %d %v", code, v)
		}
		return nil
	})

	require.NoError(t, stop())
	code, v := health()
	require.Equal(t, http.StatusServiceUnavailable, code, v)
	require.Contains(t, v["problems"], "indexer stopped: no consumer runs")
}

var tokensLine = regexp.MustCompile(`(?m)^sessionpipe_tokens_total\{host="([^"]*)",model="([^"]*)",type="input"\} (\d+)$`)

// One transcript naming 2,000 models makes at most 100 series per
// metric: 99 models of their own, the rest summed under "other", and a
// gauge saying how many were folded. The models chosen keep their series
// from one scrape to the next.
func TestIndexer_MetricsBoundSeries(t *testing.T) {
	t.Parallel()
	const models = 2000
	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, indextest.CallsOfModels(models))
	ix, _ := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), CommitInterval: 10 * time.Millisecond})
	indextest.WaitApplied(t, ix, last)
	h := api.Handler(ix, api.Config{})

	scrape := func() (map[string]int64, string) {
		code, body := indextest.Do(t, h, "localhost", "/metrics", "")
		require.Equal(t, http.StatusOK, code)
		got := make(map[string]int64)
		for _, m := range tokensLine.FindAllStringSubmatch(body, -1) {
			n, err := strconv.ParseInt(m[3], 10, 64)
			require.NoError(t, err)
			got[m[1]+"/"+m[2]] = n
		}
		return got, body
	}
	first, body := scrape()
	require.Len(t, first, api.DefaultMetricSeries)
	require.Equal(t, int64(10*(models-api.DefaultMetricSeries+1)), first["other/other"])
	var sum int64
	for _, n := range first {
		sum += n
	}
	require.Equal(t, int64(10*models), sum, "every token is counted once")
	require.Contains(t, body, fmt.Sprintf("\nsessionpipe_index_metric_pairs_folded %d\n", models-api.DefaultMetricSeries+1))
	for _, name := range []string{"sessionpipe_tokens_total{", "sessionpipe_cost_usd_total{", "sessionpipe_api_calls_total{"} {
		require.LessOrEqual(t, strings.Count(body, "\n"+name), 4*api.DefaultMetricSeries, name)
	}
	require.Less(t, len(body), 100<<10, "the scrape stays small")

	more := indextest.CallsOfModels(models + 50)[models:]
	indextest.WaitApplied(t, ix, indextest.Publish(t, js, more))
	second, _ := scrape()
	require.Len(t, second, api.DefaultMetricSeries)
	for k := range first {
		require.Contains(t, second, k, "a pair keeps its series")
	}
	require.Equal(t, int64(10*(models+50-api.DefaultMetricSeries+1)), second["other/other"])
}
