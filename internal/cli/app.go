// Package cli wires sessionpipe's packages into the daemons: the flags and
// environment variables they share, the NATS connection (a server URL, or
// an embedded JetStream server for one machine), logging, and the metrics
// endpoint. cmd/tailer and `sessionpipe run` use it; libraries do not.
//
// Every HTTP server of the daemons ([Listen]) bounds what a client can
// hold: a request's header must come within 5 s and the whole request
// within 30 s, a response must be written within 60 s (the indexer's
// event streams set deadlines of their own), an idle keep-alive
// connection is closed after 30 s, and at most 1024 connections are open
// at once, 64 from one client address; past these a new connection is
// closed at once, and counted in sessionpipe_http_connections_refused_total.
// See [ServerConfig].
package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
)

// Env reads an environment variable; commands pass os.Getenv.
type Env func(string) string

// NATS holds the flags that say how to reach JetStream.
type NATS struct {
	URL, Creds, TLSCert, TLSKey, TLSCA string
	InboxPrefix                        string
	// PublishOnly is the tailer's way on a fleet: its identity may publish
	// its host's entries but not create or change the stream, so with a
	// URL it waits for the stream to exist instead of ensuring it (the
	// services do; an embedded server is always set up).
	PublishOnly bool
	DataDir     string // embedded server state, when URL is empty
	Port        int    // embedded server port
	Sync        Sync   // embedded server fsync
	Stream      bus.StreamConfig
}

// Register adds the NATS flags to fs, with defaults from env.
func (n *NATS) Register(fs *flag.FlagSet, env Env) {
	fs.StringVar(&n.URL, "nats", env("NATS_URL"), "NATS server URL(s), comma-separated (env NATS_URL); empty runs an embedded JetStream server")
	fs.StringVar(&n.Creds, "creds", env("NATS_CREDS"), "NATS credentials file (env NATS_CREDS)")
	fs.StringVar(&n.TLSCert, "tls-cert", env("NATS_TLS_CERT"), "client certificate file (env NATS_TLS_CERT)")
	fs.StringVar(&n.TLSKey, "tls-key", env("NATS_TLS_KEY"), "client key file (env NATS_TLS_KEY)")
	fs.StringVar(&n.TLSCA, "tls-ca", env("NATS_TLS_CA"), "CA bundle verifying the server (env NATS_TLS_CA)")
	fs.StringVar(&n.InboxPrefix, "inbox-prefix", env("NATS_INBOX_PREFIX"), "prefix of reply subjects, for an identity that may only subscribe to its own inbox (env NATS_INBOX_PREFIX; default _INBOX)")
	fs.StringVar(&n.DataDir, "data-dir", orDefault(env("SESSIONPIPE_DATA_DIR"), defaultDataDir(env)), "state directory: embedded JetStream store, checkpoints (env SESSIONPIPE_DATA_DIR)")
	fs.IntVar(&n.Port, "nats-port", bus.DefaultEmbeddedPort, "client port of the embedded server (-1: any free port; if the default is taken, any free port)")
	n.Sync = Sync{Interval: bus.DefaultEmbeddedSyncInterval}
	fs.Var(&n.Sync, "sync", "how the embedded server's store reaches the disk: always (every write fsynced before it is acknowledged: a power failure loses nothing acknowledged; about 3.5x the time per 300 KB batch, RELIABILITY.md) or an interval (nats-server's sync_interval: a power failure or an OS crash, not a crash of sessionpipe, can lose what was acknowledged since the last sync); a server given with -nats keeps its own")
	fs.StringVar(&n.Stream.Prefix, "prefix", orDefault(env("SESSIONPIPE_PREFIX"), bus.DefaultPrefix), "subject prefix (env SESSIONPIPE_PREFIX)")
	fs.StringVar(&n.Stream.Name, "stream", orDefault(env("SESSIONPIPE_STREAM"), bus.DefaultStream), "stream name (env SESSIONPIPE_STREAM)")
	fs.IntVar(&n.Stream.Replicas, "replicas", 1, "stream replicas (1 to 5; more than 1 needs a cluster), for a stream this process creates: an existing one keeps its own (sessionpipe stream update)")
	fs.DurationVar(&n.Stream.DuplicateWindow, "dup-window", bus.DefaultDuplicateWindow, "how long the stream drops re-sent entries, for a stream this process creates: an existing one keeps its own (sessionpipe stream update)")
	fs.DurationVar(&n.Stream.MaxAge, "max-age", 0, "how long the stream keeps entries (0: forever), for a stream this process creates: an existing one keeps its own (sessionpipe stream update)")
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// defaultDataDir is $XDG_STATE_HOME/sessionpipe or ~/.local/state/sessionpipe.
func defaultDataDir(env Env) string {
	if d := env("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "sessionpipe")
	}
	if h := env("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "sessionpipe")
	}
	return ".sessionpipe"
}

// Bus is a JetStream connection, with the embedded server behind it when
// there is one.
type Bus struct {
	Conn     *nats.Conn
	JS       jetstream.JetStream
	Embedded *bus.Embedded
}

// Connect connects to the configured URL, or starts the embedded server,
// and makes sure the stream exists.
func (n *NATS) Connect(ctx context.Context, name string, log *slog.Logger) (*Bus, error) {
	b := &Bus{}
	if n.URL == "" {
		cfg := bus.EmbeddedConfig{StoreDir: filepath.Join(n.DataDir, "jetstream"), Port: n.Port, Logger: log,
			SyncInterval: n.Sync.Interval, SyncAlways: n.Sync.Always}
		e, err := bus.StartEmbedded(ctx, cfg)
		if err != nil && n.Port == bus.DefaultEmbeddedPort && !errors.Is(err, dirlock.ErrHeld) {
			// The usual port is taken (another server): any free one will
			// do for the processes of this command.
			log.Info("port taken, using any free port", "port", n.Port)
			cfg.Port = -1
			e, err = bus.StartEmbedded(ctx, cfg)
		}
		if err != nil {
			return nil, fmt.Errorf("start embedded JetStream: %w", err)
		}
		interval, always := e.Sync()
		log.Info("embedded JetStream server started", "url", e.ClientURL(), "store", filepath.Join(n.DataDir, "jetstream"),
			"sync", (&Sync{Interval: interval, Always: always}).String())
		b.Embedded, b.Conn = e, e.Conn()
	} else {
		nc, err := bus.Connect(ctx, bus.ConnConfig{URL: n.URL, CredsFile: n.Creds, TLSCert: n.TLSCert, TLSKey: n.TLSKey, TLSCA: n.TLSCA,
			InboxPrefix: n.InboxPrefix, Name: name, Logger: log})
		if err != nil {
			return nil, err
		}
		b.Conn = nc
	}
	js, err := jetstream.New(b.Conn)
	if err != nil {
		b.Close(ctx)
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	b.JS = js
	if n.URL != "" && n.PublishOnly {
		err = waitStream(ctx, js, n.Stream.WithDefaults().Name, log)
	} else {
		sc := n.Stream
		sc.Logger = log // settings of an existing stream that differ from the flags are kept, and logged
		_, err = bus.EnsureStream(ctx, js, sc)
	}
	if err != nil {
		b.Close(ctx)
		return nil, err
	}
	return b, nil
}

// waitStream waits until the stream exists: on a fleet the services make
// it, and a tailer may start first.
func waitStream(ctx context.Context, js jetstream.JetStream, name string, log *slog.Logger) error {
	_, err := bus.WaitStream(ctx, js, name, bus.StreamWait{Poll: 2 * time.Second, Logger: log,
		Message: "waiting for the stream: the indexer or exporter creates it"})
	return err
}

// Close closes the connection and stops the embedded server.
func (b *Bus) Close(ctx context.Context) error {
	if b.Embedded != nil {
		return b.Embedded.Shutdown(ctx)
	}
	if b.Conn != nil {
		return b.Conn.Drain()
	}
	return nil
}

// Logging holds the log flags.
type Logging struct {
	Level  string
	Format string
}

// Register adds the log flags to fs.
func (l *Logging) Register(fs *flag.FlagSet, env Env) {
	fs.StringVar(&l.Level, "log-level", orDefault(env("SESSIONPIPE_LOG_LEVEL"), "info"), "debug, info, warn or error (env SESSIONPIPE_LOG_LEVEL)")
	fs.StringVar(&l.Format, "log-format", orDefault(env("SESSIONPIPE_LOG_FORMAT"), "text"), "text or json (env SESSIONPIPE_LOG_FORMAT)")
}

// Logger returns the logger the flags ask for, writing to w.
func (l *Logging) Logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.Level)); err != nil {
		return nil, fmt.Errorf("-log-level %q: want debug, info, warn or error", l.Level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(l.Format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("-log-format %q: want text or json", l.Format)
}

// Server is an HTTP server whose listener is opened first, so that its
// address (port 0 picks one) is known and printed before it serves.
type Server struct {
	ln  *limitListener
	srv *http.Server
}

// Defaults of [ServerConfig].
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 30 * time.Second
	DefaultMaxConns          = 1024
	DefaultMaxConnsPerClient = 64
)

// ServerConfig bounds what the clients of a [Server] can hold; zero
// fields take the defaults.
type ServerConfig struct {
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout are
	// those of [http.Server]: the time to read a request's header, the
	// whole request, to write a response (from the end of the header; a
	// handler that streams sets its own deadlines with
	// [http.ResponseController]), and that a keep-alive connection may
	// wait for the next request.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConns bounds the connections open at once, MaxConnsPerClient
	// those from one IP address; a connection past either is closed as
	// soon as it is accepted (and counted in the server's metrics).
	MaxConns, MaxConnsPerClient int
}

func (c ServerConfig) withDefaults() ServerConfig {
	c.ReadHeaderTimeout = cmp.Or(c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	c.ReadTimeout = cmp.Or(c.ReadTimeout, DefaultReadTimeout)
	c.WriteTimeout = cmp.Or(c.WriteTimeout, DefaultWriteTimeout)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, DefaultIdleTimeout)
	c.MaxConns = cmp.Or(c.MaxConns, DefaultMaxConns)
	c.MaxConnsPerClient = cmp.Or(c.MaxConnsPerClient, DefaultMaxConnsPerClient)
	return c
}

// Listen opens addr for handler with the default [ServerConfig]. An
// empty addr means no server: it returns nil, and a nil *Server's Run
// returns at once.
func Listen(addr string, handler http.Handler) (*Server, error) {
	return ListenConfig(addr, handler, ServerConfig{})
}

// ListenConfig is [Listen] with the bounds of cfg.
func ListenConfig(addr string, handler http.Handler, cfg ServerConfig) (*Server, error) {
	if addr == "" {
		return nil, nil
	}
	cfg = cfg.withDefaults()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return &Server{
		ln: newLimitListener(ln, cfg.MaxConns, cfg.MaxConnsPerClient),
		srv: &http.Server{Handler: handler, ReadHeaderTimeout: cfg.ReadHeaderTimeout, ReadTimeout: cfg.ReadTimeout,
			WriteTimeout: cfg.WriteTimeout, IdleTimeout: cfg.IdleTimeout},
	}, nil
}

// Addr returns the address the server listens on, "" for a nil Server.
func (s *Server) Addr() string {
	if s == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Run serves until ctx ends, then shuts down, giving open requests up to
// two seconds (server-sent event streams are closed by their handlers
// watching the request context), and returns once every connection is
// closed. It returns the error that stopped serving, or the shutdown's.
func (s *Server) Run(ctx context.Context) error {
	if s == nil {
		return nil
	}
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server on %s: %w", s.Addr(), err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(shutdown)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close() // stragglers: cut them
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("http server on %s: %w", s.Addr(), err)
	}
	return nil
}

// Hostname is the host name to record, from the flag or the machine.
func Hostname(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// Version returns the module version the binary was built from ("devel"
// when built from a work tree), for file metadata and logs.
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
