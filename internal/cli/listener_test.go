package cli

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
)

// gatherText renders g in the text exposition format.
func gatherText(tb testing.TB, g prometheus.Gatherer) string {
	tb.Helper()
	mfs, err := g.Gather()
	require.NoError(tb, err)
	var b strings.Builder
	for _, mf := range mfs {
		_, err := expfmt.MetricFamilyToText(&b, mf)
		require.NoError(tb, err)
	}
	return b.String()
}

// runServer serves h with cfg on a loopback port until the test ends.
func runServer(t *testing.T, h http.Handler, cfg ServerConfig) *Server {
	t.Helper()
	s, err := ListenConfig("127.0.0.1:0", h, cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return s
}

// dialFrom connects to addr from the loopback address from (127.0.0.x),
// and closes the connection when the test ends.
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.DialContext(t.Context(), "tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// get sends one keep-alive request on c and returns the response's
// status, or the error that ended the connection.
func get(c net.Conn, r *bufio.Reader) (int, error) {
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}

// A client cannot hold more connections than its bound, and all clients
// together no more than theirs: past either, a new connection is closed
// at once, and counted. Those open keep being served.
func TestServer_ConnectionLimits(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	s := runServer(t, ok, ServerConfig{MaxConns: 3, MaxConnsPerClient: 2})
	open := func(from string) (net.Conn, *bufio.Reader) {
		c := dialFrom(t, from, s.Addr())
		r := bufio.NewReader(c)
		code, err := get(c, r)
		require.NoError(t, err, "a connection within the bounds is served")
		require.Equal(t, http.StatusOK, code)
		return c, r
	}
	refused := func(from string) {
		c := dialFrom(t, from, s.Addr())
		_, err := get(c, bufio.NewReader(c))
		require.Error(t, err, "a connection past the bounds is closed")
	}
	a1, r1 := open("127.0.0.1")
	open("127.0.0.1")
	refused("127.0.0.1")
	open("127.0.0.2")
	refused("127.0.0.3")
	code, err := get(a1, r1)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, "the connections held are still served")

	reg := prometheus.NewRegistry()
	require.NoError(t, s.Register(reg))
	m := gatherText(t, reg)
	require.Contains(t, m, "\nsessionpipe_http_connections 3\n")
	require.Contains(t, m, `sessionpipe_http_connections_refused_total{limit="per_client"} 1`)
	require.Contains(t, m, `sessionpipe_http_connections_refused_total{limit="total"} 1`)

	// A connection closed gives its place back.
	a1.Close()
	natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		c := dialFrom(t, "127.0.0.1", s.Addr())
		_, err := get(c, bufio.NewReader(c))
		return err
	})
}

// An idle keep-alive connection is closed by the server after
// IdleTimeout (it had none, and 1,000 idle connections stayed open), and
// Listen sets every bound.
func TestServer_ClosesIdleConnections(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	s := runServer(t, ok, ServerConfig{IdleTimeout: 20 * time.Millisecond})
	c := dialFrom(t, "127.0.0.1", s.Addr())
	r := bufio.NewReader(c)
	code, err := get(c, r)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	// A generous bound, only so that a server that never closes fails
	// the test rather than hanging it.
	require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute)))
	_, err = r.ReadByte()
	require.ErrorIs(t, err, io.EOF, "the server closed the idle connection")

	d, err := Listen("127.0.0.1:0", ok)
	require.NoError(t, err)
	defer d.ln.Close()
	require.Equal(t, ServerConfig{}.withDefaults(), ServerConfig{
		ReadHeaderTimeout: d.srv.ReadHeaderTimeout, ReadTimeout: d.srv.ReadTimeout, WriteTimeout: d.srv.WriteTimeout,
		IdleTimeout: d.srv.IdleTimeout, MaxConns: d.ln.max, MaxConnsPerClient: d.ln.perClient,
	}, "Listen bounds every server")
}
