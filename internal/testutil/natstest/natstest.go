// Package natstest runs real in-process nats-server instances with
// JetStream for tests: one server per test ([RunServer]), with stop,
// start and restart on the same port and store directory for outage
// tests, a 3-node JetStream cluster ([RunCluster]) for leader failover
// tests, and client connections that reconnect fast ([Connect]).
// Everything listens on 127.0.0.1 only. It is test-only: nothing in a
// production package imports it.
package natstest

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// readyTimeout bounds how long a server may take to accept clients. The
// wait returns as soon as it does; the bound is generous because CI runs
// many servers at once on a loaded 2-core machine, where recovering a
// JetStream store has taken more than 10 s (TestLease_Cluster,
// TestHub_Tailer failed so).
const readyTimeout = 2 * time.Minute

// Option changes the server options before the first start, e.g.
// func(o *server.Options) { o.MaxPayload = 1024 }.
type Option func(*server.Options)

// WithServerName sets the server name (JetStream clusters need distinct
// ones).
func WithServerName(name string) Option {
	return func(o *server.Options) { o.ServerName = name }
}

// Server is a restartable in-process nats-server. Its client port and
// store directory stay the same across [Server.Restart], so clients
// reconnect and JetStream data survives. Methods are safe for concurrent
// use.
type Server struct {
	mu   sync.Mutex
	opts *server.Options // template; ports pinned after the first start
	srv  *server.Server  // nil while stopped
}

// RunServer starts a server with JetStream on 127.0.0.1 and a random
// port, its store in tb.TempDir(), no logging and no signal handlers, and
// stops it when the test ends. It fails the test if the server is not
// ready within readyTimeout (2 minutes).
func RunServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	o := &server.Options{
		Host:      "127.0.0.1",
		Port:      -1,
		JetStream: true,
		StoreDir:  tb.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	}
	for _, f := range opts {
		f(o)
	}
	s := &Server{opts: o}
	s.Start(tb)
	tb.Cleanup(s.Stop)
	return s
}

// Start starts the server again after [Server.Stop], on the same port and
// store directory. It fails the test if the server is running or does
// not become ready.
func (s *Server) Start(tb testing.TB) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Nil(tb, s.srv, "natstest: server already running")
	srv, err := server.NewServer(s.opts.Clone())
	require.NoError(tb, err, "natstest: new server")
	srv.Start()
	if !srv.ReadyForConnections(readyTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		require.FailNow(tb, "natstest: server not ready", "within %v", readyTimeout)
	}
	if s.opts.Port <= 0 {
		s.opts.Port = srv.Addr().(*net.TCPAddr).Port
	}
	if s.opts.Cluster.Port < 0 {
		s.opts.Cluster.Port = srv.ClusterAddr().Port
	}
	s.srv = srv
}

// Stop shuts the server down and waits until it has; clients see a
// disconnect and start reconnecting. Stopping a stopped server does
// nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		return
	}
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	s.srv = nil
}

// Restart stops and starts the server on the same port and store.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.Stop()
	s.Start(tb)
}

// Running reports whether the server is started.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv != nil
}

// URL returns the client URL, e.g. nats://127.0.0.1:41523. It stays valid
// across restarts, and while the server is stopped.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("nats://%s:%d", s.opts.Host, s.opts.Port)
}

// Name returns the server name (empty unless set by an option).
func (s *Server) Name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.ServerName
}

// StoreDir returns the JetStream store directory.
func (s *Server) StoreDir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.StoreDir
}

// Server returns the running nats-server, or nil while stopped.
func (s *Server) Server() *server.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv
}

// Connect connects to url (one URL or a comma-separated list) for a test:
// reconnects forever every 20ms, publishes fail at once while
// disconnected (no reconnect buffer, as the bus publisher requires), and
// the connection is closed when the test ends. Extra options are applied
// last.
func Connect(tb testing.TB, url string, opts ...nats.Option) *nats.Conn {
	tb.Helper()
	o := []nats.Option{
		nats.Name("natstest"),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(20 * time.Millisecond),
		nats.ReconnectJitter(0, 0),
		nats.ReconnectBufSize(-1),
		nats.Timeout(2 * time.Second),
	}
	nc, err := nats.Connect(url, append(o, opts...)...)
	require.NoError(tb, err, "natstest: connect to %s", url)
	tb.Cleanup(nc.Close)
	return nc
}

// JetStream returns a JetStream context on nc.
func JetStream(tb testing.TB, nc *nats.Conn) jetstream.JetStream {
	tb.Helper()
	js, err := jetstream.New(nc)
	require.NoError(tb, err, "natstest: jetstream context")
	return js
}

// CheckFor calls f every interval until it returns nil, and fails the
// test with f's last error if that has not happened within timeout.
func CheckFor(tb testing.TB, timeout, interval time.Duration, f func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			require.FailNow(tb, "natstest: condition not met", "after %v: %v", timeout, err)
		}
		time.Sleep(interval)
	}
}
